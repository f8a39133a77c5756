package e2e_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// orderModule is a Go module whose package a has an order pair,
// TestTouch and TestClean, among four plain tests, and whose package b
// has three plain tests; one go suite gates both with order seeds
// (seedsKey is the suite's seeds or random_seeds line).
func orderModule(seedsKey string) map[string]string {
	files := map[string]string{
		"go.mod":    "module example.com/order\n\ngo 1.21\n",
		"README.md": "order module\n",
		"flakegate.yaml": "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: \"./...\"\n    framework: go\n    " +
			seedsKey + "\n    wall_budget: 120s\n",
		"a/a.go": "package a\n\nvar touched bool\n\n// Touch is a no-op.\nfunc Touch() {}\n\n// Clean says nothing touched the package.\nfunc Clean() bool { return !touched }\n",
		"b/b.go": "package b\n\n// Value is i.\nfunc Value(i int) int { return i }\n",
	}
	var ta, tb strings.Builder
	ta.WriteString("package a\n\nimport \"testing\"\n\nfunc TestTouch(t *testing.T) { Touch() }\n\n" +
		"func TestClean(t *testing.T) {\n\tif !Clean() {\n\t\tt.Fatal(\"touched by a test before\")\n\t}\n}\n")
	tb.WriteString("package b\n\nimport \"testing\"\n")
	for i := range 4 {
		fmt.Fprintf(&ta, "\nfunc TestA%d(t *testing.T) {}\n", i)
	}
	for i := range 3 {
		fmt.Fprintf(&tb, "\nfunc TestB%d(t *testing.T) {\n\tif Value(%d) != %d {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n", i, i, i)
	}
	files["a/a_test.go"], files["b/b_test.go"] = ta.String(), tb.String()
	return files
}

// leakyTouch is the candidate's a.go: Touch leaves state that TestClean
// sees when TestTouch ran before it.
const leakyTouch = "package a\n\nvar touched bool\n\n// Touch marks the package.\nfunc Touch() { touched = true }\n\n// Clean says nothing touched the package.\nfunc Clean() bool { return !touched }\n"

// replayOrderNote is the replay's note on the order its batch ran in.
var replayOrderNote = regexp.MustCompile(`order: (\d+) tests, tests_sha256 ([0-9a-f]{64})`)

// checkSuiteReproduce runs the reproduce line of suite result i of cr as
// printed and wants exit want, the line that says the test's own result
// in its batch of members, and the record's order in the replay's note.
func checkSuiteReproduce(t *testing.T, cr *checkRun, i, want, members int) string {
	t.Helper()
	res := cr.summary.Results[i]
	if !strings.Contains(res.Reproduce, " --suite ") {
		t.Fatalf("%s seed %s: the reproduce line names no suite: %s", res.ID(), res.Seed, res.Reproduce)
	}
	code, out := runReproduce(t, res.Reproduce)
	verb := map[int]string{0: "pass", 1: "fail"}[want]
	judged := fmt.Sprintf("replay: %s: %s %sed in the batch of %d tests", verb, res.ID(), map[int]string{0: "pass", 1: "fail"}[want], members)
	if code != want || !strings.Contains(out, judged) {
		t.Fatalf("%s seed %s (%s): reproduce exited %d, want %d saying %q: %s\n%s", res.ID(), res.Seed, res.Label, code, want, judged, res.Reproduce, out)
	}
	rec := cr.record(t, i)
	m := replayOrderNote.FindStringSubmatch(out)
	if rec.Order == nil || m == nil || m[1] != fmt.Sprint(rec.Order.Tests) || m[2] != rec.Order.TestsSHA256 {
		t.Errorf("%s seed %s: the replay's order %v is not the record's %+v\n%s", res.ID(), res.Seed, m, rec.Order, out)
	}
	return out
}

// TestSuiteReproduceGo: a go suite's triple that fails for the order of
// its seed (TestClean after TestTouch) is PROPERTY for exactly those
// seeds; its reproduce line, run as printed, replays the whole package
// with the seed in the sandbox and fails for a failing seed and passes
// for a passing one (TestClean alone would pass with every seed); the
// replay's order is the record's; the line of TestTouch in the failing
// batch passes (the test's own result, not the batch's exit status); on
// the base the failing seed passes.
func TestSuiteReproduceGo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	// Two seeds that split TestClean's orders: 5 runs TestTouch before it
	// (as 1 to 4 do), 6 after.
	r := newRepo(t, orderModule("seeds: [5, 6]"))
	r.candidate("leak", map[string]string{"a/a.go": leakyTouch})
	cr := r.check("--base", "base", "--candidate", "leak")
	if cr.summary == nil || len(cr.summary.Results) != 9*2 {
		t.Fatalf("want 18 triples\n%s", cr)
	}
	fail, pass := -1, -1
	for i, res := range cr.summary.Results {
		switch {
		case res.Name == "TestClean" && res.Label == flakegate.Property:
			fail = i
		case res.Name == "TestClean" && res.Label == flakegate.Pass:
			pass = i
		case res.Label != flakegate.Pass:
			t.Errorf("%s seed %s: %s, want PASS", res.ID(), res.Seed, res.Label)
		}
	}
	if fail < 0 || pass < 0 || cr.code != 1 {
		t.Fatalf("the seeds do not split TestClean's orders (failing %d, passing %d): %v\n%s", fail, pass, notPass(cr), cr)
	}
	checkSuiteReproduce(t, cr, fail, 1, 6)
	checkSuiteReproduce(t, cr, pass, 0, 6)
	// TestTouch in the batch that fails TestClean: the batch exits 1, the
	// replay says TestTouch's own result, a pass.
	for i, res := range cr.summary.Results {
		if res.Name == "TestTouch" && res.Seed == cr.summary.Results[fail].Seed {
			if out := checkSuiteReproduce(t, cr, i, 0, 6); !strings.Contains(out, "TestTouch passed in the batch of 6 tests (go exited 1)") {
				t.Errorf("TestTouch's replay does not say the batch exited 1:\n%s", out)
			}
		}
	}
	// The same triple on the base (its own reproduce line with --rev the
	// base) passes: the failure is the candidate's.
	base := r.git("rev-parse", "base")
	line := strings.Replace(cr.summary.Results[fail].Reproduce, "--rev "+cr.summary.Candidate, "--rev "+base, 1)
	if code, out := runReproduce(t, line); code != 0 || !strings.Contains(out, "replay: pass: a/a_test.go::TestClean passed in the batch of 6 tests") {
		t.Errorf("on the base: exit %d\n%s", code, out)
	}
	// Without --suite the line names a property the config does not have.
	line = strings.Replace(cr.summary.Results[fail].Reproduce, "--suite ./... ", "", 1)
	if code, out := runReproduce(t, line); code != 2 || !strings.Contains(out, "no property a/a_test.go::TestClean") {
		t.Errorf("without --suite: exit %d\n%s", code, out)
	}
	// A test the base does not list is refused, naming the suite.
	line = strings.Replace(cr.summary.Results[fail].Reproduce, "--name TestClean", "--name TestNope", 1)
	if code, out := runReproduce(t, line); code != 2 || !strings.Contains(out, "the base lists no test a/a_test.go::TestNope") {
		t.Errorf("unknown test: exit %d\n%s", code, out)
	}
}

// TestSuiteReproducePytest: the same for a pytest suite: test_read is
// PROPERTY for the seeds that put test_prime before it, and its
// reproduce line replays the suite's whole batch (10 node ids in the
// seed's order) and fails for such a seed, passes for another.
func TestSuiteReproducePytest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := pySuiteRepo(t)
	r.candidate("order", map[string]string{"calc.py": strings.Replace(pyCalc, "cache['k'] = 1", "cache['k'] = 2", 1)})
	cr := r.check("--base", "base", "--candidate", "order")
	fail, pass := -1, -1
	for i, res := range cr.summary.Results {
		switch {
		case res.Name == "test_read" && res.Label == flakegate.Property:
			fail = i
		case res.Name == "test_read" && res.Label == flakegate.Pass:
			pass = i
		}
	}
	if fail < 0 || pass < 0 {
		t.Fatalf("the seeds do not split test_read's orders: %v\n%s", notPass(cr), cr)
	}
	out := checkSuiteReproduce(t, cr, fail, 1, 10)
	if !strings.Contains(out, "-p no:randomly") || !strings.Contains(out, "tests/test_order.py::test_prime") {
		t.Errorf("the replay's command is not the suite's batch:\n%s", out)
	}
	checkSuiteReproduce(t, cr, pass, 0, 10)
}

// TestSuiteDrawnSeeds: random_seeds on a go suite draws its order seeds
// once for the suite: every test of both packages gets the same drawn
// seeds (as they get the listed ones), each a process per package; and
// the reproduce line of a drawn seed replays it like a listed one.
func TestSuiteDrawnSeeds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, orderModule("random_seeds: 2"))
	r.candidate("leak", map[string]string{"a/a.go": leakyTouch})
	cr := r.check("--base", "base", "--candidate", "leak")
	if cr.summary == nil || len(cr.summary.Results) != 9*2 {
		t.Fatalf("want 18 triples (9 tests, 2 drawn seeds)\n%s", cr)
	}
	seeds := map[string][]string{}
	for i, res := range cr.summary.Results {
		if rec := cr.record(t, i); rec.SeedOrigin != "drawn" {
			t.Errorf("%s seed %s: seed_origin %q, want drawn", res.ID(), res.Seed, rec.SeedOrigin)
		}
		seeds[res.ID()] = append(seeds[res.ID()], res.Seed.String())
	}
	want := strings.Join(seeds["a/a_test.go::TestClean"], ",")
	for id, s := range seeds {
		if got := strings.Join(s, ","); got != want {
			t.Errorf("%s drew %s, TestClean %s: a suite draws one set of order seeds", id, got, want)
		}
	}
	if n := strings.Count(cr.stderr, "] batch of "); n != 2*2 {
		t.Errorf("want 4 batches (2 packages, 2 seeds), got %d:\n%s", n, cr.stderr)
	}
	for i, res := range cr.summary.Results {
		if res.Name != "TestClean" {
			continue
		}
		code := map[flakegate.Label]int{flakegate.Pass: 0, flakegate.Property: 1}
		want, ok := code[res.Label]
		if !ok {
			t.Fatalf("TestClean seed %s: %s\n%s", res.Seed, res.Label, cr)
		}
		checkSuiteReproduce(t, cr, i, want, 6)
	}
}

// planRun runs `flakegate check --base base --plan` plus args in r.
func planRun(t *testing.T, r *repo, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(flakegateBin, append([]string{"check", "--base", "base", "--plan"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), "FG_STATE="+r.state)
	return runExit(t, cmd)
}

// TestPlanCountsSuites: check --plan lists each suite on the base tree
// in the sandbox, as a check does, says so, and counts its triples and
// their batches (a go suite: a process per package and seed; pytest: a
// process per seed); what a check then runs is what the plan counted;
// --json has the suites too; the plan leaves the work tree as it was.
func TestPlanCountsSuites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go, pytest and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, orderModule("seeds: [1, 2, 3]"))
	code, out := planRun(t, r)
	for _, want := range []string{"suites: listed on the base tree as a check lists them (go list and go test -list, pytest --collect-only, vitest list, a jest run that selects no test), in its sandbox: ",
		"suites[0] (go ./...) 9 tests, 27 triples", "cost: 27 triples; 54 attempts in 12 processes when every triple passes"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("go plan: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	code, out = planRun(t, r, "--json")
	var cost struct {
		Triples, Processes int
		Suites             []struct{ Tests, Triples int }
	}
	if err := json.Unmarshal([]byte(out), &cost); err != nil || code != 0 || cost.Triples != 27 || cost.Processes != 12 || len(cost.Suites) != 1 || cost.Suites[0].Tests != 9 {
		t.Errorf("--json: exit %d %v %+v\n%s", code, err, cost, out)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("the plan changed the work tree: %s", st)
	}
	r.candidate("docs", map[string]string{"README.md": "order module, documented\n"})
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || len(cr.summary.Results) != 27 || strings.Count(cr.stderr, "] batch of ") != 6 {
		t.Errorf("the check does not run what the plan counted (27 triples, 6 batches)\n%s", cr)
	}

	needProgram(t, "python3")
	py := pySuiteRepo(t)
	code, out = planRun(t, py)
	for _, want := range []string{"suites[0] (pytest tests) 10 tests, 40 triples", "cost: 40 triples; 80 attempts in 8 processes"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("pytest plan: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
}
