// Impact (config impact: true): which tests of a suite the patch can
// reach, decided by package impact before the suite's tests become
// triples (go here: a package whose test binary, folder and every path
// its tests read on the base are identical in the graded candidate's
// tree; pytest in impactpy.go, vitest and jest in impactjs.go, by test
// file). An unaffected unit's tests are not run again: nothing they can
// build or read differs from the base's, where they ran. The units the
// patch can reach get the runs saved: more drawn order seeds, up to what
// the whole suite once per seed would cost (impact.Budget), so that a
// flake the patch adds shows. Anything the rules cannot resolve counts as
// reachable; when impact cannot decide at all, every test runs as
// without it, and the check says why.

package check

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

// defaultUnitStart is what a package's run is taken to cost when the
// base's run did not time it.
const defaultUnitStart = time.Second

// suiteImpact is what impact decided for one suite.
type suiteImpact struct {
	unaffected map[string]bool // units (unitOf) whose tests are not run again
	extra      int             // drawn seeds each affected test gets beyond the suite's
	unitOf     func(t suiteTest) string
	summary    flakegate.SuiteImpact
}

// impactSuite decides suite i (list is the base's list) when the config
// asks for impact and this is a check (a plan or doctor has no
// candidate); nil means every test runs as without impact.
func (c *site) impactSuite(ctx context.Context, i int, s *config.Suite, list *suiteList) (*suiteImpact, error) {
	if !c.cfg.Impact || c.suite.graded == "" {
		return nil, nil
	}
	si, why, err := (*suiteImpact)(nil), c.suite.noImpact, error(nil)
	if why == "" {
		switch s.Framework {
		case config.FrameworkGo:
			si, why, err = c.goImpact(ctx, s, list)
		case config.FrameworkPytest:
			si, why, err = c.pytestImpact(ctx, s, list)
		case config.FrameworkVitest, config.FrameworkJest:
			si, why, err = c.jsImpact(ctx, s, list)
		default:
			why = "impact does not decide a " + s.Framework + " suite"
		}
		if err != nil {
			return nil, err
		}
	}
	if why != "" {
		c.say(fmt.Sprintf("suites[%d]: impact: every test runs: %s", i, why))
		c.suite.impacts = append(c.suite.impacts, flakegate.SuiteImpact{Suite: i, Framework: s.Framework, Path: s.Path, Undecided: why})
		return nil, nil
	}
	si.summary.Suite, si.summary.Framework, si.summary.Path = i, s.Framework, s.Path
	c.say(fmt.Sprintf("suites[%d]: impact: %s", i, si.summary.Line()))
	c.suite.impacts = append(c.suite.impacts, si.summary)
	return si, nil
}

// goImpact runs impact's go rule for suite s: the base's reads from the
// fill, go list in both trees, the trees compared, and the budget. why
// says why it cannot decide ("" when it did).
func (c *site) goImpact(ctx context.Context, s *config.Suite, list *suiteList) (si *suiteImpact, why string, err error) {
	reads, ok := c.goc.BaseReads(c.goc.FillKey())
	if !ok {
		return nil, "what the base's tests read was not recorded (no Go build cache fill with a test log here)", nil
	}
	w := c.trees.workers[0]
	listIn := func(t *tree) (*impact.GoTree, error) {
		return impact.ListGo(ctx, func(ctx context.Context, argv []string) ([]byte, error) {
			o, out, err := c.listRun(ctx, t, s, argv)
			if err != nil {
				return nil, err
			}
			if o.Result != attempt.Pass {
				return nil, fmt.Errorf("%s in the %s tree: %s", strings.Join(argv[:2], " "), t.side, strings.TrimSpace(o.Result+" "+o.Reason+": "+lastLines([]byte(o.Tail), 2)))
			}
			return out, nil
		}, s.Path)
	}
	base, err := listIn(w.base)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	cand, err := listIn(w.cand[0])
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	trees, why, err := c.compareTrees(ctx)
	if err != nil || why != "" {
		return nil, why, err
	}
	verdicts, err := impact.Go(impact.GoInput{Trees: trees, Base: base, Candidate: cand, Reads: reads.Reads})
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return goBudget(s, list, verdicts, reads.Seconds)
}

// decideErr is why impact cannot decide after err ("" and the error
// itself when the check was interrupted).
func decideErr(ctx context.Context, err error) (string, error) {
	if ctx.Err() != nil {
		return "", flakegate.Interrupted(ctx)
	}
	return err.Error(), nil
}

// compareTrees compares the first worker's base tree with its graded
// candidate's; why says why they could not be ("" when they were).
func (c *site) compareTrees(ctx context.Context) (*impact.Trees, string, error) {
	w := c.trees.workers[0]
	trees, err := impact.Compare(ctx, w.base.dir, w.cand[0].dir)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return trees, "", nil
}

// gatedFiles are the files of suite s's gated tests, each once in list
// order, how many tests are gated, and the first of them (nil for none).
func gatedFiles(s *config.Suite, list *suiteList) (files []string, gated int, first *suiteTest) {
	seen := map[string]bool{}
	for i, t := range list.tests {
		if !list.gated(s, t) {
			continue
		}
		gated++
		if first == nil {
			first = &list.tests[i]
		}
		if !seen[t.file] {
			seen[t.file] = true
			files = append(files, t.file)
		}
	}
	return files, gated, first
}

// filePlan plans a suite decided by test file and run as one process per
// seed (pytest, vitest, jest) that took total for its gated tests (0: not
// timed): the process's start is taken as at most defaultUnitStart of it,
// and each test as an even share of the rest.
func filePlan(s *config.Suite, list *suiteList, verdicts []impact.Verdict, total time.Duration, gated int) (*suiteImpact, string, error) {
	start, each := defaultUnitStart, time.Duration(0)
	if total > 0 && gated > 0 {
		start = min(defaultUnitStart, total/2)
		each = (total - start) / time.Duration(gated)
	}
	file := func(t suiteTest) string { return t.file }
	return planRuns(s, list, verdicts, impactPlan{unit: "test file", unitOf: file,
		costUnit: func(suiteTest) string { return s.Framework },
		start:    func(string) time.Duration { return start },
		duration: func(suiteTest) time.Duration { return each }})
}

// impactPlan is what the budget needs of a suite besides the verdicts:
// which verdict's unit decides a test (a go package, a test file), which
// process runs it (costUnit: a go package, the one pytest process), and
// what those cost on the base.
type impactPlan struct {
	unit     string // the units' name in words: "package", "test file"
	unitOf   func(t suiteTest) string
	costUnit func(t suiteTest) string
	start    func(costUnit string) time.Duration // a process's start (and, for go, its tests' whole time)
	duration func(t suiteTest) time.Duration     // a test's own time
}

// goPlan is a go suite's: a package is both the verdict's unit and the
// process, whose time in the base's run is its cost.
func goPlan(seconds map[string]float64) impactPlan {
	pkg := func(t suiteTest) string { return t.pkg }
	return impactPlan{unit: "package", unitOf: pkg, costUnit: pkg,
		start: func(u string) time.Duration {
			if sec, ok := seconds[u]; ok {
				return time.Duration(sec * float64(time.Second))
			}
			return defaultUnitStart
		},
		duration: func(suiteTest) time.Duration { return 0 }}
}

// goBudget plans the runs of go suite s's gated tests from the verdicts
// per package and the base's seconds per package.
func goBudget(s *config.Suite, list *suiteList, verdicts []impact.Verdict, seconds map[string]float64) (*suiteImpact, string, error) {
	return planRuns(s, list, verdicts, goPlan(seconds))
}

// planRuns plans the runs of suite s's gated tests from the verdicts (a
// test whose unit has none is affected) and the costs of pl.
func planRuns(s *config.Suite, list *suiteList, verdicts []impact.Verdict, pl impactPlan) (*suiteImpact, string, error) {
	byUnit := map[string]impact.Verdict{}
	for _, v := range verdicts {
		byUnit[v.Unit] = v
	}
	units := map[string]*impact.Unit{}
	var order, verdictUnits []string
	seen := map[string]bool{}
	for _, t := range list.tests {
		if !list.gated(s, t) {
			continue
		}
		cu := pl.costUnit(t)
		u := units[cu]
		if u == nil {
			u = &impact.Unit{ID: cu, Start: pl.start(cu)}
			units[cu] = u
			order = append(order, cu)
		}
		vu := pl.unitOf(t)
		if !seen[vu] {
			seen[vu] = true
			verdictUnits = append(verdictUnits, vu)
		}
		v, ok := byUnit[vu]
		u.Tests = append(u.Tests, impact.TestCost{ID: t.file + "::" + t.name, Duration: pl.duration(t), Affected: !ok || v.Affected})
	}
	cost := impact.Cost{Seeds: len(s.Seeds) + s.RandomSeeds, NewTestRuns: 1}
	for _, id := range order {
		cost.Units = append(cost.Units, *units[id])
	}
	plan, err := impact.Budget(cost, impact.DefaultTarget)
	if err != nil {
		return nil, err.Error(), nil
	}
	si := &suiteImpact{unaffected: map[string]bool{}, extra: plan.Extra, unitOf: pl.unitOf}
	sum := flakegate.SuiteImpact{Affected: plan.Affected, Unaffected: plan.Unaffected, Unit: pl.unit, Runs: plan.Runs, Seeds: cost.Seeds,
		Chance: plan.Chance(impact.DefaultTarget.Rate)}
	for _, id := range verdictUnits {
		v, ok := byUnit[id]
		if ok && !v.Affected {
			si.unaffected[id] = true
			sum.UnaffectedUnits++
			continue
		}
		sum.AffectedUnits++
		why := "the rules have no verdict of it"
		if ok {
			why = v.Why
		}
		sum.Reached = append(sum.Reached, flakegate.Reach{Unit: id, Why: why})
	}
	sort.Slice(sum.Reached, func(a, b int) bool { return sum.Reached[a].Unit < sum.Reached[b].Unit })
	si.summary = sum
	return si, "", nil
}
