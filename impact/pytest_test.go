package impact_test

import (
	"bytes"
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

// pyProject is a src/ layout: app.core imports app.util; app.other
// stands alone; tests/unit holds the tests of core and util under a
// conftest of fixtures; tests/test_other.py tests app.other.
func pyProject() map[string]string {
	return map[string]string{
		"pyproject.toml":          "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
		"README.md":               "# app\n",
		"scripts/tool.py":         "print('a tool no test imports')\n",
		"src/app/__init__.py":     "",
		"src/app/util.py":         "def double(x):\n    return 2 * x\n",
		"src/app/core.py":         "from .util import double\n\n\ndef quad(x):\n    return double(double(x))\n",
		"src/app/other.py":        "def one():\n    return 1\n",
		"tests/conftest.py":       "import pytest\n\n\n@pytest.fixture\ndef base():\n    return 1\n",
		"tests/unit/conftest.py":  "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
		"tests/unit/test_core.py": "from app.core import quad\n\n\ndef test_quad(two):\n    assert quad(two) == 8\n",
		"tests/unit/test_util.py": "import app.util\n\n\ndef test_double(two):\n    assert app.util.double(two) == 4\n",
		"tests/unit/data/in.txt":  "input\n",
		"tests/test_other.py":     "# import app.core is a comment, and so is this\nimport app.other\n\ns = 'from app import util'\n\n\ndef test_one(base):\n    assert app.other.one() == base\n",
	}
}

var pyTests = []string{"tests/test_other.py", "tests/unit/test_core.py", "tests/unit/test_util.py"}

// emptySession is a session log that saw the tests read, load and
// start nothing beyond their closures.
func emptySession() *impact.PytestSession {
	return &impact.PytestSession{Read: map[string]bool{}, Listed: map[string]bool{}, Modules: map[string]bool{}}
}

func TestPytestReachability(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		base    map[string]string // added to pyProject
		change  map[string]string
		tests   []string // beside pyTests
		session *impact.PytestSession
		want    []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		base := pyProject()
		maps.Copy(base, tc.base)
		b, c := twoTrees(t, base, tc.change)
		vs, err := impact.Pytest(impact.PytestInput{Trees: compare(t, b, c), Tests: append(tc.tests, pyTests...), Session: tc.session})
		if err != nil {
			t.Fatal(err)
		}
		if got := affectedUnits(vs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("affected %q, want %q\n%+v", got, tc.want, vs)
		}
	}
	dyn := map[string]string{
		"src/app/plugins.py":  "import importlib\n\n\ndef load(name):\n    return importlib.import_module(name)\n",
		"tests/test_plugs.py": "from app.plugins import load\n\n\ndef test_load():\n    assert load('json')\n",
	}
	for _, tc := range []testCase{
		{name: "a helper imported transitively", change: map[string]string{"src/app/util.py": "def double(x):\n    return x + x\n"},
			session: emptySession(), want: []string{"tests/unit/test_core.py", "tests/unit/test_util.py"}},
		{name: "a module one test imports", change: map[string]string{"src/app/other.py": "def one():\n    return 1 # one\n"},
			session: emptySession(), want: []string{"tests/test_other.py"}},
		{name: "a dynamic import makes the file reachable from everything", base: dyn, tests: []string{"tests/test_plugs.py"},
			change: map[string]string{"src/app/other.py": "def one():\n    return 1 # one\n"}, session: emptySession(),
			want: []string{"tests/test_other.py", "tests/test_plugs.py"}},
		{name: "a conftest of fixtures reaches the folder below", change: map[string]string{"tests/unit/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 1 + 1\n"},
			session: emptySession(), want: []string{"tests/unit/test_core.py", "tests/unit/test_util.py"}},
		{name: "the top conftest reaches every test", change: map[string]string{"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef base():\n    return 0 + 1\n"},
			session: emptySession(), want: pyTests},
		{name: "a conftest that defines a hook reaches every test", change: map[string]string{"tests/unit/conftest.py": "def pytest_collection_modifyitems(items):\n    items.reverse()\n"},
			session: emptySession(), want: pyTests},
		{name: "the configuration", change: map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"-x\"\n"},
			session: emptySession(), want: pyTests},
		{name: "data under the folders of some tests the session did not read", base: map[string]string{"tests/other/test_x.py": "def test_x():\n    pass\n"},
			tests: []string{"tests/other/test_x.py"}, change: map[string]string{"tests/unit/data/in.txt": "other\n"}, session: emptySession(),
			want: []string{"tests/test_other.py", "tests/unit/test_core.py", "tests/unit/test_util.py"}},
		{name: "a file the session read", change: map[string]string{"README.md": "# App\n"},
			session: &impact.PytestSession{Read: map[string]bool{"README.md": true}}, want: pyTests},
		{name: "a file no one read", change: map[string]string{"README.md": "# App\n"}, session: emptySession()},
		{name: "a file when no one knows what was read", change: map[string]string{"README.md": "# App\n"}, want: pyTests},
		{name: "a file added", change: map[string]string{"docs/new.md": "new\n"}, session: emptySession(), want: pyTests},
		{name: "a module no test imports nor the session loaded", change: map[string]string{"scripts/tool.py": "print('changed')\n"},
			session: emptySession()},
		{name: "a module no test imports, without a session log", change: map[string]string{"scripts/tool.py": "print('changed')\n"},
			want: pyTests},
		{name: "a module no test imports that the session loaded", change: map[string]string{"scripts/tool.py": "print('changed')\n"},
			session: &impact.PytestSession{Modules: map[string]bool{"scripts/tool.py": true}}, want: pyTests},
		{name: "a session that starts processes", change: map[string]string{"src/app/other.py": "def one():\n    return 1 # one\n"},
			session: &impact.PytestSession{Process: "subprocess.Popen"}, want: pyTests},
		{name: "a test that starts processes", base: map[string]string{"tests/unit/test_proc.py": "import subprocess\n\n\ndef test_p():\n    subprocess.run(['true'])\n"},
			tests: []string{"tests/unit/test_proc.py"}, change: map[string]string{"src/app/other.py": "def one():\n    return 1 # one\n"},
			session: emptySession(), want: []string{"tests/test_other.py", "tests/unit/test_proc.py"}},
		{name: "a module shadowing the standard library", base: map[string]string{"tests/unit/test_js.py": "import json\n\n\ndef test_j():\n    assert json.dumps(1)\n"},
			tests: []string{"tests/unit/test_js.py"}, change: map[string]string{"src/json.py": "def dumps(x):\n    return ''\n"},
			session: emptySession(), want: []string{"tests/unit/test_js.py"}},
		{name: "a star import of a package", base: map[string]string{"tests/unit/test_star.py": "from app import *\n\n\ndef test_s():\n    pass\n"},
			tests: []string{"tests/unit/test_star.py"}, change: map[string]string{"src/app/other.py": "def one():\n    return 1 # one\n"},
			session: emptySession(), want: []string{"tests/test_other.py", "tests/unit/test_star.py"}},
		{name: "nothing", session: emptySession()},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestPytestSession runs the real pytest with the session script on a
// project, and checks what it read, listed and loaded.
func TestPytestSession(t *testing.T) {
	t.Parallel()
	python := "/usr/bin/python3"
	if exec.Command(python, "-c", "import pytest").Run() != nil {
		t.Skip("no pytest for /usr/bin/python3")
	}
	dir := filepath.Join(t.TempDir(), "base")
	files := pyProject()
	files["tests/unit/test_core.py"] += "\n\ndef test_reads():\n    import os\n    here = os.path.dirname(__file__)\n" +
		"    assert open(os.path.join(here, 'data', 'in.txt')).read()\n    assert os.listdir(os.path.join(here, '..', '..', 'scripts'))\n"
	writeTree(t, dir, files)
	argv := impact.PytestSessionArgv([]string{"env", "PYTHONPATH=src", python, "-m", "pytest", "--rootdir=.", "-p", "no:cacheprovider", "-q"}, "tests")
	out, err := runIn(dir)(context.Background(), argv)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s, err := impact.ReadPytestSession(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range []string{"tests/unit/data/in.txt", "tests/unit/test_core.py", "src/app/util.py"} {
		if !s.Read[f] {
			t.Errorf("the session did not read %s: %v", f, s.Read)
		}
	}
	if !s.Listed["scripts"] || !s.Modules["src/app/core.py"] || s.Modules["scripts/tool.py"] || s.Process != "" {
		t.Errorf("listed %v, modules %v, process %q", s.Listed, s.Modules, s.Process)
	}
	if _, err := impact.ReadPytestSession(bytes.NewReader(out[:bytes.LastIndex(out, []byte("flakegate-session-end"))])); err == nil {
		t.Error("a session log without its end was read")
	}
}
