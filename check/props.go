package check

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/grade/infra"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/transcript"
)

// propState is what a check learns once per property, in the freshly
// prepared worktrees: the digests of both sides (package grade's
// preflight).
type propState struct {
	index int
	prop  *config.Property
	key   string // "properties[i]" for messages

	basePropertySHA256 string
	candPropertySHA256 string // the base's when the candidate deleted the file
	baseFixtureSHA256  string
	candFixtureSHA256  string // grade.FixtureAbsent when the candidate has none
	candFixtureReason  string

	baseEnv, candEnv flakegate.Env
	watch            []string // watch_paths of its records (config, ledger, matched diff paths)
	contaminated     []string // watched paths of its triples found in the diff
	watchWhy         []string // for each contaminated path, the glob that watches it
	// graderEdits are the patch's edits to its test's file and world
	// that the graded tree took back (grade.Property): a failure of its
	// base version there is CONTAMINATED (record.go).
	graderEdits []grade.Edit

	prepareSHA256 string // digest of its prepare's command and environment ("" for none)

	framework   string           // batch.EvidenceFramework of the property
	runSHA256   string           // digest of the argv template
	corpus      []flakegate.Seed // the failure corpus's seeds for this base (corpus.go)
	entrySHA256 string           // digest of the config entry
}

// gradeProperties makes the check's grader, notes the tests the patch
// changes and runs the preflight, once the graded candidate is made and
// the suites are listed.
func (c *checker) gradeProperties(ctx context.Context) error {
	c.grader = c.newGrader()
	if err := c.noteChangedTests(ctx); err != nil {
		return err
	}
	return c.preflight(ctx)
}

// newGrader is the check's grader (package grade), once its graded
// candidate is made and its suites are listed.
func (c *checker) newGrader() *grade.Grader {
	return &grade.Grader{Git: c.git, BaseSHA: c.baseSHA, CandSHA: c.candSHA, GradedSHA: c.suite.graded, Graded: c.graded,
		Config: c.cfg, ConfigPath: c.cfgPath, Watch: c.watch, Diff: c.diff, Finder: infra.New(c.git, c.baseSHA),
		Env: c.iso.Env, Vars: batch.Vars, SuiteFiles: func(i int) []string {
			list := c.suite.lists[i]
			if list == nil {
				return nil
			}
			files := make([]string, 0, len(list.Tests))
			for _, t := range list.Tests {
				files = append(files, t.File)
			}
			return files
		}}
}

// preflight checks every property against the base worktree and digests
// the property files and fixtures on both sides (grade.Grader.Preflight).
func (c *checker) preflight(ctx context.Context) error {
	base, cand := c.trees.Workers[0].Base.Dir, c.trees.Workers[0].Cand[0].Dir
	baseFS, err := fileSystem(base)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: base, Message: "statfs", Err: err}
	}
	candFS, err := fileSystem(cand)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: cand, Message: "statfs", Err: err}
	}
	for i := range c.cfg.Properties {
		p := &c.cfg.Properties[i]
		key := fmt.Sprintf("properties[%d]", i)
		g, err := c.grader.Preflight(ctx, key, p, base, cand)
		if err != nil {
			return err
		}
		budget := p.WallBudget.Seconds()
		c.props = append(c.props, &propState{index: i, prop: p, key: key,
			basePropertySHA256: g.BasePropertySHA256, candPropertySHA256: g.CandPropertySHA256,
			baseFixtureSHA256: g.BaseFixtureSHA256, candFixtureSHA256: g.CandFixtureSHA256, candFixtureReason: g.CandFixtureReason,
			baseEnv: flakegate.Env{Workers: c.cfg.Workers, ClockBudgetS: budget, Filesystem: baseFS},
			candEnv: flakegate.Env{Workers: c.cfg.Workers, ClockBudgetS: budget, Filesystem: candFS},
			watch:   g.Watch, contaminated: g.Contaminated, watchWhy: g.WatchWhy, graderEdits: g.GraderEdits,
			framework: batch.EvidenceFramework(p), runSHA256: g.RunSHA256, entrySHA256: g.EntrySHA256})
	}
	return nil
}

// checkBaseFile requires rel to exist in the base worktree and to stay
// inside it once symlinks are followed (grade.CheckBaseFile).
func (c *site) checkBaseFile(root, key, rel, what string) error {
	return grade.CheckBaseFile(c.cfgPath, c.baseSHA, root, key, rel, what)
}

// ExplainWatch lists what each property of b's config watches, with the
// file ledger at ledgerPath ("" for none), without running anything.
func ExplainWatch(ctx context.Context, b *sitepkg.Base, ledgerPath string) ([]grade.WatchList, error) {
	ledger, err := ledgerWatch(b.Top, ledgerPath)
	if err != nil {
		return nil, err
	}
	return grade.ExplainWatch(ctx, b.Config, b.ConfigPath, ledger, infra.New(b.Git, b.SHA))
}

// noteChangedTests finds which of the base's tests, the properties' and
// the suites' listings', the patch changes (grade.Grader.ChangedTests):
// such a test's candidate version is a new test (runNewTests), and a
// failure of its base version names it.
func (c *checker) noteChangedTests(ctx context.Context) error {
	var tests []grade.Test
	for i := range c.cfg.Properties {
		if p := &c.cfg.Properties[i]; p.Suite == nil {
			tests = append(tests, grade.Test{Framework: p.Framework, File: p.Path, Name: p.Name})
		}
	}
	for i, list := range c.suite.lists {
		for _, t := range list.Tests {
			tests = append(tests, grade.Test{Framework: c.cfg.Suites[i].Framework, File: t.File, Name: t.Name})
		}
	}
	changed, err := c.grader.ChangedTests(ctx, tests)
	c.suite.changed = changed
	return err
}

// changedKey names a test in suiteState.changed (grade.ChangedKey).
func changedKey(framework, file, name string) string { return grade.ChangedKey(framework, file, name) }

// testChanged reports whether the patch changes the test of p (its own
// source or what it reaches: noteChangedTests).
func (c *checker) testChanged(p *config.Property) bool {
	return c.suite.changed[changedKey(p.Framework, p.Path, p.Name)]
}

// graderEdits are the edits of the patch that make this run of its
// test CONTAMINATED (grade.GraderEdits).
func (r *tripleRun) graderEdits() []grade.Edit {
	return grade.GraderEdits(r.j.ps.graderEdits, r.t.skippedWhy != "", r.t.Candidate, r.t.Base)
}

// graderKeys adds to the record what graderEdits makes it
// (grade.AddGraderKeys).
func (r *tripleRun) graderKeys(rec *flakegate.RunRecord) { grade.AddGraderKeys(rec, r.graderEdits()) }

// graderReason is the reason of a triple graderKeys made CONTAMINATED
// (grade.GraderReason).
func (r *tripleRun) graderReason() string {
	p := r.j.ps.prop
	return grade.GraderReason(p, r.graderEdits(), r.t.Candidate, r.c.testChanged(p))
}

// layerWrites lists what the prepared layer pt wrote to its tree
// (grade.LayerWrites).
func (c *site) layerWrites(pt *preparedTree) error {
	wrote, err := grade.LayerWrites(filepath.Join(pt.Dir, "tree"))
	pt.wrote = wrote
	return err
}

// watchPrepares holds what the prepares of ps wrote against what ps is
// graded on (grade.Grader.PrepareHits), once per property (under
// prepareMu).
func (c *checker) watchPrepares(ctx context.Context, ps *propState) error {
	if c.preparedWatch(ps) != nil {
		return nil
	}
	var sides []grade.Prepared
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		if pt := c.preparedFor(ps, side); pt != nil && pt.OK {
			sides = append(sides, grade.Prepared{Side: side, Wrote: pt.wrote, Tree: filepath.Join(pt.Dir, "tree")})
		}
	}
	pw, err := c.grader.PrepareHits(ctx, ps.prop, sides)
	if err != nil {
		return err
	}
	c.prepWatchMu.Lock()
	c.prepWatch[ps.index] = pw
	c.prepWatchMu.Unlock()
	return nil
}

// preparedWatch is what the prepares of ps did, nil before they ran.
func (c *checker) preparedWatch(ps *propState) *grade.PrepareWatch {
	c.prepWatchMu.Lock()
	defer c.prepWatchMu.Unlock()
	return c.prepWatch[ps.index]
}

// fixtureDigests are the fixture digests the attempts of ps see, on the
// candidate and on base: the committed ones unless a prepare rewrote the
// fixture.
func (c *checker) fixtureDigests(ps *propState) (cand, base string) {
	return c.preparedWatch(ps).Fixtures(ps.candFixtureSHA256, ps.baseFixtureSHA256)
}

// prepareWrote lists the watched paths the candidate's prepare of ps
// wrote (nil when none, or before it ran).
func (c *checker) prepareWrote(ps *propState) []string {
	if pw := c.preparedWatch(ps); pw != nil {
		return pw.CandWrote
	}
	return nil
}

// basePrepareWrote says why the base's prepare of ps makes its triples
// INCOMPLETE: it wrote a watched path ("" when it did not).
func (c *checker) basePrepareWrote(ps *propState) string {
	return c.preparedWatch(ps).BaseWroteWhy()
}
