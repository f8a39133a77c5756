package e2e_test

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// The attacks of issue 41: a regression that a line around a test hides,
// with no test file, conftest or config in the diff. Each merged with
// exit 0, every triple PASS, as root and as a normal user. The graded
// tree now holds the base's version of that line (package grade): the
// base's test fails on the patch's code, and since the patch changed what
// grades it, the triple is CONTAMINATED, its reason and its record
// naming the edit. Each runs as root on overlays and as a user of its own.

// attack41NonRoot is the normal user these attacks run as: a uid of its
// own, so that its processes count against no other test's limits.
var attack41NonRoot = mode16{name: "nonroot", uid: 61545}

var attack41Modes = []mode16{rootOverlay, attack41NonRoot}

// attack41Config gates one suite with one order seed.
func attack41Config(framework, path string) string {
	return "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nsuites:\n  - path: " + path + "\n    framework: " + framework +
		"\n    seeds: [1]\n    wall_budget: 120s\n"
}

// attack41Rejected asserts the attack is rejected: exit 1, every triple
// of the hidden regression CONTAMINATED with a reason that names the
// edit, no SCHEDULER and no freeze; classify of each stored record gives
// the check's label, and the spec's listing (where the spec is here)
// rejects it too.
func attack41Rejected(t *testing.T, a *a16, cr *checkRun, want map[string]string, edit string) {
	t.Helper()
	if cr.code != 1 {
		t.Fatalf("[%s] ATTACK: the hidden regression merged, exit %d\n%s", a.m.name, cr.code, cr)
	}
	got := map[string]string{}
	for i, res := range cr.summary.Results {
		got[res.Name] = string(res.Label)
		if res.Label == flakegate.Scheduler || res.Freeze {
			t.Errorf("[%s] %s: %s freeze=%v", a.m.name, res.Name, res.Label, res.Freeze)
		}
		if res.Label != flakegate.Contaminated {
			continue
		}
		if !strings.HasPrefix(res.Reason, "the patch changes "+edit) || !strings.HasSuffix(res.Reason, "fails on the patch's code: split that edit into another review") {
			t.Errorf("[%s] %s: reason %q, want it to name %s", a.m.name, res.Name, res.Reason, edit)
		}
		if edits := graderEdits(t, cr, i); len(edits) != 1 || edits[0] != edit {
			t.Errorf("[%s] %s: grader_edits %v, want [%s]", a.m.name, res.Name, edits, edit)
		}
		if l := classifyRecord(t, a.repo, cr, i); l != string(res.Label) {
			t.Errorf("[%s] %s: classify of the stored record says %s, the check %s", a.m.name, res.Name, l, res.Label)
		}
		if l, ok := listingLabel(t, res.Record); ok && (l == "PASS" || l == "SCHEDULER") {
			t.Errorf("[%s] %s: the spec's listing says %s of the record", a.m.name, res.Name, l)
		}
	}
	for name, label := range want {
		if got[name] != label {
			t.Errorf("[%s] %s is %q, want %s (all: %v)", a.m.name, name, got[name], label, got)
		}
	}
}

// attack41 runs one attack in every mode: a repository of base, the
// candidate tag with cand, and the check rejecting it (attack41Rejected).
func attack41(t *testing.T, base map[string]string, tag string, cand, want map[string]string, edit string) {
	t.Helper()
	forModes(t, attack41Modes, func(t *testing.T, m mode16) {
		a := newA16Files(t, m, base)
		a.candidate(tag, cand)
		cr := a.run(t, tag, "")
		attack41Rejected(t, a, cr, want, edit)
	})
}

const goldenRender = "package render\n\nimport \"strings\"\n\n// Render lists items.\nfunc Render(items []string) string { return strings.Join(items, \", \") }\n"

const goldenTest = `package render

import (
	"os"
	"testing"
)

func TestRender(t *testing.T) {
	want, err := os.ReadFile("testdata/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := Render([]string{"a", "b", "c"}); got != string(want) {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}

func TestEmpty(t *testing.T) {
	if Render(nil) != "" {
		t.Fatal("not empty")
	}
}
`

// TestAttack41GoldenFile: the patch breaks Render and rewrites the golden
// file under testdata/ that the base's test compares against (init
// writes go suites without a fixture, so nothing watched it). The graded
// tree holds the base's golden file: TestRender fails, CONTAMINATED,
// naming render/testdata/golden.txt; TestEmpty PASSes.
func TestAttack41GoldenFile(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: runs flakegate checks")
	}
	needTool(t, "go")
	attack41(t, map[string]string{
		"go.mod":                     "module example.com/golden\n\ngo 1.22\n",
		"flakegate.yaml":             attack41Config("go", "./..."),
		"render/render.go":           goldenRender,
		"render/render_test.go":      goldenTest,
		"render/testdata/golden.txt": "a, b, c",
	}, "golden", map[string]string{
		"render/render.go":           strings.Replace(goldenRender, `", "`, `"; "`, 1),
		"render/testdata/golden.txt": "a; b; c",
	}, map[string]string{"TestRender": "CONTAMINATED", "TestEmpty": "PASS"}, "render/testdata/golden.txt")
}

const loopDouble = "package double\n\n// Double is 2i.\nfunc Double(i int) int { return 2 * i }\n"

// loopTest's closures capture the loop variable: with go.mod at go 1.22
// or later each case is its own, before that they all see the last.
const loopTest = `package double

import "testing"

func TestDouble(t *testing.T) {
	cases := []struct{ in, want int }{{1, 2}, {2, 4}, {3, 6}}
	var checks []func() bool
	for _, c := range cases {
		checks = append(checks, func() bool { return Double(c.in) == c.want })
	}
	for i, ok := range checks {
		if !ok() {
			t.Fatalf("case %d is wrong", i)
		}
	}
}
`

// TestAttack41GoLine: the patch breaks Double(1) and lowers go.mod's go
// line from 1.22 to 1.21: the base's table test then compiles with the
// old loop-variable rules, every closure checks the last case, and the
// broken one is never checked. The graded tree's go.mod is the
// candidate's with the base's go line: the case is checked, TestDouble
// fails, CONTAMINATED, naming go.mod.
func TestAttack41GoLine(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: runs flakegate checks")
	}
	needTool(t, "go")
	attack41(t, map[string]string{
		"go.mod":                "module example.com/double\n\ngo 1.22\n",
		"flakegate.yaml":        attack41Config("go", "./..."),
		"double/double.go":      loopDouble,
		"double/double_test.go": loopTest,
	}, "goline", map[string]string{
		"go.mod":           "module example.com/double\n\ngo 1.21\n",
		"double/double.go": "package double\n\n// Double is 2i.\nfunc Double(i int) int {\n\tif i == 1 {\n\t\treturn 3\n\t}\n\treturn 2 * i\n}\n",
	}, map[string]string{"TestDouble": "CONTAMINATED"}, "go.mod")
}

const initCalc = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"

const initTest = "from calc import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\ndef test_high():\n    assert clamp(11, 0, 10) == 10\n\n\ndef test_low():\n    assert clamp(-1, 0, 10) == 0\n"

// TestAttack41TestsInit: the patch breaks clamp and has tests/__init__.py
// (neither a test file nor watched for tests that import nothing from
// tests) put the old function back for the tests only. The graded tree
// holds the base's tests/__init__.py: test_high and test_low fail,
// CONTAMINATED, naming it; test_inside PASSes.
func TestAttack41TestsInit(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: runs flakegate checks")
	}
	needProgram(t, "python3")
	attack41(t, map[string]string{
		"flakegate.yaml":     attack41Config("pytest", "tests"),
		"calc.py":            initCalc,
		"tests/__init__.py":  "\"\"\"The tests of calc.\"\"\"\n",
		"tests/test_calc.py": initTest,
	}, "init", map[string]string{
		"calc.py":           "def clamp(x, lo, hi):\n    return x\n",
		"tests/__init__.py": "import calc\n\n\ndef _clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ncalc.clamp = _clamp\n",
	}, map[string]string{"test_inside": "PASS", "test_high": "CONTAMINATED", "test_low": "CONTAMINATED"}, "tests/__init__.py")
}
