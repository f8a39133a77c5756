package e2e_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// The fourth round's attacks on the batches and the suites (issue 42,
// attacks 1 to 4): the framework taken from the tree, a report the test
// process writes itself, and tests go test runs but the suite did not
// gate. Each has a control: the same regression without the trick is
// rejected.

var attack42Modes = []mode16{rootOverlay, rootReset, nonRoot}

// goSuite42 is a Go module gated by one suite: package calc with Add and
// Sub, two tests, a fuzz target, an example with output, one without and
// a benchmark.
func goSuite42() map[string]string {
	return map[string]string{
		"go.mod":    "module example.com/calc\n\ngo 1.21\n",
		"README.md": "calc\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
suites:
  - path: "./..."
    framework: go
    seeds: [1]
    wall_budget: 120s
`,
		"calc/calc.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n",
		"calc/calc_test.go": `package calc

import (
	"fmt"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2+3 is not 5")
	}
}

func TestSub(t *testing.T) {
	if Sub(5, 3) != 2 {
		t.Fatal("5-3 is not 2")
	}
}

func FuzzAdd(f *testing.F) {
	f.Add(1, 2)
	f.Fuzz(func(t *testing.T, a, b int) {
		if Add(a, b) != b+a {
			t.Fatal("Add is not commutative")
		}
	})
}

func ExampleSub() {
	fmt.Println(Sub(9, 4))
	// Output: 5
}

func ExampleAdd_unchecked() {
	fmt.Println(Add(1, 1))
}

func BenchmarkAdd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Add(1, 2)
	}
}
`,
	}
}

// brokenSub is the regression: Sub is off by one.
const brokenSub = "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts, wrongly.\nfunc Sub(a, b int) int { return a - b + 1 }\n"

// forgeInit is attack 3: an init of the code under test that prints a
// framed run and pass for every name the -test.run pattern holds, then
// exits 0 before the testing package runs any test.
const forgeInit = `package calc

import (
	"fmt"
	"os"
	"strings"
)

func init() {
	for _, a := range os.Args[1:] {
		v, ok := strings.CutPrefix(a, "-test.run=")
		if !ok {
			continue
		}
		v = strings.TrimSuffix(strings.TrimPrefix(v, "^("), ")$")
		for _, n := range strings.Split(strings.Trim(v, "^$"), "|") {
			fmt.Printf("\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", n, n)
		}
		fmt.Println("PASS")
		os.Exit(0)
	}
}
`

// TestAttack42GoInitForgesReport (attack 3): the regression breaks Sub
// and an init in the product code prints go test's framed run and pass
// lines for every test the batch selects, then exits 0 before any test
// runs. Every triple was PASS and the check exited 0, as root and as a
// normal user. Each batch now carries known answers (a fuzz target that
// must pass and log its nonce, one that must fail with its nonce, in a
// test file drawn for the attempt): the forged report shows neither, so
// every triple is INCOMPLETE "the test process wrote its own report",
// and the transcript shows the known answers. The control (the same
// regression without the init) is PROPERTY.
func TestAttack42GoInitForgesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	needTool(t, "go")
	forModes(t, attack42Modes, func(t *testing.T, m mode16) {
		a := newA16Files(t, m, goSuite42())
		a.candidate("forge", map[string]string{"calc/calc.go": brokenSub, "calc/forge.go": forgeInit})
		a.candidate("control", map[string]string{"calc/calc.go": brokenSub})
		cr := a.run(t, "forge", "")
		if cr.code != 1 || len(cr.summary.Results) != 4 {
			t.Fatalf("[%s] the forged report: want exit 1 and 4 triples\n%s", m.name, cr)
		}
		for i, res := range cr.summary.Results {
			if res.Label != flakegate.Incomplete || !strings.Contains(res.Reason, "the test process wrote its own report") {
				t.Errorf("[%s] %s: %s %q, want INCOMPLETE: the test process wrote its own report", m.name, res.Name, res.Label, res.Reason)
			}
			known := knownAnswersOf(t, cr, i)
			if len(known) != 2 || known[0].Want == known[1].Want {
				t.Errorf("[%s] %s: the transcript shows the known answers %+v, want one to pass and one to fail", m.name, res.Name, known)
			}
		}
		ctl := a.run(t, "control", "")
		if got := notPass(ctl); ctl.code != 1 || !slices.Equal(got, []string{"ExampleSub 1 PROPERTY", "TestSub 1 PROPERTY"}) {
			t.Fatalf("[%s] control: want exit 1 and ExampleSub, TestSub PROPERTY, got %v\n%s", m.name, got, ctl)
		}
	})
}

// TestAttack42GoExamples (attack 4): ExampleSub (with an output comment)
// fails under go test on the regression, but the suite gated Test and
// Fuzz functions only: exit 0 and no "not gated" line. An example with
// output is now a triple like a test (PROPERTY here); the example
// without output (compiled, never run) and the benchmark (run only with
// -bench) are said on "not gated" lines.
func TestAttack42GoExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	needTool(t, "go")
	forModes(t, []mode16{rootOverlay, nonRoot}, func(t *testing.T, m mode16) {
		files := goSuite42()
		files["calc/calc_test.go"] = strings.Replace(files["calc/calc_test.go"], "if Sub(5, 3) != 2", "if Sub(5, 3) == 99", 1) // TestSub cannot see it
		a := newA16Files(t, m, files)
		a.candidate("regress", map[string]string{"calc/calc.go": brokenSub})
		cr := a.run(t, "regress", "")
		if got := notPass(cr); cr.code != 1 || !slices.Equal(got, []string{"ExampleSub 1 PROPERTY"}) || len(cr.summary.Results) != 4 {
			t.Fatalf("[%s] want exit 1, ExampleSub PROPERTY among 4 triples, got %v\n%s", m.name, got, cr)
		}
		for _, want := range []string{
			`suites[0]: 1 function is not gated: benchmarks (go test runs them only with -bench) ("./calc BenchmarkAdd")`,
			`suites[0]: 1 function is not gated: examples without an output comment (go test compiles them and runs none) ("./calc ExampleAdd_unchecked")`,
		} {
			if !strings.Contains(cr.stderr, want) {
				t.Errorf("[%s] no %q on stderr\n%s", m.name, want, cr.stderr)
			}
		}
	})
}

// knownAnswersOf is what the transcript of result i shows of the known
// answers of its candidate's first attempt (read from the JSON itself,
// so that the test also runs against a flakegate without them).
func knownAnswersOf(t *testing.T, cr *checkRun, i int) []knownAnswer42 {
	t.Helper()
	raw, err := os.ReadFile(cr.record(t, i).TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		var ev struct {
			Type, Side string
			Index      int
			Batch      *struct {
				KnownAnswers []knownAnswer42 `json:"known_answers"`
			}
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "attempt_end" && ev.Side == "candidate" && ev.Index == 0 && ev.Batch != nil {
			return ev.Batch.KnownAnswers
		}
	}
	return nil
}

type knownAnswer42 struct {
	Test, Want, Nonce, Result, Why string
	Shown                          bool
}

// pySuite42 is a pytest project gated by one suite: calc.add and
// calc.sub, tested in tests/test_calc.py.
func pySuite42() map[string]string {
	return map[string]string{
		"README.md": "calc\n",
		"calc.py":   "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
suites:
  - path: tests
    framework: pytest
    seeds: [3]
    wall_budget: 120s
`,
		"tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n",
	}
}

// pyBrokenSub is the pytest project's regression: sub is off by one.
const pyBrokenSub = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b + 1\n"

// pyPassPlugin is a pytest plugin that turns every failed report into a
// pass.
const pyPassPlugin = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    out = yield
    r = out.get_result()
    if r.failed:
        r.outcome = "passed"
`

// pyFakePytest is a pytest package of the patch's own: as `python -m
// pytest` it writes a JUnit file and a short summary in which every node
// id on its command line passed, and exits 0.
const pyFakePytest = `import sys

nodes = [a for a in sys.argv[1:] if "::" in a]
junit = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")]
cases = ""
for n in nodes:
    f, name = n.split("::", 1)
    cases += '<testcase classname="%s" name="%s" file="%s" time="0.001"/>' % (f[:-3].replace("/", "."), name, f)
    print(n + " PASSED")
if junit:
    with open(junit[0], "w") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="%d">%s</testsuite></testsuites>' % (len(nodes), cases))
print("=========================== short test summary info ============================")
for n in nodes:
    print("PASSED " + n)
print("%d passed" % len(nodes))
sys.exit(0)
`

// TestAttack42PytestFromTree (attacks 1 and 2): python -m pytest put the
// tree first on sys.path. A *.dist-info folder the patch commits
// declared a pytest11 plugin that pytest loaded, which turned failures
// into passes; a top-level pytest/ package of the patch ran instead of
// pytest and wrote a report of passes. With the regression in sub, every
// triple was PASS and the check exited 0, as root and as a normal user.
// pytest now starts through flakegate's bootstrap: the tree comes after
// the standard library, importlib.metadata never looks into it, and
// pytest, its plugins and pluggy come from outside it. Both are PROPERTY
// for test_sub, as their control (the regression alone) is.
func TestAttack42PytestFromTree(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	needTool(t, "pytest")
	forModes(t, attack42Modes, func(t *testing.T, m mode16) {
		a := newA16Files(t, m, pySuite42())
		a.candidate("plugin", map[string]string{"calc.py": pyBrokenSub, "evilplugin.py": pyPassPlugin,
			"evil-1.0.dist-info/METADATA":         "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
			"evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evilplugin\n"})
		a.candidate("package", map[string]string{"calc.py": pyBrokenSub, "pytest/__init__.py": pyFakePytest, "pytest/__main__.py": pyFakePytest})
		a.candidate("control", map[string]string{"calc.py": pyBrokenSub})
		for _, tag := range []string{"plugin", "package", "control"} {
			cr := a.run(t, tag, "")
			if got := notPass(cr); cr.code != 1 || !slices.Equal(got, []string{"test_sub 3 PROPERTY"}) {
				t.Errorf("[%s] %s: want exit 1 and test_sub PROPERTY, got %v\n%s", m.name, tag, got, cr)
			}
		}
	})
}

// pyInProcessForger is code under test that, when a test imports it,
// finds pytest's plugin manager among the live objects and registers a
// plugin that turns every failed report into a pass: a forger inside the
// process, from the framework's own environment.
const pyInProcessForger = pyBrokenSub + `

import gc

import pytest


class _Forger:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        out = yield
        r = out.get_result()
        if r.failed:
            r.outcome = "passed"


for _o in gc.get_objects():
    if type(_o).__name__ == "PytestPluginManager":
        _o.register(_Forger(), "forger")
        break
`

// TestAttack42PytestForgerInProcess: the regression's own module, once a
// test imports it, registers a plugin with the running pytest that turns
// every failure into a pass. The framework is the toolchain's; the
// forger is code under test in the process. It also turns the batch's
// planted failing test into a pass: the known answers do not show as
// planted, and every triple is INCOMPLETE, "the test process wrote its
// own report" (before known answers: PASS, exit 0).
func TestAttack42PytestForgerInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	needTool(t, "pytest")
	forModes(t, []mode16{rootOverlay, nonRoot}, func(t *testing.T, m mode16) {
		a := newA16Files(t, m, pySuite42())
		a.candidate("forger", map[string]string{"calc.py": pyInProcessForger})
		cr := a.run(t, "forger", "")
		if cr.code != 1 || len(cr.summary.Results) != 2 {
			t.Fatalf("[%s] want exit 1 and 2 triples\n%s", m.name, cr)
		}
		for i, res := range cr.summary.Results {
			if res.Label != flakegate.Incomplete || !strings.Contains(res.Reason, "the test process wrote its own report") {
				t.Errorf("[%s] %s: %s %q, want INCOMPLETE: the test process wrote its own report", m.name, res.Name, res.Label, res.Reason)
			}
			if known := knownAnswersOf(t, cr, i); len(known) != 2 {
				t.Errorf("[%s] %s: the transcript shows the known answers %+v", m.name, res.Name, known)
			}
		}
	})
}

// jsFakeFramework is a stand-in for jest's or vitest's entry script: it
// writes a JSON report in which every name of the -t pattern passed, in
// every test file on its command line, and exits 0 (and, as vitest's
// list, lists no test).
const jsFakeFramework = `const args = process.argv.slice(2);
const list = args.find((a) => a.startsWith("--json="));
if (args[0] === "list" && list) {
  FS.writeFileSync(list.slice("--json=".length), "[]");
  process.exit(0);
}
const out = (args.find((a) => a.startsWith("--outputFile=")) || "").slice("--outputFile=".length);
const t = args[args.indexOf("-t") + 1] || "";
const names = t.replace(/^\^\(/, "").replace(/\)\$$/, "").split("|").map((n) => n.replace(/\\(.)/g, "$1"));
const files = args.filter((a) => /\.(test|spec)\.[cm]?[jt]sx?$/.test(a));
const report = { numTotalTests: names.length * files.length, testResults: files.map((f) => ({
  name: process.cwd() + "/" + f, status: "passed", message: "",
  assertionResults: names.map((n) => ({ fullName: n, title: n, ancestorTitles: [], status: "passed", duration: 1, failureMessages: [] })),
})) };
FS.writeFileSync(out, JSON.stringify(report));
`

// TestAttack42JSFrameworkFromTree: a js suite's commands run
// node_modules/vitest and node_modules/jest of the tree; a patch that
// puts its own framework there (a folder in place of the link to the
// installed one) wrote a report of passes for a regression: PASS, exit
// 0. The graded tree now takes node_modules from the base: the real
// framework runs, and the regression is PROPERTY, as its control is.
func TestAttack42JSFrameworkFromTree(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			cfg := "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nsuites:\n  - path: tests\n    framework: " + fw.name + "\n    seeds: [3]\n    wall_budget: 60s\n"
			r := newRepo(t, jsProject(t, fw, cfg, map[string]string{
				"src/calc.js": jsSuiteCalc,
				"tests/calc.test.js": "import { test, expect } from \"vitest\";\nimport { add, neg } from \"../src/calc.js\";\n\n" +
					"test(\"add\", () => {\n  expect(add(2, 3)).toBe(5);\n});\n\ntest(\"neg\", () => {\n  expect(neg(2)).toBe(-2);\n});\n",
			}))
			broken := fw.source(strings.Replace(jsSuiteCalc, "a + b", "a - b", 1))
			entry, fake := "node_modules/vitest/vitest.mjs", "import * as FS from \"node:fs\";\n"+jsFakeFramework
			if fw.name == "jest" {
				entry, fake = "node_modules/jest/bin/jest.js", "const FS = require(\"fs\");\n"+jsFakeFramework
			}
			pkg := strings.Split(entry, "/")[1]
			r.candidate("fake", map[string]string{"src/calc.js": broken, "node_modules/" + pkg: "", entry: fake,
				"node_modules/" + pkg + "/package.json": `{"name": "` + pkg + `", "version": "0.0.0"}` + "\n"})
			r.candidate("control", map[string]string{"src/calc.js": broken})
			for _, tag := range []string{"fake", "control"} {
				cr := r.check("--base", "base", "--candidate", tag)
				if got := notPass(cr); cr.code != 1 || !slices.Equal(got, []string{"add 3 PROPERTY"}) {
					t.Errorf("%s: want exit 1 and add PROPERTY, got %v\n%s", tag, got, cr)
				}
			}
		})
	}
}
