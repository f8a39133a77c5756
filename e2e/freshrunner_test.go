package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	return runExit(t, cmd)
}

// fewerSeeds makes the config init wrote run seed 1 alone: each seed
// runs the same way, and one keeps the test cheap.
func fewerSeeds(t *testing.T, r *repo) {
	t.Helper()
	keepSeeds(t, r, 0)
}

// keepSeeds makes the config init wrote run seed 1 and draw drawn seeds
// per candidate (init writes seeds [1, 2, 3] and 2 drawn).
func keepSeeds(t *testing.T, r *repo, drawn int) {
	t.Helper()
	p := filepath.Join(r.dir, "flakegate.yaml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), "seeds: [1, 2, 3]", "seeds: [1]")
	// Every test every time: the tests that use this count the config's
	// triples, which impact (on by default) would cut to what a patch
	// reaches.
	s = strings.Replace(s, "\nversion: 1\n", "\nversion: 1\nimpact: false\n", 1)
	s = strings.ReplaceAll(s, "random_seeds: 2 ", "random_seeds: "+strconv.Itoa(drawn)+" ")
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

// freshVitestFiles is a vitest project set up the ordinary way: the
// real vitest pinned by a committed package-lock.json
// (testdata/freshvitest), node_modules ignored by git and absent.
func freshVitestFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{
		".gitignore":  "node_modules/\n",
		"README.md":   "calc\n",
		"src/calc.js": "export const add = (a, b) => a + b;\nexport const neg = (a) => -a;\n",
		"tests/calc.test.js": `import { test, expect } from "vitest";
import { add, neg } from "../src/calc.js";

test("add", () => {
  expect(add(2, 3)).toBe(5);
});

test("neg", () => {
  expect(neg(2)).toBe(-2);
});
`,
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "freshvitest", f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	return files
}

// needNPMPrepare runs t in parallel when it can install the real vitest
// with npm ci in a prepare: not under -short, with node and npm, as root.
func needNPMPrepare(t *testing.T) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: npm ci of the real vitest from the npm registry")
	}
	needProgram(t, "node")
	needProgram(t, "npm")
	if os.Geteuid() != 0 {
		t.Skip("a prepare needs flakegate as root")
	}
}

// TestFreshRunnerVitest: a vitest project with node_modules ignored and
// a committed package-lock.json, on a fresh runner. init writes the
// prepare that installs node_modules from the lock file (npm ci, with
// the network, to the registry alone) and the suite, whose listing it
// tried over that prepare; a harmless patch passes and a regression is
// PROPERTY, the listing and every attempt running over the prepared
// layer. Before, init said the suite "is not written" (no node_modules
// in the tree) and exited 2: "no property test found".
func TestFreshRunnerVitest(t *testing.T) {
	needNPMPrepare(t)
	f := newFreshRunner(t)
	r := newRepo(t, freshVitestFiles(t))
	if _, err := os.Stat(filepath.Join(r.dir, "node_modules")); !os.IsNotExist(err) {
		t.Fatalf("node_modules is there at the start (%v)", err)
	}
	code, out := f.run(t, r, "init")
	if code != 0 || !strings.Contains(out, "the vitest suite . lists 2 tests in the sandbox: written") || !strings.Contains(out, "prepare base: ") {
		t.Fatalf("init: want exit 0 and the suite written, tried over the prepare\nexit %d\n%s", code, out)
	}
	cfg := readConfig(t, r)
	if cfg.Prepare == nil || strings.Join(cfg.Prepare.Run, " ") != "npm ci --ignore-scripts --no-audit --no-fund" || !cfg.Prepare.Network ||
		strings.Join(cfg.Prepare.Allow, " ") != "registry.npmjs.org:443" || len(cfg.Suites) != 1 || cfg.Suites[0].Framework != "vitest" {
		t.Fatalf("prepare %+v, suites %+v", cfg.Prepare, cfg.Suites)
	}
	fewerSeeds(t, r)
	r.commit("flakegate init", map[string]string{})
	r.git("tag", "-f", "base")
	// doctor runs the prepare on the base (the check reuses its layer)
	// and lists the suite over it.
	code, out = f.run(t, r, "doctor")
	if code != 0 || !strings.Contains(out, "ok   prepare: prepare ran on the base") || !strings.Contains(out, "suites[0] (vitest .): the base lists 2 tests") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}

	r.candidate("docs", map[string]string{"README.md": "calc, documented\n"})
	cr := r.checkEnv(f.env, "--base", "base", "--candidate", "docs")
	wantAll(t, cr, 0, "PASS", 2)
	r.candidate("bug", map[string]string{"src/calc.js": "export const add = (a, b) => a + b;\nexport const neg = (a) => a;\n"})
	cr = r.checkEnv(f.env, "--base", "base", "--candidate", "bug")
	if got := notPass(cr); cr.code != 1 || len(got) != 1 || !strings.HasPrefix(got[0], "neg ") || !strings.HasSuffix(got[0], " PROPERTY") {
		t.Fatalf("a regression of neg: want exit 1 and neg PROPERTY, got %v\n%s", got, cr)
	}
	// The reproduce line lists the suite on the base over the base's
	// prepared layer, as the check did, and replays the batch over the
	// candidate's.
	for _, res := range cr.summary.Results {
		if res.Label != "PROPERTY" {
			continue
		}
		code, out := runReproduceEnv(t, res.Reproduce, f.env)
		if code != 1 || !strings.Contains(out, "replay: fail: tests/calc.test.js::neg failed in the batch of 2 tests") {
			t.Errorf("the reproduce line %s: exit %d, want 1 and the batch's failure\n%s", res.Reproduce, code, out)
		}
		break
	}
	if _, err := os.Stat(filepath.Join(r.dir, "node_modules")); !os.IsNotExist(err) {
		t.Errorf("node_modules landed in the repository's own tree (%v)", err)
	}
}
