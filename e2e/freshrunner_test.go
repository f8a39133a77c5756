package e2e_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests start as a new user on a fresh CI runner does: a HOME of
// their own, and a Go module cache, build cache and GOPATH that are
// empty folders (asserted empty at the start, so that no warm cache of
// the machine running the tests can make them pass), with each
// ecosystem's modules or packages coming from its registry.

// freshRunner is a fresh runner's environment for flakegate: its own
// HOME, XDG folders, and empty Go caches and GOPATH.
type freshRunner struct {
	home, modCache, goPath, goCache string
	env                             []string
}

func newFreshRunner(t *testing.T) *freshRunner {
	t.Helper()
	root := t.TempDir()
	f := &freshRunner{home: filepath.Join(root, "home"), modCache: filepath.Join(root, "gomodcache"),
		goPath: filepath.Join(root, "gopath"), goCache: filepath.Join(root, "gocache")}
	for _, d := range []string{f.home, f.modCache, f.goPath, f.goCache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = []string{"HOME=" + f.home, "GOMODCACHE=" + f.modCache, "GOPATH=" + f.goPath, "GOCACHE=" + f.goCache,
		"XDG_CACHE_HOME=" + filepath.Join(f.home, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config"), "GOFLAGS=",
		"npm_config_cache=" + filepath.Join(f.home, ".npm")}
	f.empty(t, "at the start")
	return f
}

// empty fails the test unless the runner's own caches are empty.
func (f *freshRunner) empty(t *testing.T, when string) {
	t.Helper()
	for _, d := range []string{f.home, f.modCache, f.goPath, f.goCache} {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) > 0 {
			t.Fatalf("%s is not empty %s: %v", d, when, ents)
		}
	}
}

// run runs the flakegate binary in r with the runner's environment.
func (f *freshRunner) run(t *testing.T, r *repo, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(flakegateBin, args...)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), f.env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatal(err)
	return 0, ""
}

// fewerSeeds makes the config init wrote run seed 1 alone: each seed
// runs the same way, and one keeps the test cheap.
func fewerSeeds(t *testing.T, r *repo) {
	t.Helper()
	p := filepath.Join(r.dir, "flakegate.yaml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), "seeds: [1, 2, 3]", "seeds: [1]")
	s = strings.ReplaceAll(s, "random_seeds: 2 ", "random_seeds: 0 ")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFreshRunnerGo: a Go module whose go.sum names pgregory.net/rapid,
// on a fresh runner whose module cache is empty. init's trial passes,
// a harmless patch passes and a regression is PROPERTY: the check
// downloads the module the base's go.sum names, in the sandbox, into
// the repository's own module view (the runner's module cache stays
// empty). Before the download step the listing failed, the check exited
// 2 and init's trial said the test never ran.
func TestFreshRunnerGo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: downloads a module from the Go module proxy")
	}
	needProgram(t, "go")
	if os.Geteuid() != 0 {
		t.Skip("the download step needs flakegate as root")
	}
	f := newFreshRunner(t)
	files := initGoModule(t)
	r := newRepo(t, files)
	code, out := f.run(t, r, "init")
	if code != 0 || strings.Contains(out, "never ran") || !strings.Contains(out, "  ok   clamp_test.go::") {
		t.Fatalf("init on a fresh runner: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "Go modules: downloaded the 1 module the base's go.sum names") {
		t.Errorf("init's trial does not say it downloaded the module:\n%s", out)
	}
	fewerSeeds(t, r)
	r.commit("flakegate init", map[string]string{})
	r.git("tag", "-f", "base")

	r.candidate("docs", map[string]string{"README.md": "clamp, documented\n"})
	cr := r.checkEnv(f.env, "--base", "base", "--candidate", "docs")
	wantAll(t, cr, 0, "PASS", 3) // the two properties, and TestClampEdges of the suite
	if strings.Contains(cr.stderr, "telemetry") || strings.Contains(cr.stderr, "read-only file system") {
		t.Errorf("go's sandbox noise reached the check's lines:\n%s", cr.stderr)
	}
	r.candidate("bug", map[string]string{"clamp.go": strings.Replace(files["clamp.go"], "return hi", "return hi + 1", 1)})
	cr = r.checkEnv(f.env, "--base", "base", "--candidate", "bug")
	if cr.code != 1 || !strings.Contains(strings.Join(cr.labels(), ","), "PROPERTY") {
		t.Fatalf("a regression on a fresh runner: want exit 1 and PROPERTY\n%s", cr)
	}
	// The module came into the repository's own view, never into the
	// runner's caches.
	if m, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "gomod", "*", "pgregory.net", "rapid@v1.3.0", "go.mod")); len(m) != 1 {
		t.Errorf("the repository's module view does not hold pgregory.net/rapid@v1.3.0: %v", m)
	}
	for _, d := range []string{f.modCache, f.goPath, f.goCache} {
		if ents, _ := os.ReadDir(d); len(ents) > 0 {
			t.Errorf("the check wrote the runner's own Go cache %s: %v", d, ents)
		}
	}
}
