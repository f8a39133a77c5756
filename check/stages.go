// The check as a pipeline: its stages, in order, each a named step over
// the run's state. A stage reads what the stages before it left in
// runState and leaves what it makes there; the checker holds what every
// stage shares (the trees, the config, the store).

package check

import (
	"context"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/internal/flock"
	sitepkg "github.com/flakegate/flakegate/site"
)

// runState is what the stages of one check hand on.
type runState struct {
	root  string           // the worktrees' folder (site.MakeWorktreeRoot)
	tr    sitepkg.TreeRoot // where the trees are made (disk or tmpfs)
	fill  time.Duration    // the Go caches' fill
	jobs  []job            // every triple of the check, suites expanded
	pool  *pool            // the workers' triples and their outcomes
	src   fleet.Source     // where the workers take triples from
	mine  []int            // the positions this runner reports
	shard *flakegate.Shard // the shard it covers (--shard)
	sum   *flakegate.Summary
}

// stage is one step of a check.
type stage struct {
	name string
	run  func(c *checker, ctx context.Context, s *runState) error
}

// stages are a check's steps, in order.
var stages = []stage{
	{"worktrees", (*checker).stageTrees},       // the base's and candidate's trees, the graded tree
	{"go caches", (*checker).stageGoCaches},    // the modules fetched, the caches filled
	{"suites", (*checker).stageSuites},         // the suites' tests listed, their impact
	{"properties", (*checker).stageProperties}, // each property graded: fixtures, changed tests
	{"seeds", (*checker).stageSeeds},           // the secret drawn seeds come from
	{"corpus", (*checker).stageCorpus},         // the failing seeds kept, the prepares' keys
	{"triples", (*checker).stageTriples},       // the jobs, in suite order, and this runner's share
	{"attempts", (*checker).stageAttempts},     // every triple labelled (fleet.Run)
	{"freezes", (*checker).stageFreezes},       // SCHEDULER results frozen (--freeze-owner)
	{"new tests", (*checker).stageNewTests},    // the suites' new tests run
	{"summary", (*checker).stageSummary},       // summary.json
}

// run runs the stages in order; the first error ends the check.
func (c *checker) run(ctx context.Context) (*flakegate.Summary, error) {
	defer c.releasePrepares()
	s := &runState{}
	for _, st := range stages {
		if err := st.run(c, ctx, s); err != nil {
			return nil, err
		}
	}
	return s.sum, nil
}

// workers is how many trees the check opens: one per worker, no more
// than it has triples (a suite's are listed later).
func (c *checker) workers() int {
	if len(c.cfg.Suites) > 0 {
		return c.cfg.Workers
	}
	return min(c.cfg.Workers, c.cfg.Triples())
}

func (c *checker) stageTrees(ctx context.Context, s *runState) error {
	lo := flock.Options{Timeout: c.opts.LockTimeout, Wait: noteWriter{c.progress}}
	var err error
	if s.root, err = sitepkg.MakeWorktreeRoot(c.common); err != nil {
		return err
	}
	overlay, why, err := c.chooseTrees(ctx, s.root)
	if err != nil {
		return err
	}
	if c.suite.graded, err = c.gradedCandidate(ctx); err != nil {
		return err
	}
	if s.tr, err = c.treeRoot(ctx, c.workers()); err != nil {
		return err
	}
	if c.trees, err = sitepkg.OpenWorktrees(ctx, c.git, s.tr, c.workers(), c.baseSHA, c.suite.graded, overlay, lo); err != nil {
		return err
	}
	c.sayTrees(why, s.tr)
	return nil
}

func (c *checker) stageGoCaches(ctx context.Context, s *runState) (err error) {
	s.fill, err = c.warmGoCaches(ctx, s.tr)
	return err
}

func (c *checker) stageSuites(ctx context.Context, s *runState) error {
	if c.opts.Shard != nil || c.opts.Join != nil {
		c.suite.noImpact = "a check split across runners (--shard, --join) gates the same triples on every runner"
	}
	return c.expandSuites(ctx)
}

func (c *checker) stageProperties(ctx context.Context, s *runState) error {
	return c.gradeProperties(ctx)
}

func (c *checker) stageSeeds(ctx context.Context, s *runState) error {
	return c.seedSecret(ctx)
}

func (c *checker) stageCorpus(ctx context.Context, s *runState) error {
	if err := c.readCorpus(ctx); err != nil {
		return err
	}
	c.initPrepares()
	return nil
}

func (c *checker) stageTriples(ctx context.Context, s *runState) (err error) {
	s.jobs = c.orderSuites(c.jobs())
	s.pool = c.newPool(s.jobs)
	s.src, s.mine, s.shard, err = c.source(ctx, s.pool)
	return err
}

func (c *checker) stageAttempts(ctx context.Context, s *runState) error {
	total := len(s.mine)
	if c.opts.Join != nil {
		total = len(s.jobs) // this runner labels a part; the lines count it out of the whole
	}
	setup := time.Since(c.started) - s.fill
	c.progress.Start(total)
	err := fleet.Run(ctx, len(c.trees.Workers), s.src, s.pool, s.pool)
	c.progress.Finish()
	if err != nil {
		return err
	}
	c.keepTimings(setup, s.fill, time.Since(c.started))
	c.sayCorpus()
	return nil
}

func (c *checker) stageFreezes(ctx context.Context, s *runState) error {
	if c.opts.FreezeOwner == "" {
		return nil
	}
	return c.grantFreezes(ctx, s.jobs, s.pool.results)
}

func (c *checker) stageNewTests(ctx context.Context, s *runState) error {
	return c.runNewTests(ctx, s.root)
}

func (c *checker) stageSummary(ctx context.Context, s *runState) error {
	sum := &flakegate.Summary{Base: c.baseSHA, Candidate: c.candSHA, ConfigSHA256: c.cfgSHA, Shard: s.shard, Isolation: c.iso.Label(), Prepares: c.prepareRuns, Results: make([]flakegate.Result, len(s.mine))}
	for i, pos := range s.mine {
		sum.Results[i] = s.pool.results[pos].Result
	}
	if c.opts.Join != nil {
		// The summary of a joined check is the whole check's, read from
		// the queue once every runner's triples are labelled.
		var err error
		if sum, err = c.joinedSummary(ctx); err != nil {
			return err
		}
		sum.Isolation = c.iso.Label()
		sum.Prepares = c.prepareRuns
	}
	sum.RejectNewFlakes = c.cfg.RejectNewFlakes
	sum.NewTests, sum.RejectFlakyNewTests = c.suite.newTests, c.cfg.RejectFlakyNewTests
	sum.Impact = c.suite.impacts
	sum.SetVerdict()
	s.sum = sum
	return writeJSON(filepath.Join(c.outDir, "summary.json"), sum)
}
