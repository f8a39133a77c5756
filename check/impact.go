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
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// impactSuite decides suite i (list is the base's list) when the config
// asks for impact and this is a check (a plan or doctor has no
// candidate); nil means every test runs as without impact.
func (c *site) impactSuite(ctx context.Context, i int, s *config.Suite, list *suites.List) (*suites.Impact, error) {
	if !c.cfg.Impact || c.suite.graded == "" {
		return nil, nil
	}
	si, why, err := (*suites.Impact)(nil), c.suite.noImpact, error(nil)
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
	si.Summary.Suite, si.Summary.Framework, si.Summary.Path = i, s.Framework, s.Path
	c.say(fmt.Sprintf("suites[%d]: impact: %s", i, si.Summary.Line()))
	c.suite.impacts = append(c.suite.impacts, si.Summary)
	return si, nil
}

// goImpact runs impact's go rule for suite s: the base's reads from the
// fill, go list in both trees, the trees compared, and the budget. why
// says why it cannot decide ("" when it did).
func (c *site) goImpact(ctx context.Context, s *config.Suite, list *suites.List) (si *suites.Impact, why string, err error) {
	reads, ok := c.goc.BaseReads(c.goc.FillKey())
	if !ok {
		return nil, "what the base's tests read was not recorded (no Go build cache fill with a test log here)", nil
	}
	w := c.trees.Workers[0]
	listIn := func(t *sitepkg.Tree) (*impact.GoTree, error) {
		return impact.ListGo(ctx, func(ctx context.Context, argv []string) ([]byte, error) {
			o, out, err := c.listRun(ctx, t, s, argv)
			if err != nil {
				return nil, err
			}
			if o.Result != attempt.Pass {
				return nil, fmt.Errorf("%s in the %s tree: %s", strings.Join(argv[:2], " "), t.Side, strings.TrimSpace(o.Result+" "+o.Reason+": "+suites.LastLines([]byte(o.Tail), 2)))
			}
			return out, nil
		}, s.Path)
	}
	base, err := listIn(w.Base)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	cand, err := listIn(w.Cand[0])
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
	return suites.GoBudget(s, list, verdicts, reads.Seconds)
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
	w := c.trees.Workers[0]
	trees, err := impact.Compare(ctx, w.Base.Dir, w.Cand[0].Dir)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return trees, "", nil
}
