package e2e_test

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The runner's own Go caches (issue 24, item 5). On a shared runner,
// GOCACHE holds other projects' compiled packages and cached `go test`
// output, GOMODCACHE their private modules. A candidate whose test hunts
// for them, walking every cache folder it can name, `go list -export`
// of the private module, and building a test that imports it (its go.sum
// names the module with its true hash, as an attacker who saw the other
// project's go.sum would write it), finds none of them, in every mode.

// runnerGoCaches is a runner's GOCACHE and GOMODCACHE after building
// another project: its compiled constant, its cached test output (a
// database password the test read from its environment) and a private
// module with a token. They sit in a toolchain folder the attempts'
// PATH names (home/bin), so the minimal root shares the folder around
// them.
type runnerGoCaches struct {
	home, cache, mod      string
	constant, pw, token   string
	goSum, privateRequire string
}

func makeRunnerGoCaches(t *testing.T) *runnerGoCaches {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go is not installed")
		}
		t.Skip("go is not installed")
	}
	work := t.TempDir()
	rc := &runnerGoCaches{home: filepath.Join(work, "gohome"), constant: "fgconst" + nonce(t), pw: "fgpassword" + nonce(t), token: "fgtoken" + nonce(t)}
	rc.cache, rc.mod = filepath.Join(rc.home, "cache", "go-build"), filepath.Join(rc.home, "pkg", "mod")
	for _, d := range []string{filepath.Join(rc.home, "bin"), rc.cache, rc.mod} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The private module, served once from a file proxy.
	proxy := filepath.Join(work, "proxy", "private.example", "secret", "@v")
	os.MkdirAll(proxy, 0o755)
	goMod := "module private.example/secret\n\ngo 1.21\n"
	src := "package secret\n\n// Token is the private module's secret.\nconst Token = \"" + rc.token + "\"\n"
	zf, err := os.Create(filepath.Join(proxy, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{"go.mod": goMod, "secret.go": src} {
		w, _ := zw.Create("private.example/secret@v1.0.0/" + name)
		w.Write([]byte(body))
	}
	zw.Close()
	zf.Close()
	os.WriteFile(filepath.Join(proxy, "v1.0.0.mod"), []byte(goMod), 0o644)
	os.WriteFile(filepath.Join(proxy, "v1.0.0.info"), []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(proxy, "list"), []byte("v1.0.0\n"), 0o644)
	// The other project: a compiled constant, a test that logs a password.
	other := filepath.Join(work, "other")
	os.MkdirAll(other, 0o755)
	rc.privateRequire = "require private.example/secret v1.0.0\n"
	files := map[string]string{
		"go.mod":        "module other.example/proj\n\ngo 1.21\n\n" + rc.privateRequire,
		"proj.go":       "package proj\n\nimport \"private.example/secret\"\n\n// Compiled is the other project's constant.\nconst Compiled = \"" + rc.constant + "\"\n\nvar T = secret.Token\n",
		"proj_test.go":  "package proj\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestLogin(t *testing.T) { t.Log(\"db password: \" + os.Getenv(\"DB_PASSWORD\")) }\n",
		"cmd/x/main.go": "package main\n\nimport \"other.example/proj\"\n\nfunc main() { println(proj.Compiled) }\n",
	}
	for name, body := range files {
		p := filepath.Join(other, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	goEnv := append(cleanEnv(), "GOCACHE="+rc.cache, "GOMODCACHE="+rc.mod, "GOPROXY=file://"+filepath.Join(work, "proxy"),
		"GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "DB_PASSWORD="+rc.pw)
	for _, argv := range [][]string{{"mod", "tidy"}, {"test", "-v", "./..."}, {"build", "-o", os.DevNull, "./cmd/x"}} {
		cmd := exec.Command("go", argv...)
		cmd.Dir, cmd.Env = other, goEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the other project (go %s): %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	sum, err := os.ReadFile(filepath.Join(other, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	rc.goSum = string(sum)
	// The runner's caches hold all three: the test tests something.
	for what, s := range map[string]struct{ dir, v string }{"compiled constant": {rc.cache, rc.constant},
		"cached test output": {rc.cache, "db password: " + rc.pw}, "private module": {rc.mod, rc.token}} {
		if out, _ := exec.Command("grep", "-r", "-a", "-l", "-F", s.v, s.dir).Output(); len(out) == 0 {
			t.Fatalf("the runner's cache %s lacks the %s", s.dir, what)
		}
	}
	os.RemoveAll(filepath.Join(work, "proxy"))
	os.RemoveAll(other)
	if os.Geteuid() == 0 {
		// The non-root mode's flakegate runs as nonRootGo's user: its caches.
		chownAll(t, nonRootGo.uid, rc.home)
		reachable(t, rc.home)
	}
	return rc
}

// goHuntLib is the candidate's attack: print every secret of the
// runner's caches it can reach (FOUND lines), by walking the folders, by
// `go list -export` of the private module, and by a test that imports
// it.
func goHuntLib(rc *runnerGoCaches) string {
	return exfil16 + `ok() {
	exfil
	echo "CACHES GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE"
	for d in "$GOCACHE" "$GOMODCACHE" "` + rc.home + `" "` + rc.cache + `" "` + rc.mod + `" /root/go /root/.cache; do
		grep -r -a -o -h -E 'fg(const|password|token)[0-9a-f]+' "$d" 2>/dev/null | sort -u | sed "s|^|FOUND walk $d: |"
	done
	exp=$(go list -export -f '{{.Export}}' private.example/secret 2>&1)
	echo "LIST $exp" | head -3
	[ -f "$exp" ] && grep -a -o -E 'fgtoken[0-9a-f]+' "$exp" | sed 's/^/FOUND export: /'
	go test -count=1 -v -run '^TestLeak$' . 2>&1 | grep -o -E 'fg(const|password|token)[0-9a-f]+' | sed 's/^/FOUND test: /'
	go test -v -run '^TestLeak$' . 2>&1 | tail -3 | sed 's/^/GOTEST /'
	return 0
}
`
}

// TestAttackGoRunnerCaches: the candidate's test finds none of the
// runner's Go cache secrets, as root on overlays, as root on fresh copies
// and without privileges (a user of its own, with the repository's warm
// build cache as root has it); they reach no output, record or report; the
// runner's caches are unchanged; and its attempts build from the
// repository's own caches (GOMODCACHE is the sandbox's).
func TestAttackGoRunnerCaches(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end; builds Go code in every mode")
	}
	rc := makeRunnerGoCaches(t)
	before := readTree(t, rc.home)
	forModes(t, []mode16{rootOverlay, rootReset, nonRootGo}, func(t *testing.T, m mode16) {
		files := baseFiles(libOK)
		files["flakegate.yaml"] = strings.Replace(config16("", ""), "wall_budget: 20s", "wall_budget: 3m", 1)
		files["go.mod"] = "module example.com/victim\n\ngo 1.21\n"
		files["victim_test.go"] = "package victim\n\nimport \"testing\"\n\nfunc TestVictim(t *testing.T) {}\n"
		a := newA16Files(t, m, files)
		a.secrets = []string{rc.constant, rc.pw, rc.token}
		a.candidate("hunt", map[string]string{
			"src/lib.sh":   goHuntLib(rc),
			"go.mod":       files["go.mod"] + "\n" + rc.privateRequire,
			"go.sum":       rc.goSum,
			"leak_test.go": "package victim\n\nimport (\n\t\"testing\"\n\n\t\"private.example/secret\"\n)\n\nfunc TestLeak(t *testing.T) { t.Log(\"token: \" + secret.Token) }\n",
		})
		env := []string{"PATH=" + filepath.Join(rc.home, "bin") + ":" + os.Getenv("PATH"), "GOCACHE=" + rc.cache, "GOMODCACHE=" + rc.mod}
		a.m.env = append(append([]string(nil), m.env...), env...)
		cr := a.run(t, "hunt", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		want := "Go caches: the repository's build cache, built from the base" // without root too: the helper lays it
		if !strings.Contains(cr.stderr, want) || !strings.Contains(cr.stderr, "(never the runner's own)") {
			t.Errorf("[%s] the sandbox line does not name the repository's Go caches:\n%s", m.name, cr.stderr)
		}
		rec := cr.record(t, 0)
		for _, at := range rec.Attempts {
			for _, l := range linesWith(at.OutputTail, "FOUND ") {
				t.Errorf("[%s] GO CACHE LEAK: %s attempt %d found %s", m.name, at.Side, at.Index, l)
			}
		}
		tail := tailOf(t, rec, "candidate", 0)
		if !strings.Contains(tail, "CACHES GOCACHE=/tmp/go-build GOMODCACHE=/sandbox/gomod") {
			t.Errorf("[%s] the attempt's Go caches are not the sandbox's:\n%s", m.name, tail)
		}
		if !strings.Contains(tail, "LIST ") || strings.Contains(tail, "FOUND") {
			t.Errorf("[%s] the attack did not run as written, or found something:\n%s", m.name, tail)
		}
		labelsAre(t, cr, 0, "PASS")
		for p, data := range readTree(t, rc.home) {
			if before[p] != data {
				t.Errorf("[%s] the runner's cache file %s changed", m.name, p)
			}
		}
		if after := readTree(t, rc.home); len(after) != len(before) {
			t.Errorf("[%s] the runner's caches hold %d files, %d before the check", m.name, len(after), len(before))
		}
	})
}
