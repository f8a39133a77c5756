package report

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
)

// A suite (the config's suites: entry) makes a triple of every test it
// lists times every order seed: thousands of results. The reports show
// them grouped by the test's package (Go: the test file's folder) or file
// (pytest, vitest, jest), a count per label for each group, and only the
// triples that did not pass; the passes are folded into a count.

// suiteView is one suite's triples, grouped.
type suiteView struct {
	Path    string // the suites: entry's path
	Counts  Counts
	Tests   int // distinct tests (path and name)
	Seeds   int // distinct order seeds
	Groups  []*groupView
	Word    string // what a group is: "package" or "file"
	Passed  int    // PASS triples, folded
	Failing []*flakegate.Result
}

// groupView is one package's or file's triples of a suite.
type groupView struct {
	Key       string
	Counts    Counts
	NotPassed []*flakegate.Result // every triple but a PASS, in summary order
	Passed    []*flakegate.Result
}

// passed says whether r is folded: a PASS that ran (a frozen skip is
// listed, as the Markdown and JUnit reports list every skip).
func passed(r *flakegate.Result) bool { return r.Label == flakegate.Pass && !r.Skipped }

// groupKey is the group of a suite's triple: the folder of a Go test
// file (its package), else the test file itself.
func groupKey(p string) string {
	if strings.HasSuffix(p, ".go") {
		return path.Dir(p)
	}
	return p
}

// splitSuites returns the results of properties (no suite), in summary
// order, and the suites in the order they first appear. Within a suite
// the groups with a triple that did not pass come first, then by name.
func splitSuites(s *flakegate.Summary) (props []*flakegate.Result, suites []*suiteView) {
	bySuite := map[string]*suiteView{}
	groups := map[*suiteView]map[string]*groupView{}
	tests := map[*suiteView]map[string]bool{}
	seeds := map[*suiteView]map[string]bool{}
	for i := range s.Results {
		r := &s.Results[i]
		if r.Suite == "" {
			props = append(props, r)
			continue
		}
		sv, ok := bySuite[r.Suite]
		if !ok {
			sv = &suiteView{Path: r.Suite, Counts: newCounts(), Word: "package"}
			bySuite[r.Suite] = sv
			groups[sv], tests[sv], seeds[sv] = map[string]*groupView{}, map[string]bool{}, map[string]bool{}
			suites = append(suites, sv)
		}
		key := groupKey(r.PropertyPath)
		if key == r.PropertyPath {
			sv.Word = "file"
		}
		g, ok := groups[sv][key]
		if !ok {
			g = &groupView{Key: key, Counts: newCounts()}
			groups[sv][key] = g
			sv.Groups = append(sv.Groups, g)
		}
		tests[sv][r.ID()], seeds[sv][r.Seed.String()] = true, true
		sv.Counts.add(r)
		g.Counts.add(r)
		if passed(r) {
			g.Passed = append(g.Passed, r)
			sv.Passed++
		} else {
			g.NotPassed = append(g.NotPassed, r)
		}
	}
	for _, sv := range suites {
		sv.Tests, sv.Seeds = len(tests[sv]), len(seeds[sv])
		sort.Slice(sv.Groups, func(i, j int) bool {
			a, b := sv.Groups[i], sv.Groups[j]
			if (len(a.NotPassed) > 0) != (len(b.NotPassed) > 0) {
				return len(a.NotPassed) > 0
			}
			return a.Key < b.Key
		})
		for _, g := range sv.Groups {
			sv.Failing = append(sv.Failing, g.NotPassed...)
		}
	}
	return props, suites
}

func newCounts() Counts { return Counts{Labels: map[flakegate.Label]int{}} }

// add tallies one result as CountResults does.
func (c *Counts) add(r *flakegate.Result) {
	c.Total++
	switch {
	case r.Skipped:
		c.Skipped++
	default:
		c.Labels[r.Label]++
		if r.Label.Reject() {
			c.Rejects++
		}
	}
}

// tallyText is a count per label in words: "148 PASS, 2 PROPERTY".
func (c Counts) tallyText() string {
	var parts []string
	for _, l := range flakegate.Labels {
		if n := c.Labels[l]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+string(l))
		}
	}
	if c.Skipped > 0 {
		parts = append(parts, strconv.Itoa(c.Skipped)+" SCHEDULER "+FrozenWording)
	}
	return strings.Join(parts, ", ")
}

// columns are the label columns of a suite's group table: every label
// some triple of the suite has, in the table's order, PASS first.
func (sv *suiteView) columns() []flakegate.Label {
	var out []flakegate.Label
	if sv.Counts.Labels[flakegate.Pass] > 0 {
		out = append(out, flakegate.Pass)
	}
	for _, l := range flakegate.Labels {
		if l != flakegate.Pass && sv.Counts.Labels[l] > 0 {
			out = append(out, l)
		}
	}
	return out
}

// heading says what the suite ran: "6000 triples (2000 tests × 3 seeds)
// in 40 packages".
func (sv *suiteView) heading() string {
	return plural(sv.Counts.Total, "triple") + " (" + plural(sv.Tests, "test") + " × " + plural(sv.Seeds, "seed") + ") in " + plural(len(sv.Groups), sv.Word)
}

// newTestText is one new test's line: "new test TestX: 5 of 5 passed",
// then its runs' results and why one did not finish, when the summary
// has them.
func newTestText(t flakegate.NewTest) string {
	return "new test " + t.Name + ": " + newTestRuns(t)
}

// newTestRuns is "4 of 5 passed (pass, fail, pass, pass, pass)".
func newTestRuns(t flakegate.NewTest) string {
	s := strconv.Itoa(t.Passed) + " of " + strconv.Itoa(t.Runs) + " passed"
	if len(t.Results) > 0 {
		s += " (" + strings.Join(t.Results, ", ") + ")"
	}
	if t.Reason != "" {
		s += "; " + t.Reason
	}
	return s
}

// newTestFailed says whether a new test did not pass every run, as the
// verdict reads it (flakegate.NewTest.Flaky).
func newTestFailed(t flakegate.NewTest) bool { return t.Flaky() }

// newTestPolicy says what a failed new test does to the verdict.
func newTestPolicy(s *flakegate.Summary) string {
	if s.RejectFlakyNewTests {
		return "reject_flaky_new_tests is on: a new test that fails one run rejects the patch."
	}
	return "reject_flaky_new_tests is off: a new test's failures are reported and do not reject the patch."
}

// suiteNote is what the reports say about a suite's triple that did not
// pass: the reason of a reject, the origin of a SCHEDULER result, the
// freeze of a skip.
func suiteNote(r *flakegate.Result) string {
	switch {
	case r.Skipped:
		return FrozenWording + ": " + frozenLine(r)
	case r.Label == flakegate.Scheduler:
		if o := originText(r); o != "" {
			return "failed, then passed on a retry inside the cap; " + o
		}
		return "failed, then passed on a retry inside the cap"
	}
	return reasonOf(r)
}
