// Suites (config suites:) in a check: the glue over the suites package
// (suites/list.go says how a suite is gated): the graded candidate, the
// base's lists expanded into properties, what is not gated said, and
// the order of the suite triples noted for their records.

package check

import (
	"context"
	"fmt"
	"sort"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/suites"
)

// suiteState is what a check keeps of its suites.
type suiteState struct {
	graded   string               // the graded candidate's commit (gradedCandidate)
	lists    map[int]*suites.List // the base's lists, by suite index
	orders   suiteOrders
	newTests []flakegate.NewTest
	// changed are the base's tests the patch changes, by changedKey
	// (graded.go, noteChangedTests).
	changed map[string]bool
	// impacts are impact's decisions, one per suite it was asked of
	// (impact.go), for the summary.
	impacts []flakegate.SuiteImpact
	// noImpact says why this check decides no impact ("" when it may).
	noImpact string
}

// suiteOrders are the orders of a check's suite triples, by property and
// seed (filled by orderSuites, read by the record).
type suiteOrders map[*config.Property]map[flakegate.Seed]*flakegate.SuiteOrder

// gradedCandidate returns the commit the candidate's trees check out:
// the graded tree (graded.go), the candidate's code with the base's tests
// and what decides how they run; the candidate itself when the patch
// changes none of that. The diff the records carry becomes the graded
// tree's (what ran).
func (c *checker) gradedCandidate(ctx context.Context) (string, error) {
	gt, err := grade.MakeGraded(ctx, c.git, c.cfg, c.baseSHA, c.candSHA, c.watch)
	if err != nil {
		return "", err
	}
	c.graded = gt
	if gt.SHA != c.candSHA {
		if c.diff, err = c.git.DiffNames(ctx, c.baseSHA, gt.SHA); err != nil {
			return "", err
		}
	}
	return gt.SHA, nil
}

// expandSuites lists every suite's tests in the base tree and adds one
// property per test to the config, after the config's own properties. A
// test a property already names (same file and name) is gated once, as
// the property.
func (c *site) expandSuites(ctx context.Context) error {
	if len(c.cfg.Suites) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, p := range c.cfg.Properties {
		named[p.Path+"\x00"+p.Name] = true
	}
	c.suite.lists = map[int]*suites.List{}
	base := c.trees.Workers[0].Base
	for i := range c.cfg.Suites {
		s := &c.cfg.Suites[i]
		list, err := c.baseSuiteList(ctx, s, base)
		if err != nil {
			return err
		}
		c.suite.lists[i] = list
		c.goBaseSkips(s, list, base.Dir)
		for _, line := range suites.Notes(i, list) {
			c.say(line)
		}
		fixture := ""
		if s.FixtureRoot != "" && c.checkBaseFile(base.Dir, fmt.Sprintf("suites[%d].fixture", i), s.FixtureRoot, "fixture") == nil {
			fixture = s.FixtureRoot
		}
		si, err := c.impactSuite(ctx, i, s, list)
		if err != nil {
			return err
		}
		for _, t := range list.Tests {
			if !list.Gated(s, t) || named[t.File+"\x00"+t.Name] {
				continue
			}
			if si != nil && si.Unaffected[si.UnitOf(t)] {
				continue // impact: its base result stands
			}
			named[t.File+"\x00"+t.Name] = true
			p := suites.Property(c.cfg, s, t, list, fixture)
			if si != nil {
				p.RandomSeeds += si.Extra
			}
			c.cfg.Properties = append(c.cfg.Properties, p)
		}
	}
	return nil
}

// goBaseSkips marks the tests of go suite s that the base's own run of
// the suite skipped (t.Skip; the fill runs every go suite once on the
// base, trusted code, and records them): such a test passes on no tree,
// so it is not gated. dir is the base tree (its go.mod names the module).
func (c *site) goBaseSkips(s *config.Suite, list *suites.List, dir string) {
	if c.goc != nil {
		suites.MarkGoSkips(c.goc, c.goc.FillKey(), s, list, dir)
	}
}

// orderSuites puts the jobs of each suite in the order their batches run
// (suites.Less), in the places the suite's jobs held, renumbers every
// job and notes the order of each suite triple for its record.
func (c *checker) orderSuites(jobs []job) []job {
	c.suite.orders = suiteOrders{}
	bySuite := map[*config.Suite][]int{}
	for i := range jobs {
		if s := jobs[i].ps.prop.Suite; s != nil {
			bySuite[s] = append(bySuite[s], i)
		}
	}
	for s, slots := range bySuite {
		list := c.suite.lists[s.Index]
		js, sls := make([]job, len(slots)), make([]suites.Slot, len(slots))
		for k, i := range slots {
			js[k], sls[k] = jobs[i], orderSlot(&jobs[i])
		}
		run := make([]int, len(slots)) // js's indexes in run order
		for k := range run {
			run[k] = k
		}
		sort.SliceStable(run, func(a, b int) bool { return suites.Less(s, sls[run[a]], sls[run[b]]) })
		ordered := make([]suites.Slot, len(slots))
		for k, i := range slots {
			jobs[i], ordered[k] = js[run[k]], sls[run[k]]
		}
		c.noteOrders(s, list, jobs, slots, ordered)
	}
	for i := range jobs {
		jobs[i].index = i
	}
	return jobs
}

// orderSlot is what suites' order needs of j.
func orderSlot(j *job) suites.Slot { return suites.SlotOf(j.ps.prop, j.seed) }

// noteOrders records the order of each job of suite s (at the places
// slots of jobs, in run order; sls are their slots).
func (c *checker) noteOrders(s *config.Suite, list *suites.List, jobs []job, slots []int, sls []suites.Slot) {
	for k, o := range suites.Orders(s, list, sls) {
		j := &jobs[slots[k]]
		p := j.ps.prop
		if c.suite.orders[p] == nil {
			c.suite.orders[p] = map[flakegate.Seed]*flakegate.SuiteOrder{}
		}
		c.suite.orders[p][j.seed] = o
	}
}

// suiteKeys are the record's suite and order keys of j ("" and nil for a
// property).
func (c *checker) suiteKeys(j *job) (string, *flakegate.SuiteOrder) {
	s := j.ps.prop.Suite
	if s == nil {
		return "", nil
	}
	return s.Path, c.suite.orders[j.ps.prop][j.seed]
}
