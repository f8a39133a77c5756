package suites

import (
	"fmt"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

// TestGoBudget: the verdicts per package become the packages not run
// again and the extra seeds of the others; a package without a verdict,
// or an excluded test, is counted as the rules say.
func TestGoBudget(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./...", Seeds: []flakegate.Seed{"1", "2", "3"}, Exclude: []string{"TestSkipped"}}
	list := &List{}
	for i := range 10 {
		pkg := fmt.Sprintf("./p%d", i)
		for _, name := range []string{"TestA", "TestB"} {
			list.Tests = append(list.Tests, Test{Pkg: pkg, File: fmt.Sprintf("p%d/p_test.go", i), Name: name})
		}
	}
	list.Tests = append(list.Tests, Test{Pkg: "./p0", File: "p0/p_test.go", Name: "TestSkipped"})
	type testCase struct {
		name                 string
		reach                []string // packages the verdicts call affected
		missing              []string // packages with no verdict
		seconds              map[string]float64
		runs, extra          int
		unaffected, affected int
	}
	run := func(t *testing.T, tc testCase) {
		var vs []impact.Verdict
		for i := range 10 {
			pkg := fmt.Sprintf("./p%d", i)
			if slicesContains(tc.missing, pkg) {
				continue
			}
			vs = append(vs, impact.Verdict{Unit: pkg, Affected: slicesContains(tc.reach, pkg), Why: "because"})
		}
		si, why, err := GoBudget(s, list, vs, tc.seconds)
		if err != nil || why != "" {
			t.Fatalf("%v %q", err, why)
		}
		if si.Summary.Runs != tc.runs || si.Extra != tc.extra || si.Summary.Unaffected != tc.unaffected || si.Summary.Affected != tc.affected {
			t.Errorf("runs %d extra %d unaffected %d affected %d; want %d %d %d %d", si.Summary.Runs, si.Extra, si.Summary.Unaffected,
				si.Summary.Affected, tc.runs, tc.extra, tc.unaffected, tc.affected)
		}
		if len(si.Unaffected)+len(si.Summary.Reached) != 10 || si.Summary.UnaffectedUnits+si.Summary.AffectedUnits != 10 || si.Unaffected["./p0"] == slicesContains(append(tc.reach, tc.missing...), "./p0") {
			t.Errorf("unaffected %v, reached %v", si.Unaffected, si.Summary.Reached)
		}
	}
	for _, tc := range []testCase{
		{name: "one package of ten", reach: []string{"./p9"}, runs: 12, extra: 9, unaffected: 18, affected: 2},
		{name: "four of ten", reach: []string{"./p0", "./p1", "./p2", "./p3"}, runs: 7, extra: 4, unaffected: 12, affected: 8},
		{name: "a package without a verdict is affected", missing: []string{"./p5"}, runs: 12, extra: 9, unaffected: 18, affected: 2},
		{name: "none", runs: 0, extra: 0, unaffected: 20, affected: 0},
		{name: "all", reach: []string{"./p0", "./p1", "./p2", "./p3", "./p4", "./p5", "./p6", "./p7", "./p8", "./p9"}, runs: 3, extra: 0, affected: 20},
		{name: "a slow package gets what the suite affords", reach: []string{"./p9"},
			seconds: map[string]float64{"./p9": 10, "./p0": 1, "./p1": 1, "./p2": 1, "./p3": 1, "./p4": 1, "./p5": 1, "./p6": 1, "./p7": 1, "./p8": 1},
			runs:    5, extra: 2, unaffected: 18, affected: 2},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
