package newtests

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
)

// TestShape: a new test's run is a batch member with the order seed of
// its run: go's -shuffle (and rapid's seed where the package uses it),
// pytest's argv (and Hypothesis's seed where it is there) with the node
// id, vitest's and jest's seeded order with the name quoted in -t.
func TestShape(t *testing.T) {
	list := &suites.List{Rapid: map[string]bool{"./r": true}, Python: "/usr/bin/python3", Hypothesis: true}
	goSuite := &config.Suite{Framework: config.FrameworkGo, Path: "./..."}
	got := Shape(goSuite, list, suites.Test{Pkg: "./p", File: "p/a_test.go", Name: "TestNew"}, "3")
	want := &batch.Shape{Framework: evidence.FrameworkGo, Lead: []string{"-shuffle=3", "-count=1", "-timeout=0"}, Pkg: "./p", Test: "TestNew"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("go: %+v\nwant %+v", got, want)
	}
	got = Shape(goSuite, list, suites.Test{Pkg: "./r", File: "r/a_test.go", Name: "TestProp"}, "3")
	if !reflect.DeepEqual(got.Trail, []string{"-rapid.seed=3"}) {
		t.Errorf("go with rapid: trail %q", got.Trail)
	}
	py := &config.Suite{Framework: config.FrameworkPytest, Path: "tests", PythonPath: []string{"src"}}
	got = Shape(py, list, suites.Test{File: "tests/test_a.py", Name: "test_new[1]"}, "2")
	want = &batch.Shape{Framework: evidence.FrameworkPytest, Lead: suites.PytestArgv(py, "/usr/bin/python3"),
		Trail: []string{"--hypothesis-seed=2"}, Test: "tests/test_a.py::test_new[1]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pytest: %+v\nwant %+v", got, want)
	}
	if got = Shape(py, &suites.List{Python: "python3"}, suites.Test{File: "t.py", Name: "test_x"}, "2"); got.Trail != nil {
		t.Errorf("pytest without Hypothesis: trail %q", got.Trail)
	}
	for _, fw := range []string{config.FrameworkVitest, config.FrameworkJest} {
		js := &config.Suite{Framework: fw, Path: "src"}
		got = Shape(js, list, suites.Test{File: "src/a.test.js", Name: "adds > one"}, "5")
		want = &batch.Shape{Framework: fw, Lead: suites.JSSuiteLead(fw, "5"), Trail: []string{"-t", batch.JSNameSlot}, Pkg: "src/a.test.js", Test: "adds > one"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v\nwant %+v", fw, got, want)
		}
	}
}

// TestGroupAndOrder: go's new tests run one process per package, in the
// order of their first test; pytest's in one process, sorted by Rank
// with the run's seed (a new order each run); the others as listed.
func TestGroupAndOrder(t *testing.T) {
	fresh := []suites.Test{{Pkg: "./b", Name: "TestB1"}, {Pkg: "./a", Name: "TestA1"}, {Pkg: "./b", Name: "TestB2"}}
	keys, groups := group(fresh)
	if !reflect.DeepEqual(keys, []string{"./b", "./a"}) || !reflect.DeepEqual(groups, map[string][]int{"./b": {0, 2}, "./a": {1}}) {
		t.Errorf("go groups: %q %v", keys, groups)
	}
	goSuite := &config.Suite{Framework: config.FrameworkGo}
	if got := order(goSuite, fresh, groups["./b"], "1"); !reflect.DeepEqual(got, []int{0, 2}) {
		t.Errorf("go order: %v", got)
	}
	py := &config.Suite{Framework: config.FrameworkPytest}
	var pyFresh []suites.Test
	for _, n := range []string{"test_a", "test_b", "test_c", "test_d", "test_e", "test_f"} {
		pyFresh = append(pyFresh, suites.Test{File: "t/test_x.py", Name: n})
	}
	keys, groups = group(pyFresh)
	if len(keys) != 1 || len(groups[keys[0]]) != len(pyFresh) {
		t.Fatalf("pytest groups: %q %v", keys, groups)
	}
	orders := map[string]bool{}
	for _, seed := range []flakegate.Seed{"1", "2", "3", "4", "5"} {
		idx := order(py, pyFresh, groups[keys[0]], seed)
		want := append([]int(nil), groups[keys[0]]...)
		sort.Slice(want, func(a, b int) bool {
			return suites.Rank(seed, "t/test_x.py::"+pyFresh[want[a]].Name) < suites.Rank(seed, "t/test_x.py::"+pyFresh[want[b]].Name)
		})
		if !reflect.DeepEqual(idx, want) {
			t.Errorf("pytest seed %s: %v, want %v", seed, idx, want)
		}
		orders[fmt.Sprint(idx)] = true
	}
	if len(orders) < 2 {
		t.Errorf("pytest: every seed ran the same order: %v", orders)
	}
	if got := groups[keys[0]]; !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("order changed its group: %v", got)
	}
}

// TestCount: a pass counts; a fail does not and gives no reason; the
// first run that is neither gives the reason, with its run number.
func TestCount(t *testing.T) {
	nt := &flakegate.NewTest{Path: "t.py", Name: "test_x", Runs: 5}
	count(nt, 1, evidence.TestReport{Result: attempt.Pass})
	count(nt, 2, evidence.TestReport{Result: attempt.Fail, Reason: "assert 1 == 2"})
	count(nt, 3, evidence.TestReport{Result: attempt.Timeout, Reason: "the run was killed: wall budget"})
	count(nt, 4, evidence.TestReport{Result: attempt.Errored, Reason: "absent from the run's report"})
	count(nt, 5, evidence.TestReport{Result: attempt.Pass})
	want := flakegate.NewTest{Path: "t.py", Name: "test_x", Runs: 5, Passed: 2,
		Results: []string{attempt.Pass, attempt.Fail, attempt.Timeout, attempt.Errored, attempt.Pass},
		Reason:  "run 3: the run was killed: wall budget"}
	if !reflect.DeepEqual(*nt, want) {
		t.Errorf("%+v\nwant %+v", *nt, want)
	}
	if !nt.Flaky() {
		t.Error("2 of 5 passed is not flaky")
	}
	if got := Line(*nt); got != "new test t.py::test_x: 2 of 5 passed (run 3: the run was killed: wall budget)" {
		t.Errorf("line: %q", got)
	}
	clean := flakegate.NewTest{Path: "a_test.go", Name: "TestA", Runs: 2}
	count(&clean, 1, evidence.TestReport{Result: attempt.Pass})
	count(&clean, 2, evidence.TestReport{Result: attempt.Pass})
	if clean.Flaky() || Line(clean) != "new test a_test.go::TestA: 2 of 2 passed" {
		t.Errorf("all passed: %+v, %q", clean, Line(clean))
	}
}

// TestJudge: a test's own report is its result, except that wrong known
// answers make a claimed pass or fail an error, a test the report lacks
// is the process's timeout or an error, and a test over the suite's
// wall budget by its own time is a timeout.
func TestJudge(t *testing.T) {
	ok := attempt.Outcome{Result: attempt.Pass}
	killed := attempt.Outcome{Result: attempt.Timeout, Reason: "over its wall budget 1m0s"}
	for _, c := range []struct {
		name   string
		tr     evidence.TestReport
		wrong  string
		o      attempt.Outcome
		budget time.Duration
		result string
		reason string
	}{
		{"pass", evidence.TestReport{Result: attempt.Pass, Elapsed: time.Second}, "", ok, time.Minute, attempt.Pass, ""},
		{"fail", evidence.TestReport{Result: attempt.Fail, Reason: "boom"}, "", ok, time.Minute, attempt.Fail, "boom"},
		{"pass with wrong known answers", evidence.TestReport{Result: attempt.Pass}, "the planted failing test passed", ok, 0, attempt.Errored, batch.KnownReason("the planted failing test passed")},
		{"fail with wrong known answers", evidence.TestReport{Result: attempt.Fail}, "x", ok, 0, attempt.Errored, batch.KnownReason("x")},
		{"timeout with wrong known answers", evidence.TestReport{Result: attempt.Timeout, Reason: "t"}, "x", ok, 0, attempt.Timeout, "t"},
		{"absent, killed", evidence.TestReport{}, "", killed, 0, attempt.Timeout, "the run was killed: over its wall budget 1m0s"},
		{"absent", evidence.TestReport{}, "", ok, 0, attempt.Errored, "absent from the run's report"},
		{"absent with a reason", evidence.TestReport{Reason: "the package did not build"}, "", ok, 0, attempt.Errored, "the package did not build"},
		{"over budget", evidence.TestReport{Result: attempt.Pass, Elapsed: 90 * time.Second}, "", ok, time.Minute, attempt.Timeout, "its own time 90.0s is over the suite's wall budget 1m0s"},
		{"no budget", evidence.TestReport{Result: attempt.Pass, Elapsed: 90 * time.Second}, "", ok, 0, attempt.Pass, ""},
	} {
		got := judge(c.tr, c.wrong, c.o, c.budget)
		if got.Result != c.result || got.Reason != c.reason {
			t.Errorf("%s: %q %q, want %q %q", c.name, got.Result, got.Reason, c.result, c.reason)
		}
	}
}
