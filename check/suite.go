// Suites (config suites:) in a check: the glue over the suites package
// (suites/list.go says how a suite is gated): the graded candidate, the
// base's lists expanded into properties, what is not gated said, the
// order of the suite triples noted for their records, and the tree the
// patch's new tests run on (package newtests runs them).

package check

import (
	"context"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/newtests"
	"github.com/flakegate/flakegate/plan"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
	"github.com/flakegate/flakegate/transcript"
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
// property per test to the config (suites.Env.Expand), keeping the
// base's lists and impact's decisions.
func (c *site) expandSuites(ctx context.Context) error {
	if len(c.cfg.Suites) == 0 {
		return nil
	}
	c.suite.lists = map[int]*suites.List{}
	impacts, err := c.suitesEnv().Expand(ctx, c.suite.lists)
	c.suite.impacts = append(c.suite.impacts, impacts...)
	return err
}

// suitesEnv is what the suites package needs of the site, as it stands
// now: its state, and its own steps (the top-level prepare's layer, the
// reset after a command) and batch's report file as functions.
func (c *site) suitesEnv() *suites.Env {
	return &suites.Env{Cfg: c.cfg, CfgPath: c.cfgPath, Common: c.common, BaseSHA: c.baseSHA, Git: c.git,
		Iso: c.iso, Trees: c.trees, Goc: c.goc, Say: c.say,
		Layer: c.suiteLayer, Reset: c.resetClean, ReportFile: batch.ReportFile, ReportRoot: batch.JSRoot,
		CheckFile: c.checkBaseFile,
		Seconds: func(p *config.Property) (float64, bool) {
			sec, ok := plan.ReadTimings(c.common).Seconds[plan.ProcessKey(p)]
			return sec, ok
		},
		Graded: c.suite.graded, NoImpact: c.suite.noImpact}
}

// orderSuites puts the jobs of each suite in the order their batches run
// (suites.RunOrder), in the places the suite's jobs held, renumbers every
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
		js, sls := make([]job, len(slots)), make([]suites.Slot, len(slots))
		for k, i := range slots {
			js[k], sls[k] = jobs[i], orderSlot(&jobs[i])
		}
		run, orders := suites.RunOrder(s, c.suite.lists[s.Index], sls)
		for k, i := range slots {
			jobs[i] = js[run[k]]
			c.suite.orders.note(&jobs[i], orders[k])
		}
	}
	for i := range jobs {
		jobs[i].index = i
	}
	return jobs
}

// orderSlot is what suites' order needs of j.
func orderSlot(j *job) suites.Slot { return suites.SlotOf(j.ps.prop, j.seed) }

// note records o as the order of j's triple.
func (so suiteOrders) note(j *job, o *flakegate.SuiteOrder) {
	p := j.ps.prop
	if so[p] == nil {
		so[p] = map[flakegate.Seed]*flakegate.SuiteOrder{}
	}
	so[p][j.seed] = o
}

// suitePath is the suite path of j's test, "" for a property.
func suitePath(j *job) string {
	if s := j.ps.prop.Suite; s != nil {
		return s.Path
	}
	return ""
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

// suiteMember reports whether j is a triple of a suite that batches:
// alone, it still runs as a batch (of one), which carries known answers
// (known.go: a test of a suite is never judged from output it could
// have printed itself) and, for vitest and jest, quotes its name in its
// -t pattern (jsBatchArgv).
func suiteMember(j *job) bool {
	return j.shape != nil && j.ps.prop.Suite != nil
}

// runNewTests runs the tests the base does not list new_test_runs times
// on a worktree of the candidate's own (package newtests), into
// c.suite.newTests. Nothing to do when the graded candidate is the
// candidate (no test file of a suite differs from the base's).
func (c *checker) runNewTests(ctx context.Context, root string) error {
	if len(c.cfg.Suites) == 0 || c.suite.graded == c.candSHA || c.opts.Join != nil || c.opts.Shard != nil && c.opts.Shard.Index != 1 {
		return nil
	}
	dir := filepath.Join(root, "suites-candidate")
	if err := c.git.PrepareWorktree(ctx, dir, c.candSHA); err != nil {
		return err
	}
	gitDir, err := c.git.WorktreeGitDir(ctx, dir)
	if err != nil {
		return err
	}
	t := &sitepkg.Tree{Dir: dir, SHA: c.candSHA, Side: transcript.SideCandidate, GitDir: gitDir}
	defer t.Acquire() // the last clean
	r := &newtests.Runner{Env: c.suitesEnv(), Lists: c.suite.lists, Draws: &c.knownDraws, TreeKey: knownTree, Build: c.goBuilds.Use,
		Changed: func(s *config.Suite, t suites.Test) bool {
			return c.suite.changed[changedKey(s.Framework, t.File, t.Name)]
		}}
	got, err := r.Run(ctx, t)
	c.suite.newTests = append(c.suite.newTests, got...)
	return err
}
