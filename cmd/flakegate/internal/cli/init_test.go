package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/golden"
)

func TestInitHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "init", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "init-help.golden", []byte(out))
}

func TestNewCmdInitFlags(t *testing.T) {
	testParse(t, NewCmdInit, []parseCase[InitOptions]{
		{name: "defaults", want: func(t *testing.T, o *InitOptions) {
			same(t, "DryRun", o.DryRun, false)
			same(t, "Force", o.Force, false)
			same(t, "Measure", o.Measure, false)
		}},
		{name: "every flag", args: []string{"--dry-run", "--force", "--measure"}, want: func(t *testing.T, o *InitOptions) {
			same(t, "DryRun", o.DryRun, true)
			same(t, "Force", o.Force, true)
			same(t, "Measure", o.Measure, true)
		}},
		{name: "positional argument", args: []string{"somewhere"}, errText: `unknown command "somewhere"`, errCode: "cobra"},
		{name: "unknown flag", args: []string{"--yes"}, errText: "unknown flag: --yes", errCode: "cobra"},
	})
}

// initRepo makes a git repository holding files.
func initRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for name, body := range files {
		writeFile(t, filepath.Join(dir, name), []byte(body))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", "-b", "trunk", dir) // init names the branch it ran on
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

// runInitIn runs init with args on dir (a subfolder of a repository is
// fine: init finds the root) and returns stdout, stderr and the exit code.
func runInitIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	var runErr error
	cmd := NewCmdInit(io, func(o *InitOptions) error {
		o.Dir = dir
		runErr = runInit(context.Background(), o)
		return nil
	})
	cmd.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	code := exitCode(runErr, &errOut)
	return out.String(), errOut.String(), code
}

var rapidModule = map[string]string{
	"go.mod": "module example.com/sched\n\ngo 1.23\n\nrequire pgregory.net/rapid v1.3.0\n",
	"sched/sched_test.go": `package sched

import (
	"testing"

	"pgregory.net/rapid"
)

func TestOrder(t *testing.T) { rapid.Check(t, func(t *rapid.T) {}) }

// A decoy: rapid.Check(t, ...) in a comment.
func TestPlain(t *testing.T) { _ = "rapid.Check(t, nil)" }
`,
}

// TestInitWrites: init writes a file the loader accepts, from a subfolder
// too; then refuses to overwrite it without --force (exit 2).
func TestInitWrites(t *testing.T) {
	dir := initRepo(t, rapidModule)
	out, errOut, code := runInitIn(t, filepath.Join(dir, "sched"), "--no-try")
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	for _, want := range []string{"go+rapid: 1 property test", "sched/sched_test.go:9 TestOrder (rapid.Check)", "wrote " + filepath.Join(dir, "flakegate.yaml"),
		"1. commit it on the base branch", "2. on a candidate branch: flakegate check --base trunk"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "flakegate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(raw, "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Properties) != 1 || cfg.Properties[0].Name != "TestOrder" || cfg.Properties[0].Path != "sched/sched_test.go" {
		t.Errorf("properties %+v", cfg.Properties)
	}

	// An existing file is refused, and left as it was.
	writeFile(t, filepath.Join(dir, "flakegate.yaml"), []byte("# mine\n"))
	_, errOut, code = runInitIn(t, dir, "--no-try")
	if code != ExitUsage || !strings.Contains(errOut, "flakegate.yaml exists already") || !strings.Contains(errOut, "--force overwrites it") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flakegate.yaml")); string(b) != "# mine\n" {
		t.Errorf("the file was changed: %q", b)
	}
	// --dry-run prints and still writes nothing.
	out, _, code = runInitIn(t, dir, "--dry-run", "--no-try")
	if code != ExitOK || !strings.Contains(out, "name: \"TestOrder\"") {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flakegate.yaml")); string(b) != "# mine\n" {
		t.Errorf("--dry-run changed the file: %q", b)
	}
	// --force overwrites it.
	if _, errOut, code = runInitIn(t, dir, "--force", "--no-try"); code != ExitOK {
		t.Fatalf("--force: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "flakegate.yaml")); !bytes.Equal(b, raw) {
		t.Errorf("--force wrote\n%s\nwant\n%s", b, raw)
	}
}

// TestInitDryRunWritesNothing: with --dry-run stdout is the file and the
// repository is unchanged.
func TestInitDryRunWritesNothing(t *testing.T) {
	dir := initRepo(t, rapidModule)
	out, errOut, code := runInitIn(t, dir, "--dry-run", "--no-try")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}

	if _, err := config.Load([]byte(out), "flakegate.yaml"); err != nil {
		t.Errorf("stdout is not a config: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "flakegate.yaml")); !os.IsNotExist(err) {
		t.Errorf("--dry-run wrote flakegate.yaml: %v", err)
	}
}

func TestInitRefuses(t *testing.T) {
	type testCase struct {
		name   string
		dir    func(t *testing.T) string
		errOut string
	}
	run := func(t *testing.T, tc testCase) {
		_, errOut, code := runInitIn(t, tc.dir(t))
		if code != ExitUsage || !strings.Contains(errOut, tc.errOut) {
			t.Errorf("exit %d, want %d, stderr\n%s\nwant %q", code, ExitUsage, errOut, tc.errOut)
		}
		if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
			t.Errorf("a trace:\n%s", errOut)
		}
	}
	for _, tc := range []testCase{
		{"not a repository", func(t *testing.T) string { return t.TempDir() }, "not inside a git repository"},
		{"no property test", func(t *testing.T) string {
			return initRepo(t, map[string]string{"go.mod": "module x\n", "x.go": "package x\n", "a.py": "# @given(st.integers())\ndef test_a(): pass\n"})
		}, "no property test found"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestInitMeasure: --measure tries every property in the sandbox and
// writes each budget from its attempt, at least the floor; one that
// fails keeps the default, init names it with its fix and exits 1.
func TestInitMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed")
	}
	files := map[string]string{}
	for k, v := range rapidModule {
		files[k] = v
	}
	files["go.sum"] = readGoSum(t)
	files["sched/fail_test.go"] = "package sched\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestBroken(t *testing.T) { rapid.Check(t, func(t *rapid.T) { t.Fatal(\"no\") }) }\n"
	dir := initRepo(t, files)
	commitAll(t, dir)
	out, errOut, code := runInitEnv(t, dir, "--dry-run", "--measure")
	if code != ExitReject {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cfg, err := config.Load([]byte(out), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	budgets := map[string]string{}
	for _, p := range cfg.Properties {
		budgets[p.Name] = p.WallBudget.String()
	}
	if budgets["TestOrder"] != "30s" || budgets["TestBroken"] != "5m0s" {
		t.Errorf("budgets %v\n%s", budgets, out)
	}
	if !strings.Contains(out, "# measured: one sandboxed attempt took") || !strings.Contains(out, "the measured attempt did not pass") {
		t.Errorf("the comments do not say how the budgets were chosen:\n%s", out)
	}
	for _, want := range []string{"  ok   sched/sched_test.go::TestOrder: ", "  fail sched/fail_test.go::TestBroken",
		"problem: sched/fail_test.go::TestBroken: fails with seed 1 at HEAD", "fix: make it pass at HEAD", "suites: suites[0] (go ./...) 1 test, 3 triples", "cost: 13 triples", "estimate: about"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// commitAll commits every file of the repository at dir.
func commitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "project"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// runInitEnv is runInitIn with this process's environment (PATH, HOME):
// the trial runs real commands.
func runInitEnv(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.Getenv, Environ: os.Environ}
	var runErr error
	cmd := NewCmdInit(io, func(o *InitOptions) error {
		o.Dir = dir
		runErr = runInit(context.Background(), o)
		return nil
	})
	cmd.SetArgs(append([]string{}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), exitCode(runErr, &errOut)
}

// readGoSum is rapid's go.sum lines from the go-rapid example.
func readGoSum(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "go-rapid", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noPytestBin is a folder for PATH with git, sh, env and bwrap, and a
// python3 that cannot import pytest or Hypothesis (-S: no site
// packages), as a pyenv interpreter without them.
func noPytestBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, prog := range []string{"git", "sh", "env", "bwrap"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Skip(prog + " is not installed")
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestInitNoPytest: when no interpreter on PATH has pytest, init says so,
// the trial names the missing module with its fix, and it exits 1.
func TestInitNoPytest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox")
	}
	dir := initRepo(t, map[string]string{
		"stack.py":            "def push(xs, x):\n    return xs + [x]\n",
		"tests/test_stack.py": "from hypothesis import given, strategies as st\nfrom stack import push\n\n@given(st.integers())\ndef test_push(x):\n    assert push([], x) == [x]\n",
	})
	commitAll(t, dir)
	t.Setenv("PATH", noPytestBin(t))
	out, errOut, code := runInitEnv(t, dir, "--dry-run")
	if code != ExitReject {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"python: no interpreter the sandbox sees has pytest and Hypothesis (looked at: " + filepath.Join(os.Getenv("PATH"), "python3"),
		"  fail tests/test_stack.py::test_push", "problem: tests/test_stack.py::test_push: the test cannot import pytest", "fix: install it",
		"the config as written would not run here"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, `run: ["python3", "-m", "pytest"`) {
		t.Errorf("stdout:\n%s", out)
	}
}

// TestInitLeavesOutSelfSkippingFiles: a test file that skips itself at
// module level (pytest.importorskip of a module the interpreter lacks)
// never runs here, so a check of its properties would be INCOMPLETE on
// every patch: init leaves them out and says why, tries the next
// property instead, and the config it writes runs (exit 0).
func TestInitLeavesOutSelfSkippingFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	prop := "from hypothesis import given, strategies as st\nfrom stack import push\n\n@given(st.integers())\ndef test_push(x):\n    assert push([], x) == [x]\n"
	dir := initRepo(t, map[string]string{
		"stack.py":            "def push(xs, x):\n    return xs + [x]\n",
		"tests/test_opt.py":   "import pytest\n\npytest.importorskip(\"flakegate_absent_module\")\n\n" + prop,
		"tests/test_stack.py": prop,
	})
	commitAll(t, dir)
	out, errOut, code := runInitEnv(t, dir, "--dry-run")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\n%s", code, errOut)
	}
	for _, want := range []string{"skipped tests/test_opt.py: 1 property left out: the file skips itself here (pytest.importorskip): ",
		" cannot import flakegate_absent_module; install it", "  ok   tests/test_stack.py::test_push: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "problem:") || strings.Contains(out, "test_opt.py") || !strings.Contains(out, `path: "tests/test_stack.py"`) {
		t.Errorf("want test_stack.py gated and test_opt.py left out, no problem:\n%s\n%s", errOut, out)
	}
}

// TestInitSuiteSrcLayout: a src/ layout without property tests gets a
// pytest suite whose pythonpath is src (its tests import the package
// from there); a flat one gets none.
func TestInitSuiteSrcLayout(t *testing.T) {
	dir := initRepo(t, map[string]string{"src/pkg/__init__.py": "def one():\n    return 1\n",
		"tests/test_pkg.py": "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n"})
	out, errOut, code := runInitIn(t, dir, "--dry-run", "--no-try")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cfg, err := config.Load([]byte(out), "flakegate.yaml")
	if err != nil {
		t.Fatalf("not a config: %v\n%s", err, out)
	}
	if len(cfg.Suites) != 1 || cfg.Suites[0].Framework != "pytest" || strings.Join(cfg.Suites[0].PythonPath, ":") != "src" {
		t.Fatalf("want a pytest suite with pythonpath [src]:\n%s\n%s", out, errOut)
	}
	flat := initRepo(t, map[string]string{"pkg.py": "def one():\n    return 1\n", "tests/test_pkg.py": "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n"})
	out, _, _ = runInitIn(t, flat, "--dry-run", "--no-try")
	if strings.Contains(out, "pythonpath") {
		t.Errorf("a flat layout got a pythonpath:\n%s", out)
	}
}

// TestInitWritesSuites: a repository with a Go module's tests and a
// pytest folder, and no property test, gets a suites: entry for each,
// with reject_flaky_new_tests: true, and no properties: key; the file
// loads.
func TestInitWritesSuites(t *testing.T) {
	dir := initRepo(t, map[string]string{"go.mod": "module x\n", "x_test.go": "package x\nimport \"testing\"\nfunc TestX(t *testing.T) {}\n",
		"tests/unit/test_a.py": "def test_a(): pass\n", "tests/test_b.py": "def test_b(): pass\n"})
	out, errOut, code := runInitIn(t, dir, "--dry-run", "--no-try")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cfg, err := config.Load([]byte(out), "flakegate.yaml")
	if err != nil {
		t.Fatalf("not a config: %v\n%s", err, out)
	}
	if len(cfg.Properties) != 0 || len(cfg.Suites) != 2 || !cfg.RejectFlakyNewTests || cfg.NewTestRuns != 5 {
		t.Fatalf("want two suites and reject_flaky_new_tests, got %+v\n%s", cfg, out)
	}
	if g, p := cfg.Suites[0], cfg.Suites[1]; g.Path != "./..." || g.Framework != "go" || p.Path != "tests" || p.Framework != "pytest" || len(p.Seeds) != 3 {
		t.Errorf("suites %+v %+v\n%s", g, p, out)
	}
	// The cost line counts no suite's test (a check lists them on the
	// base): it says so, not just "0 triples".
	if !strings.Contains(errOut, "cost: the tests of the 2 suites are not in that count (--no-try lists nothing); once the config is committed, flakegate check --plan --base REV counts them") {
		t.Errorf("no line saying the suites are not counted:\n%s", errOut)
	}
}
