// Impact of a vitest or jest suite (decide.go): the two checkouts
// compared, and the framework's own module graph asked, in each tree and
// its sandbox over the prepare's layer (node_modules), which test files
// import a changed module or one that imports by a computed name
// (impact.JSQuery, JSRelatedArgv). A related search starts at the test
// files; the framework's config and setup files, and what they import,
// run before every test and are in no test's graph, so every change to
// one of them (as grade/infra finds them in the base's config, imports
// followed) reaches every test. All of the suite's tests run in one
// process per seed: the budget's process is the suite, timed by the last
// check that ran it (Env.Seconds, check's timings), its start taken as
// at most a second.

package suites

import (
	"context"
	"fmt"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade/infra"
	"github.com/flakegate/flakegate/impact"
	"github.com/flakegate/flakegate/site"
)

// decideJS runs impact's vitest and jest rule for suite s.
func (e *Env) decideJS(ctx context.Context, s *config.Suite, list *List) (*Impact, string, error) {
	trees, why, err := e.compareTrees(ctx)
	if err != nil || why != "" {
		return nil, why, err
	}
	files, gated, first := GatedFiles(s, list)
	if first == nil {
		return nil, "the suite gates no test", nil
	}
	// The config's and setup files' world, as the base's config names it.
	p := Property(e.Cfg, s, *first, list, "")
	watches, err := infra.New(e.Git, e.BaseSHA).Find(ctx, &p)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, "the base's " + s.Framework + " config: " + why, err
	}
	var global []string
	for _, ch := range trees.Changes() {
		for _, wt := range watches {
			if config.MatchGlob(wt.Glob, ch.Path) {
				global = append(global, ch.Path)
				break
			}
		}
	}
	w := e.Trees.Workers[0]
	related := map[string]bool{}
	for _, side := range []struct {
		t    *site.Tree
		cand bool
	}{{w.Base, false}, {w.Cand[0], true}} {
		q := impact.JSQuery(trees, side.cand)
		if len(q) == 0 || len(global) > 0 {
			continue
		}
		o, out, err := e.run(ctx, side.t, s, impact.JSRelatedArgv(s.Framework, q))
		if err != nil {
			why, err := decideErr(ctx, err)
			return nil, why, err
		}
		got, err := impact.ReadJSRelated(s.Framework, out)
		if err != nil || o.Result != attempt.Pass {
			related = nil // not known: every test the trees' changes may reach is affected
			e.Say(fmt.Sprintf("suites[%d]: impact: %s's related search failed in the %s tree (%s): %s", s.Index, s.Framework, side.t.Side,
				o.Result, LastLines([]byte(o.Tail), 2)))
			break
		}
		for f := range got {
			related[f] = true
		}
	}
	verdicts, err := impact.JS(impact.JSInput{Trees: trees, Framework: s.Framework, Tests: files, Related: related, Global: global})
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	total := time.Duration(0)
	if sec, ok := e.Seconds(&p); ok && sec > 0 {
		total = time.Duration(sec * float64(time.Second))
	}
	return FilePlan(s, list, verdicts, total, gated)
}
