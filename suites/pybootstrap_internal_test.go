package suites

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needPytest is an interpreter that has pytest (the system's), or a skip.
func needPytest(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs python")
	}
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if exec.Command(p, "-I", "-c", "import pytest").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with pytest")
	return ""
}

// pyTree writes files into a new folder and returns it.
func pyTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPy runs argv in dir and returns its exit code and output.
func runPy(t *testing.T, dir string, argv []string) (int, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

const failingTest = "def test_fails():\n    assert 1 == 2\n"

// TestPyBootstrapFrameworkFromToolchain: each way a tree took pytest's
// place under `python -m pytest` (issue 42, attacks 1 and 2, and a
// standard module pytest imports at its start) makes a failing test pass
// there, and fails it through the bootstrap.
func TestPyBootstrapFrameworkFromToolchain(t *testing.T) {
	py := needPytest(t)
	forge := "import sys\nprint('1 passed')\nsys.exit(0)\n"
	plugin := "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    r = out.get_result()\n    if r.failed:\n        r.outcome = 'passed'\n"
	for name, files := range map[string]map[string]string{
		"a pytest package": {"pytest/__init__.py": forge, "pytest/__main__.py": forge},
		"a pytest11 plugin in a dist-info": {"evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
			"evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evilplugin\n", "evilplugin.py": plugin},
		"a standard module pytest imports": {"argparse.py": forge},
		"pluggy":                           {"pluggy/__init__.py": forge},
	} {
		files["test_a.py"] = failingTest
		dir := pyTree(t, files)
		argv := []string{py, "-m", "pytest", "-p", "no:cacheprovider", "test_a.py"}
		if code, out := runPy(t, dir, argv); code != 0 {
			t.Errorf("%s: python -m pytest exits %d: the attack does not work here\n%s", name, code, out)
		}
		code, out := runPy(t, dir, PyBootstrapArgv(argv, "run"))
		if code != 1 || !strings.Contains(out, "1 failed") {
			t.Errorf("%s: through the bootstrap exit %d, want 1 and the test failed\n%s", name, code, out)
		}
	}
}

// TestPyBootstrapTreeStillImports: through the bootstrap the tree's own
// package still beats an installed copy, a suite's pythonpath folder is
// importable (and its sitecustomize does not run), children get the
// folder in PYTHONPATH, the environment's plugins load (Hypothesis' seed
// option is known), and -p no:NAME still blocks one.
func TestPyBootstrapTreeStillImports(t *testing.T) {
	py := needPytest(t)
	dir := pyTree(t, map[string]string{
		"six.py":               "FROM_TREE = True\n",
		"src/mylib.py":         "VALUE = 7\n",
		"src/sitecustomize.py": "import os\nos.environ['SITE_RAN'] = '1'\n",
		"test_t.py":            "import os, subprocess, sys\nimport six\nimport mylib\n\ndef test_tree():\n    assert 'SITE_RAN' not in os.environ\n    assert getattr(six, 'FROM_TREE', False)\n    assert mylib.VALUE == 7\n    assert 'src' in os.environ['PYTHONPATH'].split(os.pathsep)\n    out = subprocess.run([sys.executable, '-c', 'import mylib; print(mylib.VALUE)'], capture_output=True, text=True)\n    assert out.stdout.strip() == '7', out\n",
		"test_h.py":            "def test_h():\n    pass\n",
	})
	argv := PyBootstrapArgv([]string{"env", "PYTHONPATH=src", py, "-m", "pytest", "-p", "no:cacheprovider", "test_t.py"}, "run")
	for _, a := range argv {
		if strings.HasPrefix(a, "PYTHONPATH=") {
			t.Errorf("PYTHONPATH stays in the environment: %q", argv)
		}
	}
	if code, out := runPy(t, dir, argv); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if exec.Command(py, "-I", "-c", "import hypothesis").Run() == nil {
		code, out := runPy(t, dir, PyBootstrapArgv([]string{py, "-m", "pytest", "-p", "no:cacheprovider", "--hypothesis-seed=3", "test_h.py", "--co", "-q"}, "run"))
		if code != 0 {
			t.Errorf("--hypothesis-seed: exit %d (4 is an unknown option: the environment's plugin did not load)\n%s", code, out)
		}
		code, out = runPy(t, dir, PyBootstrapArgv([]string{py, "-m", "pytest", "-p", "no:hypothesispytest", "--hypothesis-seed=3", "test_h.py", "--co", "-q"}, "run"))
		if code != 4 {
			t.Errorf("-p no:hypothesispytest did not block the plugin: exit %d\n%s", code, out)
		}
	}
}

// TestPyBootstrapMarks: the skips listing (pytestMarks) runs through the
// bootstrap and names what the marks skip.
func TestPyBootstrapMarks(t *testing.T) {
	py := needPytest(t)
	dir := pyTree(t, map[string]string{"test_m.py": "import pytest\n\n@pytest.mark.skip\ndef test_s():\n    pass\n\ndef test_r():\n    pass\n",
		"pytest/__init__.py": "raise SystemExit(0)\n"})
	code, out := runPy(t, dir, PyBootstrapArgv([]string{py, "-m", "pytest", "--rootdir=.", "--collect-only", "-q", "-s", "."}, "marks"))
	if code != 0 || !strings.Contains(out, "flakegate-skipped test_m.py::test_s") || strings.Contains(out, "flakegate-skipped test_m.py::test_r") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestPyBootstrapArgv: the first `PYTHON -m pytest` of a command runs
// through the bootstrap, a PYTHONPATH an env(1) before it sets goes to
// the bootstrap, and a command that does not run pytest as a module is
// left as it is.
func TestPyBootstrapArgv(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"python3 -m pytest -q a.py::t", "python3 -c BOOT  run -q a.py::t"},
		{"/usr/bin/python3.11 -m pytest -p no:x", "/usr/bin/python3.11 -c BOOT  run -p no:x"},
		{"env PYTHONPATH=src:lib FOO=1 python -m pytest t", "env FOO=1 python -c BOOT src:lib run t"},
		{"sh -c SCRIPT flakegate-evidence env PYTHONPATH=src python3 -m pytest t", "sh -c SCRIPT flakegate-evidence env python3 -c BOOT src run t"},
		{"pytest -q a.py::t", "pytest -q a.py::t"},
		{"python3 -m pytestx t", "python3 -m pytestx t"},
		{"PYTHONPATH=src python3 -m pytest t", "PYTHONPATH=src python3 -c BOOT  run t"}, // not env's: left
	} {
		got := strings.Join(PyBootstrapArgv(strings.Fields(c.in), "run"), " ")
		if want := strings.ReplaceAll(c.want, "BOOT", PyBootstrap); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	if got := PyBootstrapArgv([]string{"python3", "-m", "pytest"}, "marks"); !strings.Contains(got[2], "MARKS = ") || !strings.Contains(got[2], "evaluate_skip_marks") {
		t.Errorf("the marks mode does not carry pytestMarks: %q", got[2][:80])
	}
}
