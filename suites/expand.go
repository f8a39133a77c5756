// A check's suites as properties: every suite listed on the base tree,
// what is not gated said, impact decided, and one property per gated
// test added to the config; doctor's counts of the same listings.

package suites

import (
	"context"
	"fmt"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// Expand lists every suite's tests in the first worker's base tree into
// lists (by suite index) and adds one property per test to the config,
// after the config's own properties. A test a property already names
// (same file and name) is gated once, as the property. impacts are
// impact's decisions, one per suite it was asked of.
func (e *Env) Expand(ctx context.Context, lists map[int]*List) (impacts []flakegate.SuiteImpact, err error) {
	named := map[string]bool{}
	for _, p := range e.Cfg.Properties {
		named[p.Path+"\x00"+p.Name] = true
	}
	base := e.Trees.Workers[0].Base
	for i := range e.Cfg.Suites {
		s := &e.Cfg.Suites[i]
		list, err := e.BaseList(ctx, s, base)
		if err != nil {
			return impacts, err
		}
		lists[i] = list
		e.goBaseSkips(s, list, base.Dir)
		for _, line := range Notes(i, list) {
			e.Say(line)
		}
		fixture := ""
		if s.FixtureRoot != "" && e.CheckFile(base.Dir, fmt.Sprintf("suites[%d].fixture", i), s.FixtureRoot, "fixture") == nil {
			fixture = s.FixtureRoot
		}
		si, err := e.decide(ctx, i, s, list, &impacts)
		if err != nil {
			return impacts, err
		}
		for _, t := range list.Tests {
			if !list.Gated(s, t) || named[t.File+"\x00"+t.Name] {
				continue
			}
			if si != nil && si.Unaffected[si.UnitOf(t)] {
				continue // impact: its base result stands
			}
			named[t.File+"\x00"+t.Name] = true
			p := Property(e.Cfg, s, t, list, fixture)
			if si != nil {
				p.RandomSeeds += si.Extra
			}
			e.Cfg.Properties = append(e.Cfg.Properties, p)
		}
	}
	return impacts, nil
}

// goBaseSkips marks the tests of go suite s that the base's own run of
// the suite skipped (t.Skip; the fill runs every go suite once on the
// base, trusted code, and records them): such a test passes on no tree,
// so it is not gated. dir is the base tree (its go.mod names the module).
func (e *Env) goBaseSkips(s *config.Suite, list *List, dir string) {
	if e.Goc != nil {
		MarkGoSkips(e.Goc, e.Goc.FillKey(), s, list, dir)
	}
}

// Counts counts what the first worker's base tree lists of each suite
// (doctor's, check.Site.ListSuites).
func (e *Env) Counts(ctx context.Context) []Count {
	var counts []Count
	base := e.Trees.Workers[0].Base
	for i := range e.Cfg.Suites {
		st := &e.Cfg.Suites[i]
		list, err := e.List(ctx, st, base, true)
		if err == nil {
			e.goBaseSkips(st, list, base.Dir)
		}
		counts = append(counts, CountOf(i, st, list, err))
	}
	return counts
}
