// One run's process of new tests: each test's batch shape, the command
// in the suite's sandbox with its known answers, and each test judged
// from the framework's report.

package newtests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// Shape is the batch shape of one run of new test t of suite s, with
// order seed seed (list is the suite's list on the candidate's tree).
func Shape(s *config.Suite, list *suites.List, t suites.Test, seed flakegate.Seed) *batch.Shape {
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

// process runs one process of new tests and returns each one's report,
// in the order of shapes.
func (r *Runner) process(ctx context.Context, s *config.Suite, t *site.Tree, shapes []*batch.Shape, seed flakegate.Seed) ([]evidence.TestReport, error) {
	sb, err := r.Env.Sandbox(ctx, t, s)
	if err != nil {
		return nil, err
	}
	if err := t.Acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree for a new test", Err: err}
	}
	defer t.Release(r.Env.Reset)
	rep := batch.NewReport(shapes[0].Framework, t.Dir)
	cmd := attempt.Command{Dir: t.Dir, Env: r.Env.Iso.Env, WallBudget: s.WallBudget, NoTestMarkers: []string{},
		Sandbox: sb, Output: rep}
	// Known answers, as in every batch (batch/known.go): a run whose
	// report the test process wrote counts as passed by no new test.
	known, undo, err := batch.ArmKnown(&cmd, batch.KnownPlan{Framework: shapes[0].Framework, Dir: t.Dir, Members: shapes, Seed: seed,
		Draws: r.Draws, Tree: r.TreeKey(t)}, shapes[0])
	if err != nil {
		return nil, err
	}
	defer undo()
	if shapes[0].Framework == evidence.FrameworkGo {
		r.Build(ctx, &cmd, r.TreeKey(t), batch.GoModule(rep)) // gocache/build.go, binary.go
	}
	file, err := batch.AddReportFile(&cmd, shapes[0].Framework)
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
		got[n] = judge(rep.Of(sh), verdict.Wrong[batch.KnownScope(sh)], o, s.WallBudget)
	}
	return got, nil
}

// judge is a new test's result in one run, from its report tr: an error
// when the process's known answers came out wrong (wrong says how) and
// tr claims a pass or a fail, the process's timeout or an error when
// the report lacks it, a timeout when its own time is over budget.
func judge(tr evidence.TestReport, wrong string, o attempt.Outcome, budget time.Duration) evidence.TestReport {
	switch {
	case wrong != "" && (tr.Result == attempt.Pass || tr.Result == attempt.Fail):
		tr.Result, tr.Reason = attempt.Errored, batch.KnownReason(wrong)
	case tr.Result == "" && o.Result == attempt.Timeout:
		tr.Result, tr.Reason = attempt.Timeout, "the run was killed: "+o.Reason
	case tr.Result == "":
		tr.Result = attempt.Errored
		if tr.Reason == "" {
			tr.Reason = "absent from the run's report"
		}
	case budget > 0 && tr.Elapsed > budget:
		tr.Result, tr.Reason = attempt.Timeout, fmt.Sprintf("its own time %.1fs is over the suite's wall budget %s", tr.Elapsed.Seconds(), budget)
	}
	return tr
}
