package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	fgconfig "github.com/flakegate/flakegate/config"
)

// These tests run `flakegate init` on the layouts real projects have,
// with the dependencies installed the way this machine has them (Debian's
// python3-pytest and python3-hypothesis, the Go module cache, a stand-in
// node_modules), then, with no edit of what init wrote but its seed
// lists, a check of a harmless patch (exit 0, every triple PASS) and of
// a regression (exit 1, every triple PROPERTY). The checks run seed 1
// alone (keepSeeds): what a layout decides is each command (its
// interpreter, PYTHONPATH, pythonpath, markers), which every seed runs
// the same way, and each further seed cost a check a process per side.
// What init writes for seeds is held by initconfig's tests and
// TestInitGoRapid and its kin, which check the config as written.

// layoutCase is one project layout.
type layoutCase struct {
	files     map[string]string
	names     []string          // the properties init must find
	need      string            // a program the layout needs on PATH
	bug       map[string]string // the regression
	triples   int               // per check
	batches   string            // when set, a line the harmless check must print this many times: "3 batch of 2 (pytest"
	drawn     int               // seeds the checks draw per candidate besides seed 1
	checkRuns func(t *testing.T, r *repo)
}

func runLayout(t *testing.T, lc layoutCase) *repo {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end: init, then two checks")
	}
	needProgram(t, lc.need)
	r := newRepo(t, lc.files)
	scripts := false
	for name, body := range lc.files {
		if strings.HasPrefix(body, "#!") {
			scripts = true
			if err := os.Chmod(filepath.Join(r.dir, filepath.FromSlash(name)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if scripts {
		r.commit("scripts are executable", map[string]string{})
		r.git("tag", "-f", "base")
	}
	code, out := r.run("init")
	if code != 0 || !strings.Contains(out, "  ok   ") || strings.Contains(out, "problem:") {
		t.Fatalf("init: exit %d (want 0, the trial passing)\n%s", code, out)
	}
	for _, n := range lc.names {
		if !strings.Contains(out, "  ok   "+n+": ") {
			t.Errorf("init did not try %s and pass:\n%s", n, out)
		}
	}
	keepSeeds(t, r, lc.drawn)
	r.git("add", "flakegate.yaml")
	r.git("commit", "-q", "-m", "flakegate init")
	r.git("tag", "-f", "base")
	if lc.checkRuns != nil {
		lc.checkRuns(t, r)
	}
	r.candidate("docs", map[string]string{"README.md": "documented, nothing else\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	wantAll(t, cr, 0, "PASS", lc.triples)
	if n, line, ok := strings.Cut(lc.batches, " "); ok && strconv.Itoa(strings.Count(cr.stderr, "] "+line)) != n {
		t.Errorf("want %s lines %q:\n%s", n, line, cr.stderr)
	}
	r.candidate("bug", lc.bug)
	wantAll(t, r.check("--base", "base", "--candidate", "bug"), 1, "PROPERTY", lc.triples)
	return r
}

// pyConftest is the conftest.py many Hypothesis projects carry: a CI
// profile without the example database and the deadline.
const pyConftest = "from hypothesis import settings\n\nsettings.register_profile(\"ci\", database=None, deadline=None)\nsettings.load_profile(\"ci\")\n"

const intervalsPy = `def merge(spans):
    """Merge overlapping [lo, hi] spans."""
    out = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out
`

const intervalsBug = `def merge(spans):
    out = []
    for lo, hi in sorted(spans):
        out.append([lo, hi])
    return out
`

const intervalsTest = `from hypothesis import given, strategies as st

from %s import merge

span = st.tuples(st.integers(-50, 50), st.integers(0, 20)).map(lambda t: (t[0], t[0] + t[1]))


@given(st.lists(span, min_size=2))
def test_merged_spans_are_disjoint(spans):
    out = merge(spans)
    assert all(a[1] < b[0] for a, b in zip(out, out[1:]))
`

// overlapTest is a second property of the intervals, so that a check
// batches the two on each fixed seed. A batch of a src/ layout's run
// (env PYTHONPATH=src ... pytest) once got no -rA, and every member was
// INCOMPLETE.
const overlapTest = `

@given(st.integers(-50, 50))
def test_overlapping_pair_merges(lo):
    assert len(merge([(lo, lo + 5), (lo + 1, lo + 6)])) == 1
`

// TestInitLayoutPytestFlat: a module at the root, tests/ with a
// conftest.py that puts the root on sys.path. A patch of conftest.py
// (which drops that line) is graded with the base's conftest.py: PASS;
// with a bug too, the base's tests fail where the patch changed their
// conftest.py: CONTAMINATED, and the reason names the file once.
func TestInitLayoutPytestFlat(t *testing.T) {
	t.Parallel()
	runLayout(t, layoutCase{
		need: "python3",
		files: map[string]string{
			"README.md":           "intervals\n",
			"intervals.py":        intervalsPy,
			"conftest.py":         "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n" + pyConftest,
			"tests/__init__.py":   "",
			"tests/test_merge.py": strings.Replace(intervalsTest, "%s", "intervals", 1),
		},
		names:   []string{"tests/test_merge.py::test_merged_spans_are_disjoint"},
		bug:     map[string]string{"intervals.py": intervalsBug},
		triples: 1,
		checkRuns: func(t *testing.T, r *repo) {
			r.candidate("conftest", map[string]string{"conftest.py": pyConftest + "# reworded\n"})
			wantAll(t, r.check("--base", "base", "--candidate", "conftest"), 0, "PASS", 1)
			r.candidate("conftest-bug", map[string]string{"conftest.py": pyConftest + "# reworded\n", "intervals.py": intervalsBug})
			cr := r.check("--base", "base", "--candidate", "conftest-bug")
			wantAll(t, cr, 1, "CONTAMINATED", 1)
			for _, res := range cr.summary.Results {
				if strings.Count(res.Reason, "conftest.py") != 1 {
					t.Errorf("the reason names conftest.py %d times, want once: %q", strings.Count(res.Reason, "conftest.py"), res.Reason)
				}
			}
		},
	})
}

// TestInitLayoutSrc: a setuptools package under src/ (pyproject.toml), a
// tests/ folder without __init__.py and a conftest.py: the run puts src
// on PYTHONPATH, and so does the pytest suite (pythonpath: [src]); no
// prepare builds anything.
func TestInitLayoutSrc(t *testing.T) {
	t.Parallel()
	r := runLayout(t, layoutCase{
		need: "python3",
		files: map[string]string{
			"README.md": "spans\n",
			"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
				"[project]\nname = \"spans\"\nversion = \"0.1.0\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
			"src/spans/__init__.py": "from .core import merge\n",
			"src/spans/core.py":     intervalsPy,
			"tests/conftest.py":     pyConftest,
			"tests/test_spans.py":   strings.Replace(intervalsTest, "%s", "spans", 1) + overlapTest,
			"tests/test_plain.py":   "from spans import merge\n\n\ndef test_two_spans_merge():\n    assert merge([(1, 3), (2, 4)]) == [[1, 4]]\n",
		},
		names:   []string{"tests/test_spans.py::test_merged_spans_are_disjoint"},
		bug:     map[string]string{"src/spans/core.py": intervalsBug},
		triples: 5,                      // two properties on seed 1 and a drawn seed (on each seed the check runs them as one batch), and the suite's plain test on order seed 1
		batches: "2 batch of 2 (pytest", // the random seed is drawn per candidate, shared too
		drawn:   1,
	})
	cfg := readConfig(t, r)
	if p := cfg.Properties[0]; p.Run[0] != "env" || p.Run[1] != "PYTHONPATH=src" || p.Prepare != nil || cfg.Prepare != nil {
		t.Errorf("run %q, prepare %+v", p.Run, p.Prepare)
	}
	// The suite puts src on sys.path as the properties' run does, so its
	// plain test imports the tree's code and is gated too (before, init
	// left the suite out of a src layout).
	if len(cfg.Suites) != 1 || cfg.Suites[0].Framework != "pytest" || strings.Join(cfg.Suites[0].PythonPath, ":") != "src" {
		t.Errorf("want one pytest suite with pythonpath [src], got %+v", cfg.Suites)
	}
}

// TestInitLayoutSubfolder: the Python code and its tests in a folder of
// their own (py/spans beside py/tests, no __init__.py in py/tests, no
// pytest setting): the tests import spans, which nothing puts on
// sys.path. init finds the folder that holds it and writes it where it
// is needed, PYTHONPATH=py in the properties' run and pythonpath: [py]
// for the suite, so that the config it writes runs. Before, its trial
// said the test could not import spans and left the fix to the user.
func TestInitLayoutSubfolder(t *testing.T) {
	t.Parallel()
	r := runLayout(t, layoutCase{
		need: "python3",
		files: map[string]string{
			"README.md":              "spans, in py/\n",
			"py/spans/__init__.py":   "from .core import merge\n",
			"py/spans/core.py":       intervalsPy,
			"py/tests/conftest.py":   pyConftest,
			"py/tests/test_spans.py": strings.Replace(intervalsTest, "%s", "spans", 1),
			"py/tests/test_plain.py": "from spans import merge\n\n\ndef test_two_spans_merge():\n    assert merge([(1, 3), (2, 4)]) == [[1, 4]]\n",
		},
		names:   []string{"py/tests/test_spans.py::test_merged_spans_are_disjoint"},
		bug:     map[string]string{"py/spans/core.py": intervalsBug},
		triples: 2, // the property's seed, and the suite's plain test on its order seed
	})
	cfg := readConfig(t, r)
	if p := cfg.Properties[0]; len(p.Run) < 2 || p.Run[0] != "env" || p.Run[1] != "PYTHONPATH=py" {
		t.Errorf("the property's run %q does not put py on PYTHONPATH", p.Run)
	}
	if len(cfg.Suites) != 1 || cfg.Suites[0].Framework != "pytest" || strings.Join(cfg.Suites[0].PythonPath, ":") != "py" {
		t.Errorf("want one pytest suite with pythonpath [py], got %+v", cfg.Suites)
	}
}

// TestInitLayoutPyprojectFlat: a setuptools project (pyproject.toml with
// [build-system] and [project], a package at the root, pytest settings
// in [tool.pytest.ini_options]) whose tests/ is a package: nothing is
// built, so no prepare (a pip install -e . could not reach an index
// here), and the check runs as written.
func TestInitLayoutPyprojectFlat(t *testing.T) {
	t.Parallel()
	r := runLayout(t, layoutCase{
		need: "python3",
		files: map[string]string{
			"README.md": "spans\n",
			"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=61\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
				"[project]\nname = \"spans\"\nversion = \"0.1.0\"\ndependencies = []\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\naddopts = \"-ra\"\n",
			"spans/__init__.py":   "from .core import merge\n",
			"spans/core.py":       intervalsPy,
			"tests/__init__.py":   "",
			"tests/conftest.py":   pyConftest,
			"tests/test_spans.py": strings.Replace(intervalsTest, "%s", "spans", 1),
		},
		names:   []string{"tests/test_spans.py::test_merged_spans_are_disjoint"},
		bug:     map[string]string{"spans/core.py": intervalsBug},
		triples: 1,
	})
	cfg := readConfig(t, r)
	if p := cfg.Properties[0]; p.Prepare != nil || cfg.Prepare != nil || !filepath.IsAbs(p.Run[0]) || p.Run[1] != "-m" || p.Run[2] != "pytest" {
		t.Errorf("run %q, prepare %+v", p.Run, p.Prepare)
	}
}

// TestInitLayoutTestsNoInit: a module at the root, tests/ without
// __init__.py and no conftest.py: only python -m pytest puts the root on
// sys.path (pytest alone inserts tests/).
func TestInitLayoutTestsNoInit(t *testing.T) {
	t.Parallel()
	runLayout(t, layoutCase{
		need: "python3",
		files: map[string]string{
			"README.md":           "intervals\n",
			"intervals.py":        intervalsPy,
			"tests/test_merge.py": strings.Replace(intervalsTest, "%s", "intervals", 1),
		},
		names:   []string{"tests/test_merge.py::test_merged_spans_are_disjoint"},
		bug:     map[string]string{"intervals.py": intervalsBug},
		triples: 1,
	})
}

// TestInitLayoutGoHelperPackage: a module whose property test draws from
// a test-helper package of its own (internal/qtest, no _test file).
func TestInitLayoutGoHelperPackage(t *testing.T) {
	t.Parallel()
	sum, err := os.ReadFile(filepath.Join("..", "examples", "go-rapid", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	queue := "package queue\n\n// Queue is a FIFO queue.\ntype Queue struct{ xs []int }\n\nfunc (q *Queue) Push(x int) { q.xs = append(q.xs, x) }\n\n" +
		"// Pop removes the oldest element.\nfunc (q *Queue) Pop() int {\n\tx := q.xs[0]\n\tq.xs = q.xs[1:]\n\treturn x\n}\n\nfunc (q *Queue) Len() int { return len(q.xs) }\n"
	runLayout(t, layoutCase{
		need: "go",
		files: map[string]string{
			"README.md": "queue\n",
			"go.mod":    "module example.com/queue\n\ngo 1.23\n\nrequire pgregory.net/rapid v1.3.0\n",
			"go.sum":    string(sum),
			"queue.go":  queue,
			"internal/qtest/qtest.go": "// Package qtest holds the generators the queue's tests share.\npackage qtest\n\nimport \"pgregory.net/rapid\"\n\n" +
				"// Values draws a non-empty list of small ints.\nfunc Values(t *rapid.T) []int {\n\treturn rapid.SliceOfN(rapid.IntRange(-100, 100), 2, 20).Draw(t, \"values\")\n}\n",
			"queue_test.go": "package queue\n\nimport (\n\t\"testing\"\n\n\t\"example.com/queue/internal/qtest\"\n\t\"pgregory.net/rapid\"\n)\n\n" +
				"func TestQueueIsFIFO(t *testing.T) {\n\trapid.Check(t, func(t *rapid.T) {\n\t\txs := qtest.Values(t)\n\t\tvar q Queue\n" +
				"\t\tfor _, x := range xs {\n\t\t\tq.Push(x)\n\t\t}\n\t\tfor i, want := range xs {\n\t\t\tif got := q.Pop(); got != want {\n" +
				"\t\t\t\tt.Fatalf(\"pop %d: got %d, want %d\", i, got, want)\n\t\t\t}\n\t\t}\n\t})\n}\n",
		},
		names: []string{"queue_test.go::TestQueueIsFIFO"},
		bug: map[string]string{"queue.go": strings.Replace(queue, "\tx := q.xs[0]\n\tq.xs = q.xs[1:]\n",
			"\tx := q.xs[len(q.xs)-1]\n\tq.xs = q.xs[:len(q.xs)-1]\n", 1)},
		triples: 1,
	})
}

// initFakeJestBin stands in for "jest --ci FILE -t PATTERN [--json
// --outputFile=F]", for flakegate's tests: it loads package.json's
// jest.setupFilesAfterEnv, then FILE, runs the tests whose full name
// matches, prints jest's summary line ("Tests:       1 passed, 1 skipped,
// 2 total") and writes jest's JSON report to F.
const initFakeJestBin = `#!/usr/bin/env node
const path = require("path");
const args = process.argv.slice(2);
let file, pattern, outFile;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "-t") pattern = new RegExp(args[++i]);
  else if (args[i].startsWith("--outputFile=")) outFile = args[i].slice("--outputFile=".length);
  else if (!args[i].startsWith("--")) file = args[i];
}
const tests = [], prefix = [];
global.describe = (name, fn) => { prefix.push(name); try { fn(); } finally { prefix.pop(); } };
global.test = global.it = (name, fn) => tests.push({ name: [...prefix, name].join(" "), fn });
global.expect = (v) => ({ toBe(w) { if (v !== w) throw new Error("expected " + w + ", got " + v); } });
const pkg = require(path.resolve("package.json"));
for (const f of (pkg.jest && pkg.jest.setupFilesAfterEnv) || []) require(path.resolve(f.replace("<rootDir>", ".")));
require(path.resolve(file));
let passed = 0, failed = 0, skipped = 0;
const results = [];
for (const t of tests) {
  if (pattern && !pattern.test(t.name)) { skipped++; results.push({ fullName: t.name, status: "pending" }); continue; }
  const start = Date.now();
  try { t.fn(); passed++; console.log("  ✓ " + t.name); results.push({ fullName: t.name, status: "passed", duration: Date.now() - start }); }
  catch (e) { failed++; console.log("  ✕ " + t.name + "\n" + e.message); results.push({ fullName: t.name, status: "failed", duration: Date.now() - start, failureMessages: [e.message] }); }
}
// --json --outputFile=F: jest's JSON report.
if (outFile) require("fs").writeFileSync(outFile, JSON.stringify({ numTotalTests: tests.length,
  testResults: [{ name: path.resolve(file), status: failed ? "failed" : "passed", assertionResults: results }] }));
const parts = [];
if (failed) parts.push(failed + " failed");
if (passed) parts.push(passed + " passed");
if (skipped) parts.push(skipped + " skipped");
console.log("Tests:       " + parts.join(", ") + ", " + tests.length + " total");
process.exit(failed ? 1 : 0);
`

// initFakeFastCheckCJS is fakeFastCheck as a CommonJS module (jest's).
func initFakeFastCheckCJS() string {
	s := strings.ReplaceAll(fakeFastCheck, "export function ", "function ")
	s = strings.ReplaceAll(s, "export const ", "const ")
	return strings.Replace(s, "export default {", "module.exports = {", 1)
}

// TestInitLayoutJest: jest and fast-check against a stand-in
// node_modules (the registry is not needed): init writes no marker
// (jest's own summary and report judge it), and both checks run as written.
func TestInitLayoutJest(t *testing.T) {
	t.Parallel()
	sum := "function sum(a, b) { return a + b; }\nmodule.exports = { sum };\n"
	r := runLayout(t, layoutCase{
		need: "node",
		files: map[string]string{
			"README.md":     "sum\n",
			"package.json":  `{"name": "sum", "private": true, "devDependencies": {"jest": "29.7.0", "fast-check": "3.23.2"}, "jest": {"setupFilesAfterEnv": ["<rootDir>/jest.setup.js"]}}` + "\n",
			"jest.setup.js": strings.Replace(seedHook, `import fc from "fast-check";`, `const fc = require("fast-check");`, 1),
			"src/sum.js":    sum,
			"test/sum.test.js": "const fc = require(\"fast-check\");\nconst { sum } = require(\"../src/sum\");\n" +
				"describe(\"sum\", () => {\n  test(\"commutes\", () => { fc.assert(fc.property(fc.integer(), fc.integer(), (a, b) => sum(a, b) === sum(b, a))); });\n});\n",
			"node_modules/jest/package.json":       `{"name": "jest", "bin": {"jest": "bin/jest.js"}}` + "\n",
			"node_modules/jest/bin/jest.js":        initFakeJestBin,
			"node_modules/.bin/jest":               "symlink:../jest/bin/jest.js",
			"node_modules/fast-check/package.json": `{"name": "fast-check", "main": "index.js"}` + "\n",
			"node_modules/fast-check/index.js":     initFakeFastCheckCJS(),
		},
		names:   []string{"test/sum.test.js::sum commutes"},
		bug:     map[string]string{"src/sum.js": "function sum(a, b) { return a > 0 ? a - b : a + b; }\nmodule.exports = { sum };\n"},
		triples: 1,
	})
	cfg := readConfig(t, r)
	if p := cfg.Properties[0]; p.PassMarker != nil || p.FailMarker != nil || !p.Batch {
		t.Errorf("pass marker %v, fail marker %v, batch %v: jest's own summary and report judge it, in batches", p.PassMarker, p.FailMarker, p.Batch)
	}
}

// readConfig loads the flakegate.yaml init wrote in r.
func readConfig(t *testing.T, r *repo) *fgconfig.Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.dir, "flakegate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fgconfig.Load(raw, "flakegate.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	return cfg
}

// TestInitLayoutVitest: vitest and fast-check against a stand-in
// node_modules (the registry is not needed): the config init writes runs
// as written, with no marker: vitest's summary and report judge it, and its
// two properties batch.
func TestInitLayoutVitest(t *testing.T) {
	t.Parallel()
	r := runLayout(t, layoutCase{
		need:  "node",
		files: initVitestProject(),
		names: []string{"src/sort.test.js::sortNumbers orders its output"}, // init tries one per program
		// One element too many, sorted as strings: both properties fail.
		bug:     map[string]string{"src/sort.js": "export const sortNumbers = (xs) => [...xs, 0].sort();\n"},
		triples: 2,
	})
	for _, p := range readConfig(t, r).Properties {
		if p.PassMarker != nil || p.FailMarker != nil || !p.Batch {
			t.Errorf("%s: pass marker %v, fail marker %v, batch %v", p.ID(), p.PassMarker, p.FailMarker, p.Batch)
		}
	}
}
