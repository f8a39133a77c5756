package initconfig

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/discover"
	"pgregory.net/rapid"
)

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for p, body := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	return fsys
}

var (
	goTest = discover.Test{Framework: discover.GoRapid, Path: "sched/sched_test.go", Name: "TestSchedule", Dir: "sched"}
	pyTest = discover.Test{Framework: discover.PytestHypothesis, Path: "tests/test_p.py", Name: "TestGroup::test_x"}
	vtTest = discover.Test{Framework: discover.VitestFastCheck, Path: "src/a.test.ts", Name: "sort keeps (length)", Dir: "."}
	jsTest = discover.Test{Framework: discover.JestFastCheck, Path: "sum.test.js", Name: "sum commutes", Dir: "."}
)

// TestRender: every generated file loads with config.Load, and each
// framework gets its run template, pass marker and prepare guess.
func TestRender(t *testing.T) {
	type testCase struct {
		name  string
		files map[string]string
		tests []discover.Test
		hook  bool
		opts  Options  // the machine
		want  []string // lines (trimmed) the file must hold
		not   []string
		// problem is what the plan must say keeps it from running here
		// ("" for nothing).
		problem string
	}
	run := func(t *testing.T, tc testCase) {
		pl := Build(mapFS(tc.files), tc.tests, tc.opts)
		if got := strings.Join(pl.Problems, "\n"); !strings.Contains(got, tc.problem) || tc.problem == "" && got != "" {
			t.Errorf("problems %q, want %q", got, tc.problem)
		}
		raw, err := Render(pl, tc.hook)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(raw, config.DefaultPath)
		if err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if len(cfg.Properties) != len(tc.tests) {
			t.Errorf("%d properties, want %d", len(cfg.Properties), len(tc.tests))
		}
		for i, p := range cfg.Properties {
			if p.Path != tc.tests[i].Path || p.Name != tc.tests[i].Name || len(p.Seeds) != 3 || p.RandomSeeds != RandomSeeds || p.WallBudget != DefaultWallBudget {
				t.Errorf("property %d: %+v", i, p)
			}
		}
		text := string(raw)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("the file lacks %q\n%s", w, text)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(text, w) {
				t.Errorf("the file holds %q\n%s", w, text)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "go: no prepare", tests: []discover.Test{goTest, {Framework: discover.GoRapid, Path: "a_test.go", Name: "TestA", Dir: "."}},
			want: []string{`run: ["go", "test", "-count=1", "-run", "^{name}$", "./sched", "-rapid.seed={seed}", "-rapid.nofailfile"]`,
				`run: ["go", "test", "-count=1", "-run", "^{name}$", ".", "-rapid.seed={seed}"`, "# No prepare: every attempt's Go build cache"},
			not: []string{"prepare:\n"}},
		{name: "pytest without a package", files: map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n"}, tests: []discover.Test{pyTest},
			want: []string{`run: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "{path}::{name}", "--hypothesis-seed={seed}"]`},
			not:  []string{"prepare:\n", "derandomize", "PYTHONPATH"}},
		{name: "pytest: the chosen interpreter", tests: []discover.Test{pyTest}, opts: Options{Python: "/usr/bin/python3"},
			want: []string{`run: ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "{path}::{name}", "--hypothesis-seed={seed}"]`}},
		{name: "pytest: a setuptools pyproject builds nothing", files: map[string]string{"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=61\"]\n[project]\nname = 'x'\n"}, tests: []discover.Test{pyTest},
			want: []string{"No prepare: nothing to build"}, not: []string{"prepare:\n", ".venv", "pip install"}},
		{name: "pytest: src layout gets PYTHONPATH", files: map[string]string{"src/pkg/__init__.py": "", "pyproject.toml": "[project]\nname = 'pkg'\n"}, tests: []discover.Test{pyTest}, opts: Options{Python: "/usr/bin/python3"},
			want: []string{`run: ["env", "PYTHONPATH=src", "/usr/bin/python3", "-m", "pytest"`}},
		{name: "pytest: src layout with pytest's own pythonpath", files: map[string]string{"src/pkg/__init__.py": "", "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n"}, tests: []discover.Test{pyTest},
			want: []string{`run: ["python3", "-m", "pytest"`}, not: []string{"PYTHONPATH"}},
		{name: "pytest: an extension built offline", files: map[string]string{"setup.py": "from setuptools import setup, Extension\nsetup(ext_modules=[Extension('f', ['f.c'])])\n"}, tests: []discover.Test{pyTest},
			opts: Options{Python: "/usr/bin/python3", BuildRequiresMet: true},
			want: []string{`run: ["/usr/bin/python3", "setup.py", "build_ext", "--inplace"]`, "network: false"}},
		{name: "pytest: an extension with the index", files: map[string]string{"setup.py": "from setuptools import setup, Extension\nsetup(ext_modules=[Extension('f', ['f.c'])])\n"}, tests: []discover.Test{pyTest},
			opts: Options{IndexReachable: true},
			want: []string{`.venv/bin/python -m pip install -q -e .`, `run: [".venv/bin/python", "-m", "pytest"`, "network: true"}},
		{name: "vitest with a lock file, no hook", files: map[string]string{"package-lock.json": "{}"}, tests: []discover.Test{vtTest},
			want: []string{`"env", "FAST_CHECK_SEED={seed}", "node_modules/.bin/vitest", "run", "{path}", "-t", "^sort keeps \\(length\\)$"`,
				`run: ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]`, "WARNING: no file here reads FAST_CHECK_SEED"},
			not: []string{"pass_marker", "fail_marker"}}, // vitest's own summary and report judge it, and the triples batch
		{name: "yarn", files: map[string]string{"yarn.lock": "", "package-lock.json/x": ""}, tests: []discover.Test{vtTest},
			want: []string{`run: ["yarn", "install", "--frozen-lockfile", "--ignore-scripts"]`, "yarn.lock is there", `allow: ["registry.yarnpkg.com:443"]`}},
		{name: "npm: the registries the lock file and .npmrc name", files: map[string]string{
			"package-lock.json": `{"packages": {"node_modules/a": {"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz"}, "node_modules/b": {"resolved": "https://npm.corp.example:8443/b.tgz"}}}`,
			".npmrc":            "@corp:registry=https://npm.corp.example:8443/\n"},
			tests: []discover.Test{vtTest},
			want:  []string{`run: ["npm", "ci"`, "network: true", `allow: ["npm.corp.example:8443", "registry.npmjs.org:443"]`}},
		{name: "npm: .npmrc's registry replaces the default", files: map[string]string{"package-lock.json": "{}", ".npmrc": "registry=http://mirror.example/npm/\n"},
			tests: []discover.Test{vtTest}, want: []string{`allow: ["mirror.example:80"]`}, not: []string{"registry.npmjs.org"}},
		{name: "node_modules in the tree: no prepare", files: map[string]string{"package-lock.json": "{}"}, tests: []discover.Test{vtTest},
			opts: Options{NodeModulesInTree: true}, want: []string{"No prepare: node_modules is in the tree"}, not: []string{"prepare:\n", `"npm"`}},
		{name: "pnpm missing", files: map[string]string{"pnpm-lock.yaml": ""}, tests: []discover.Test{vtTest},
			opts: Options{HasProgram: func(p string) bool { return p != "pnpm" }},
			want: []string{`run: ["pnpm", "install"`}, problem: "pnpm-lock.yaml says pnpm installs node_modules, and pnpm is not on PATH here: install it (npm install -g pnpm, or corepack enable pnpm)"},
		{name: "jest with the hook, no lock file", hook: true, tests: []discover.Test{jsTest},
			want: []string{"No prepare: no package-lock.json", `"node_modules/.bin/jest", "--ci", "{path}", "-t", "^{name}$"`},
			not:  []string{"prepare:\n", "WARNING", "No prepare: every", "pass_marker", "fail_marker"}},
		{name: "mixed: each entry its own prepare", files: map[string]string{"setup.py": "ext_modules=[]", "package-lock.json": "{}"}, tests: []discover.Test{goTest, pyTest, vtTest},
			opts: Options{IndexReachable: true},
			want: []string{"    prepare:\n      run: [\"sh\"", "    prepare:\n      run: [\"npm\""}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRenderAnyName: whatever a test is called, the file loads and names
// it exactly, and the -t pattern matches exactly that name.
func TestRenderAnyName(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.StringMatching(`[A-Za-z0-9][A-Za-z0-9 _.()\[\]{}*+?|^$\\'"#:-]{0,40}[A-Za-z0-9]`).Draw(t, "name")
		tc := discover.Test{Framework: discover.VitestFastCheck, Path: "a.test.js", Name: name, Dir: "."}
		raw, err := Render(Build(mapFS(nil), []discover.Test{tc}, Options{}), true)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(raw, config.DefaultPath)
		if err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		p := cfg.Properties[0]
		if p.Name != name {
			t.Fatalf("name %q, want %q", p.Name, name)
		}
		pat := strings.ReplaceAll(p.Run[len(p.Run)-1], "{name}", name)
		re, err := regexp.Compile(pat)
		if err != nil {
			t.Fatalf("-t %q: %v", pat, err)
		}
		if !re.MatchString(name) || re.MatchString(name+"x") || re.MatchString("x"+name) {
			t.Fatalf("-t %q does not select exactly %q", pat, name)
		}
	})
}

func TestMeasuredBudget(t *testing.T) {
	for took, want := range map[time.Duration]time.Duration{
		0:                       MeasureFloor,
		2 * time.Second:         MeasureFloor,
		7 * time.Second:         40 * time.Second,
		61 * time.Second:        310 * time.Second,
		10 * time.Hour:          config.MaxWallBudget,
		1500 * time.Millisecond: MeasureFloor,
	} {
		if got := MeasuredBudget(took); got != want {
			t.Errorf("MeasuredBudget(%s) = %s, want %s", took, got, want)
		}
	}
	if got := formatDuration(310 * time.Second); got != "5m10s" {
		t.Errorf("formatDuration: %s", got)
	}
}

// TestBuildSkipsUnnameable: a test whose name no config can hold is
// skipped with the reason, and the rest is still written.
func TestBuildSkipsUnnameable(t *testing.T) {
	tests := []discover.Test{
		{Framework: discover.VitestFastCheck, Path: "a.test.js", Name: "two\nlines", Dir: "."},
		{Framework: discover.VitestFastCheck, Path: "a.test.js", Name: "-flag", Dir: "."},
		{Framework: discover.VitestFastCheck, Path: "a.test.js", Name: strings.Repeat("x", config.MaxNameLength+1), Dir: "."},
		{Framework: discover.VitestFastCheck, Path: "-a.test.js", Name: "ok", Dir: "."},
		vtTest,
	}
	pl := Build(mapFS(nil), tests, Options{})
	if len(pl.Entries) != 1 || pl.Entries[0].Test.Name != vtTest.Name || len(pl.Skipped) != 4 {
		t.Fatalf("entries %v, skipped %v", pl.Entries, pl.Skipped)
	}
	for i, want := range []string{"control character", "starts with '-'", "longer than 512 bytes", "could be read as an option"} {
		if !strings.Contains(pl.Skipped[i].Reason, want) {
			t.Errorf("skipped %d: %q lacks %q", i, pl.Skipped[i].Reason, want)
		}
	}
	if _, err := Render(pl, true); err != nil {
		t.Fatal(err)
	}
}

// TestBuildProblems: an extension module that can be built neither
// offline nor from the index is a problem with its fix, and no prepare.
func TestBuildProblems(t *testing.T) {
	fsys := mapFS(map[string]string{"setup.py": "from setuptools import setup, Extension\nsetup(ext_modules=[Extension('f', ['f.c'])])\n"})
	pl := Build(fsys, []discover.Test{pyTest}, Options{Python: "/usr/bin/python3"})
	if len(pl.Problems) != 1 || !strings.Contains(pl.Problems[0], "lacks its build requirements (setuptools)") || !strings.Contains(pl.Problems[0], "install them") {
		t.Fatalf("problems %q", pl.Problems)
	}
	if pl.Entries[0].Prepare != nil {
		t.Fatalf("a prepare that cannot work: %+v", pl.Entries[0].Prepare)
	}
}

// TestPythonOptional: a file's unindented importorskip calls name the
// modules it skips itself without; a call in a function, a string or a
// comment, another object's importorskip and the project's own module do
// not.
func TestPythonOptional(t *testing.T) {
	fsys := mapFS(map[string]string{
		"helpers.py": "",
		"tests/test_p.py": "import pytest\nfrom pytest import importorskip\n" +
			"cloudpickle = pytest.importorskip(\"cloudpickle\")\n" +
			"np = importorskip('numpy.linalg', minversion='1.0')\n" +
			"pytest.importorskip(\n    \"attr\",\n)\n" +
			"pytest.importorskip(\"helpers\")\n" +
			"other.importorskip(\"notme\")\n" +
			"s = 'pytest.importorskip(\"instring\")'  # pytest.importorskip(\"incomment\")\n" +
			"def f():\n    pytest.importorskip(\"lazy\")\n",
		"tests/test_q.py": "from hypothesis import given\n",
	})
	tests := []discover.Test{pyTest, {Path: "tests/test_q.py", Name: "test_q", Framework: discover.PytestHypothesis}}
	got := PythonOptional(fsys, tests, PythonLayout(fsys))
	if len(got) != 1 || strings.Join(got["tests/test_p.py"], ",") != "cloudpickle,numpy,attr" {
		t.Fatalf("optional modules %v", got)
	}
}

// TestPythonImports: the tests' and conftest.py's imports, less the
// project's own modules and relative imports.
func TestPythonImports(t *testing.T) {
	fsys := mapFS(map[string]string{
		"src/pkg/__init__.py": "",
		"helpers.py":          "",
		"tests/conftest.py":   "import pytest\nfrom . import shared\nimport attr as a, numpy.linalg\n",
		"tests/util.py":       "",
		"tests/test_p.py":     "from hypothesis import given\nimport pkg, helpers, util\nfrom __future__ import annotations\ndef f():\n    import lazy\n",
	})
	l := PythonLayout(fsys)
	got := PythonImports(fsys, []discover.Test{pyTest}, l)
	if strings.Join(got, ",") != "attr,hypothesis,numpy,pytest" {
		t.Fatalf("imports %v (layout %+v)", got, l)
	}
}
