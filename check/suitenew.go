// The tests a candidate adds to a suite (absent from the base's list, so
// no base can replay them and they are no triples), and those whose
// source it changes (graded.go, noteChangedTests: their base version
// still runs as triples on the graded tree). Each runs
// new_test_runs times on the candidate's own tree (the graded tree of the
// triples leaves the patch's new test files out, check/suite.go): run k
// is one process per Go package (one per pytest, vitest or jest suite)
// holding every new test of it, in the order of order seed k (go
// -shuffle=k; pytest's node ids sorted as suites.Rank does; vitest
// --sequence.shuffle --sequence.seed=k, jest --randomize --seed=k). A run's result comes from the
// framework's report, as for a batch (evidence/gojson.go,
// evidence/junit.go, evidence/jsreport.go).

package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
	"github.com/flakegate/flakegate/transcript"
)

// suitePath is the suite path of j's test, "" for a property.
func suitePath(j *job) string {
	if s := j.ps.prop.Suite; s != nil {
		return s.Path
	}
	return ""
}

// runNewTests lists every suite on the candidate's own tree and runs
// the tests the base does not list new_test_runs times, into
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
	for i := range c.cfg.Suites {
		s := &c.cfg.Suites[i]
		list, err := c.suitesEnv().List(ctx, s, t, false)
		if err != nil {
			return err
		}
		fresh := suites.Fresh(s, c.suite.lists[i], list, func(t suites.Test) bool {
			return c.suite.changed[changedKey(s.Framework, t.File, t.Name)]
		})
		if len(fresh) == 0 {
			continue
		}
		got, err := c.tryNewTests(ctx, s, list, t, fresh)
		if err != nil {
			return err
		}
		for _, nt := range got {
			c.progress.Note(NoteTopic, fmt.Sprintf("new test %s::%s: %d of %d passed%s", nt.Path, nt.Name, nt.Passed, nt.Runs, reasonSuffix(nt.Reason)))
		}
		c.suite.newTests = append(c.suite.newTests, got...)
	}
	return nil
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// tryNewTests runs the new tests of suite s new_test_runs times on t.
func (c *checker) tryNewTests(ctx context.Context, s *config.Suite, list *suites.List, t *sitepkg.Tree, fresh []suites.Test) ([]flakegate.NewTest, error) {
	runs := c.cfg.NewTestRuns
	out := make([]flakegate.NewTest, len(fresh))
	groups := map[string][]int{} // go: by package; pytest: one group
	var keys []string
	for k, ft := range fresh {
		out[k] = flakegate.NewTest{Suite: s.Path, Path: ft.File, Name: ft.Name, Runs: runs}
		if _, ok := groups[ft.Pkg]; !ok {
			keys = append(keys, ft.Pkg)
		}
		groups[ft.Pkg] = append(groups[ft.Pkg], k)
	}
	for run := 1; run <= runs; run++ {
		seed := flakegate.Seed(strconv.Itoa(run))
		for _, key := range keys {
			idx := append([]int(nil), groups[key]...)
			if s.Framework == config.FrameworkPytest {
				sort.SliceStable(idx, func(a, b int) bool {
					return suites.Rank(seed, memberOf(fresh[idx[a]])) < suites.Rank(seed, memberOf(fresh[idx[b]]))
				})
			}
			shapes := make([]*batch.Shape, len(idx))
			for n, k := range idx {
				shapes[n] = newTestShape(s, list, fresh[k], seed)
			}
			reports, err := c.runNewBatch(ctx, s, t, shapes, seed)
			if err != nil {
				return nil, err
			}
			for n, k := range idx {
				tr, nt := reports[n], &out[k]
				nt.Results = append(nt.Results, tr.Result)
				if tr.Result == attempt.Pass {
					nt.Passed++
				} else if tr.Result != attempt.Fail && nt.Reason == "" && tr.Reason != "" {
					nt.Reason = fmt.Sprintf("run %d: %s", run, tr.Reason)
				}
			}
		}
	}
	return out, nil
}

// newTestShape is the batch shape of one run of a new test.
func newTestShape(s *config.Suite, list *suites.List, t suites.Test, seed flakegate.Seed) *batch.Shape {
	if s.Framework == config.FrameworkGo {
		lead := []string{"-shuffle=" + seed.String(), "-count=1", "-timeout=0"}
		var trail []string
		if list.Rapid[t.Pkg] {
			trail = []string{"-rapid.seed=" + seed.String()}
		}
		return &batch.Shape{Framework: evidence.FrameworkGo, Lead: lead, Trail: trail, Pkg: t.Pkg, Test: t.Name}
	}
	if batch.IsJS(s.Framework) {
		return &batch.Shape{Framework: s.Framework, Lead: suites.JSSuiteLead(s.Framework, seed.String()), Trail: []string{"-t", batch.JSNameSlot}, Pkg: t.File, Test: t.Name}
	}
	var trail []string
	if list.Hypothesis {
		trail = []string{"--hypothesis-seed=" + seed.String()}
	}
	return &batch.Shape{Framework: evidence.FrameworkPytest, Lead: suites.PytestArgv(s, list.Python), Trail: trail, Test: t.File + "::" + t.Name}
}

// memberOf is a suite test's "file::name".
func memberOf(t suites.Test) string { return t.File + "::" + t.Name }

// runNewBatch runs one process of new tests and returns each one's
// report, in the order of shapes.
func (c *checker) runNewBatch(ctx context.Context, s *config.Suite, t *sitepkg.Tree, shapes []*batch.Shape, seed flakegate.Seed) ([]evidence.TestReport, error) {
	sb, err := c.suitesEnv().Sandbox(ctx, t, s)
	if err != nil {
		return nil, err
	}
	if err := t.Acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree for a new test", Err: err}
	}
	defer t.Release(c.resetClean)
	rep := batch.NewReport(shapes[0].Framework, t.Dir)
	cmd := attempt.Command{Dir: t.Dir, Env: c.iso.Env, WallBudget: s.WallBudget, NoTestMarkers: []string{},
		Sandbox: sb, Output: rep}
	// Known answers, as in every batch (known.go): a run whose report
	// the test process wrote counts as passed by no new test.
	known, undo, err := batch.ArmKnown(&cmd, batch.KnownPlan{Framework: shapes[0].Framework, Dir: t.Dir, Members: shapes, Seed: seed,
		Draws: &c.knownDraws, Tree: knownTree(t)}, shapes[0])
	if err != nil {
		return nil, err
	}
	defer undo()
	if shapes[0].Framework == evidence.FrameworkGo {
		c.goBuilds.Use(ctx, &cmd, knownTree(t)) // gocache/build.go
	}
	file, err := batch.AddReportFile(&cmd, shapes[0].Framework) // batch.go
	if err != nil {
		return nil, err
	}
	if file != "" {
		defer os.RemoveAll(filepath.Dir(file))
	}
	o := attempt.Run(ctx, cmd)
	if ctx.Err() != nil {
		return nil, flakegate.Interrupted(ctx)
	}
	batch.ReadReportFile(rep, file, cmd)
	verdict := known.Judge(rep, o)
	got := make([]evidence.TestReport, len(shapes))
	for n, sh := range shapes {
		tr := rep.Of(sh)
		switch {
		case verdict.Wrong[batch.KnownScope(sh)] != "" && (tr.Result == attempt.Pass || tr.Result == attempt.Fail):
			tr.Result, tr.Reason = attempt.Errored, batch.KnownReason(verdict.Wrong[batch.KnownScope(sh)])
		case tr.Result == "" && o.Result == attempt.Timeout:
			tr.Result, tr.Reason = attempt.Timeout, "the run was killed: "+o.Reason
		case tr.Result == "":
			tr.Result = attempt.Errored
			if tr.Reason == "" {
				tr.Reason = "absent from the run's report"
			}
		case s.WallBudget > 0 && tr.Elapsed > s.WallBudget:
			tr.Result, tr.Reason = attempt.Timeout, fmt.Sprintf("its own time %.1fs is over the suite's wall budget %s", tr.Elapsed.Seconds(), s.WallBudget)
		}
		got[n] = tr
	}
	return got, nil
}
