package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stdCompiledRe reads how many standard packages a fill compiled.
var stdCompiledRe = regexp.MustCompile(`; (-?[0-9]+) standard packages? compiled`)

// filledRe reads the fill's line on stderr: its time and what the
// standard library layer gave it.
var filledRe = regexp.MustCompile(`Go build cache filled from the base \S+ in ([0-9.]+) s(; [^\n(]*)?`)

// TestGoStdLayerShared: the standard library's compiled packages are
// built once for the user (in $XDG_CACHE_HOME/flakegate/gostd) and
// shared by the repositories' caches: the first repository's fill
// compiles them into the layer, a second repository's fill takes them
// from it and compiles none; both check warm. The layer holds nothing of
// either repository (their constants are in no file of it), and no
// attempt reaches it (an attempt that looks for it finds nothing).
func TestGoStdLayerShared(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end; builds Go code")
	}
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go is not installed")
		}
		t.Skip("go is not installed")
	}
	xdg := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + xdg}
	layer := xdg + "/flakegate/gostd"
	repoFiles := func(module, constant string) map[string]string {
		files := goWarmFiles()
		files["go.mod"] = "module " + module + "\n\ngo 1.21\n"
		files["warm.go"] += "\n// Mark is the repository's own constant.\nconst Mark = \"" + constant + "\"\n"
		files["props/gox.sh"] = "ls -R " + layer + " 2>&1 | head -3 | sed 's/^/LAYER /'\n" + files["props/gox.sh"]
		return files
	}
	marks := []string{"fgstdmark" + nonce(t), "fgstdmark" + nonce(t), "fgstdmark" + nonce(t)}
	for i, module := range []string{"example.com/warm", "example.org/second", "example.net/third"} {
		files := repoFiles(module, marks[i])
		if i == 2 {
			// One standard package the layer lacks (container/ring) and
			// not encoding/json's: the fill names how many it compiled
			// (it once printed its count less the layer's, below zero).
			// The layer also holds what other repositories needed,
			// which this one does not.
			builtLists, _ := filepath.Glob(filepath.Join(layer, "*", "built"))
			if len(builtLists) != 1 {
				t.Fatalf("the layer's lists of built packages: %v", builtLists)
			}
			f, err := os.OpenFile(builtLists[0], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("archive/zip\ncompress/gzip\ncrypto/tls\ndatabase/sql\ngo/ast\ngo/parser\nhtml/template\nimage/png\nnet/http\ntext/template\n")
			f.Close()
			files["warm_test.go"] = "package warm\n\nimport (\n\t\"container/ring\"\n\t\"testing\"\n)\n\n" +
				"func TestUp(t *testing.T) {\n\tif ring.New(2).Len() != 2 || Up(\"x\") != \"X\" {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"
		}
		r := newRepo(t, files)
		r.candidate("edit", map[string]string{"warm.go": files["warm.go"] + "\n// A harmless edit.\n"})
		cr := r.checkEnv(env, "--base", "base", "--candidate", "edit")
		if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
			t.Fatalf("repository %d: %s", i, cr)
		}
		m := filledRe.FindStringSubmatch(cr.stderr)
		if m == nil {
			t.Fatalf("repository %d: no fill:\n%s", i, cr.stderr)
		}
		t.Logf("repository %d: fill %s s%s", i, m[1], m[2])
		want := "compiled into the shared standard library layer"
		if i == 1 {
			want = "standard packages from the shared standard library layer"
		}
		if !strings.Contains(m[2], want) {
			t.Errorf("repository %d: the fill did not say %q:\n%s", i, want, cr.stderr)
		}
		if n := stdCompiledRe.FindStringSubmatch(m[2]); n != nil && (n[1] == "0" || strings.HasPrefix(n[1], "-")) {
			t.Errorf("repository %d: the fill compiled %s standard packages, want at least one:\n%s", i, n[1], m[2])
		}
		for j := range cr.summary.Results {
			for _, at := range cr.record(t, j).Attempts {
				if strings.Contains(at.OutputTail, "LAYER "+layer) && !strings.Contains(at.OutputTail, "No such file") {
					t.Errorf("repository %d: an attempt sees the standard library layer:\n%s", i, at.OutputTail)
				}
				for _, l := range strings.Split(at.OutputTail, "\n") {
					if p, ok := strings.CutPrefix(l, "compiled "); ok && (at.Side == "base" || p != module && p != "main") {
						t.Errorf("repository %d: %s attempt %d compiled %s", i, at.Side, at.Index, p)
					}
				}
			}
		}
	}
	for _, mark := range marks {
		if out, _ := exec.Command("grep", "-r", "-a", "-l", "-F", mark, layer).Output(); len(out) > 0 {
			t.Errorf("the standard library layer holds a repository's code: %s", out)
		}
	}
	if out, _ := exec.Command("grep", "-r", "-a", "-l", "-F", marks[0], xdg).Output(); len(out) > 0 {
		t.Errorf("the user's cache folder holds a repository's code: %s", out)
	}
}
