package e2e_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// startBlocks returns the sh blocks of docs/getting-started.md marked
// "<!-- getting-started: NAME -->", joined per name, and for each name the
// text block that follows its first sh block (the output the page shows).
func startBlocks(t *testing.T) (scripts, shown map[string]string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	scripts, shown = map[string]string{}, map[string]string{}
	re := regexp.MustCompile("(?s)<!-- getting-started: ([a-z]+) -->\\s*```sh\n(.*?)```\n(?:(?:[^`<]|`[^`])*?```text\n(.*?)```)?")
	for _, m := range re.FindAllSubmatch(doc, -1) {
		name := string(m[1])
		if _, ok := scripts[name]; !ok && len(m[3]) > 0 {
			shown[name] = string(m[3])
		}
		scripts[name] += string(m[2])
	}
	return scripts, shown
}

// moduleProxy writes a GOPROXY folder serving this checkout as
// github.com/flakegate/flakegate v0.99.0 (the files git tracks or would
// add, nested modules left out, as a module zip leaves them out).
func moduleProxy(t *testing.T) string {
	t.Helper()
	const mod, version = "github.com/flakegate/flakegate", "v0.99.0"
	out, err := exec.Command("git", "-C", "..", "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSpace(string(out)), "\n")
	var nested []string
	for _, f := range files {
		if strings.HasSuffix(f, "/go.mod") {
			nested = append(nested, strings.TrimSuffix(f, "go.mod"))
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
files:
	for _, f := range files {
		for _, n := range nested {
			if strings.HasPrefix(f, n) {
				continue files
			}
		}
		fi, err := os.Lstat(filepath.Join("..", f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the worktree, or a symlink (no place in a module zip)
		}
		body, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(mod + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "proxy")
	at := filepath.Join(dir, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  goMod,
		version + ".zip":  buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shRun runs script with sh -e in dir and returns its combined output
// and exit code.
func shRun(t *testing.T, dir, script string, env []string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestDocsGettingStarted runs every sh block of docs/getting-started.md as
// written: the install block (go install ...@latest, served from a module
// proxy made of this checkout, with the host's module cache behind it for
// the dependencies), then each framework's blocks in a repository of that
// framework, on its main branch. Each ends in a check that passes, and
// init prints what the page shows.
func TestDocsGettingStarted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: go install, git, and checks with every framework")
	}
	needBwrap(t)
	scripts, shown := startBlocks(t)
	for _, name := range []string{"install", "go", "pytest", "vitest"} {
		if scripts[name] == "" {
			t.Fatalf("docs/getting-started.md has no %q block", name)
		}
	}
	for _, name := range []string{"go", "pytest", "vitest"} {
		if shown[name] == "" {
			t.Errorf("docs/getting-started.md shows no init output (a text block after the first %q block)", name)
		}
	}
	for name := range scripts {
		switch name {
		case "install", "go", "pytest", "vitest":
		default:
			t.Errorf("a block %q that no test runs", name)
		}
	}
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	}
	installEnv := append(env,
		"GOBIN="+bin,
		"GOPROXY=file://"+moduleProxy(t)+",file://"+filepath.Join(strings.TrimSpace(string(gomodcache)), "cache", "download"),
		"GOSUMDB=off",
		"GOMODCACHE="+filepath.Join(t.TempDir(), "modcache"),
		"GOFLAGS=-modcacherw", // a module cache t.TempDir can remove
	)
	out, code := shRun(t, t.TempDir(), scripts["install"], installEnv)
	if code != 0 || !strings.Contains(out, "flakegate ") {
		t.Fatalf("the install block: exit %d\n%s", code, out)
	}

	vitest := initVitestProject()
	delete(vitest, "vitest.setup.js") // the page writes it
	for _, tc := range []struct {
		name  string
		need  string
		files func() map[string]string
	}{
		{"go", "go", func() map[string]string { return initGoModule(t) }},
		{"pytest", "pytest", initPytestProject},
		{"vitest", "node", func() map[string]string { return vitest }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needProgram(t, tc.need)
			r := newRepo(t, tc.files())
			if tc.name == "vitest" {
				if err := os.Chmod(filepath.Join(r.dir, "node_modules", "vitest", "vitest.mjs"), 0o755); err != nil {
					t.Fatal(err)
				}
				r.commit("vitest is executable", map[string]string{})
			}
			out, code := shRun(t, r.dir, scripts[tc.name], env)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			// The properties' ten triples. The suite's tests (go:
			// TestClampEdges; pytest: 2 plain tests; none for vitest) are
			// unaffected by a README line: impact, on by default, runs
			// them no more.
			n := 10
			if !regexp.MustCompile(fmt.Sprintf(`checked %d of %d triples in [0-9hm.]+s: %d PASS`, n, n, n)).MatchString(out) {
				t.Errorf("no passing check of %d triples:\n%s", n, out)
			}
			if tc.name != "vitest" && !strings.Contains(out, "impact: unaffected: ") {
				t.Errorf("the check does not say the suite's tests are unaffected:\n%s", out)
			}
			for _, line := range strings.Split(strings.TrimSpace(shown[tc.name]), "\n") {
				if !strings.Contains(out, line+"\n") {
					t.Errorf("the page shows %q, the run printed\n%s", line, out)
				}
			}
		})
	}
}
