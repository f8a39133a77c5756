// Impact (config impact: true): which tests of a suite the patch can
// reach, decided by package impact before the suite's tests become
// triples (go here: a package whose test binary, folder and every path
// its tests read on the base are identical in the graded candidate's
// tree; pytest in decidepy.go, vitest and jest in decidejs.go, by test
// file). An unaffected unit's tests are not run again: nothing they can
// build or read differs from the base's, where they ran. The units the
// patch can reach get the runs saved: more drawn order seeds, up to what
// the whole suite once per seed would cost (impact.Budget; impact.go
// plans them), so that a flake the patch adds shows. Anything the rules
// cannot resolve counts as reachable; when impact cannot decide at all,
// every test runs as without it, and the check says why.

package suites

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
	"github.com/flakegate/flakegate/site"
)

// decide decides suite i (list is the base's list) when the config asks
// for impact and this is a check (a plan or doctor has no candidate),
// and appends the decision to impacts; nil means every test runs as
// without impact.
func (e *Env) decide(ctx context.Context, i int, s *config.Suite, list *List, impacts *[]flakegate.SuiteImpact) (*Impact, error) {
	if !e.Cfg.Impact || e.Graded == "" {
		return nil, nil
	}
	si, why, err := (*Impact)(nil), e.NoImpact, error(nil)
	if why == "" {
		switch s.Framework {
		case config.FrameworkGo:
			si, why, err = e.decideGo(ctx, s, list)
		case config.FrameworkPytest:
			si, why, err = e.decidePytest(ctx, s, list)
		case config.FrameworkVitest, config.FrameworkJest:
			si, why, err = e.decideJS(ctx, s, list)
		default:
			why = "impact does not decide a " + s.Framework + " suite"
		}
		if err != nil {
			return nil, err
		}
	}
	if why != "" {
		e.Say(fmt.Sprintf("suites[%d]: impact: every test runs: %s", i, why))
		*impacts = append(*impacts, flakegate.SuiteImpact{Suite: i, Framework: s.Framework, Path: s.Path, Undecided: why})
		return nil, nil
	}
	si.Summary.Suite, si.Summary.Framework, si.Summary.Path = i, s.Framework, s.Path
	e.Say(fmt.Sprintf("suites[%d]: impact: %s", i, si.Summary.Line()))
	*impacts = append(*impacts, si.Summary)
	return si, nil
}

// decideGo runs impact's go rule for suite s: the base's reads from the
// fill, go list in both trees, the trees compared, and the budget. why
// says why it cannot decide ("" when it did).
func (e *Env) decideGo(ctx context.Context, s *config.Suite, list *List) (si *Impact, why string, err error) {
	reads, ok := e.Goc.BaseReads(e.Goc.FillKey())
	if !ok {
		return nil, "what the base's tests read was not recorded (no Go build cache fill with a test log here)", nil
	}
	w := e.Trees.Workers[0]
	runIn := func(t *site.Tree) impact.Runner {
		return func(ctx context.Context, argv []string) ([]byte, error) {
			o, out, err := e.run(ctx, t, s, argv)
			if err != nil {
				return nil, err
			}
			if o.Result != attempt.Pass {
				return nil, fmt.Errorf("%s in the %s tree: %s", strings.Join(argv[:2], " "), t.Side, strings.TrimSpace(o.Result+" "+o.Reason+": "+LastLines([]byte(o.Tail), 2)))
			}
			return out, nil
		}
	}
	// The base's listing is kept between checks, under its listing's key
	// and its tree and prepared layer, when go listed every package
	// without an error (a module missing from a fresh runner's cache
	// would otherwise stay missing for every check of this base); when
	// it is not kept, it runs beside the candidate's (two trees, two
	// sandboxes).
	keep, base, baseErr := e.goListingPath(ctx, s, w.Base), (*impact.GoTree)(nil), error(nil)
	var listed sync.WaitGroup
	if kept, ok := ReadGoListing(keep); keep != "" && ok {
		base = kept
	} else {
		listed.Add(1)
		go func() {
			defer listed.Done()
			var l *impact.GoListing
			if l, baseErr = impact.RunGoListing(ctx, runIn(w.Base), s.Path); baseErr != nil {
				return
			}
			if base, baseErr = l.Tree(); baseErr == nil && keep != "" && base.Whole() {
				WriteGoListing(keep, l)
			}
		}()
	}
	cand, candErr := impact.ListGo(ctx, runIn(w.Cand[0]), s.Path)
	listed.Wait()
	if err := cmp.Or(baseErr, candErr); err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	trees, why, err := e.compareTrees(ctx)
	if err != nil || why != "" {
		return nil, why, err
	}
	verdicts, err := impact.Go(impact.GoInput{Trees: trees, Base: base, Candidate: cand, Reads: reads.Reads})
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return GoBudget(s, list, verdicts, reads.Seconds)
}

// goListingPath is the file that keeps the base's go listing of suite s
// in tree t, "" when it is not kept (no listing key, or the top-level
// prepare's layer is not known).
func (e *Env) goListingPath(ctx context.Context, s *config.Suite, t *site.Tree) string {
	key := e.listKey(s)
	if key == "" {
		return ""
	}
	layer, why, err := e.Layer(ctx, t)
	if err != nil || why != "" {
		return ""
	}
	return GoListingPath(e.Common, key, t.Dir, layer)
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
func (e *Env) compareTrees(ctx context.Context) (*impact.Trees, string, error) {
	w := e.Trees.Workers[0]
	trees, err := impact.Compare(ctx, w.Base.Dir, w.Cand[0].Dir)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return trees, "", nil
}
