// One batch: many triples run as one process per attempt (a side, a
// tree, a seed, a command), each triple judged from the framework's
// per-test report and written to its own transcript and record.
//
// The order of a batch's attempts is the order of a triple's, made once
// for all members by the same Driver (package batch, drive.go): the
// first candidate attempt; the base seed of every member (the replay
// cache per triple, the others in one base batch); the retries; the flake
// probe. This file makes the processes the Driver asks for (batchRunner,
// runner.go).
//
// A retry is the same batch again: the same members, in the same order,
// with the same seed, on the candidate tree. The retry results of the
// members that failed are taken from it; the others keep their first
// result. So a failure that needs the tests before it (a leak, shared
// state, an order) fails again in the retry, and the triple is PROPERTY:
// a retry that ran the test alone would pass, and turn a real regression
// into SCHEDULER, which earns a freeze.

package check

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/fleet"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/transcript"
)

// batchMember is one triple of a running batch: m is the triple as the
// Driver knows it.
type batchMember struct {
	r      *tripleRun
	m      *batch.Member
	voided string
}

// batchRun is a batch's members on one worker's trees.
type batchRun struct {
	c       *checker
	trees   *sitepkg.WorkerTrees
	members []*batchMember // in the order of the batch's command
	shape   *batch.Shape
}

// runBatch runs the triples of jobs (planned together, planBatches) on
// worker w's trees. Triples the ledger skips, or that run no attempt,
// are settled one by one; the others run as one batch (alone, exactly as
// runTriple runs them, when only one is left: but a suite's test runs as
// a batch of one, with its known answers, suiteMember).
func (c *checker) runBatch(ctx context.Context, w int, jobs []*job) ([]fleet.Finished, error) {
	var out []fleet.Finished
	var live []*batchMember
	trees := c.trees.Workers[w]
	for _, j := range jobs {
		r, finish, voided, err := c.beginTriple(ctx, w, j)
		if err != nil {
			return nil, err
		}
		if finish == nil && r.skipWhy() != "" {
			if err := r.run(ctx, trees); err != nil {
				return nil, err
			}
			finish = func() (fleet.Outcome, error) { return r.record(ctx, voided) }
		}
		if finish != nil {
			out = append(out, fleet.Finished{Pos: j.index, Finish: finish})
			continue
		}
		live = append(live, &batchMember{r: r, voided: voided})
	}
	if len(live) == 1 && !suiteMember(live[0].r.j) {
		m := live[0]
		if err := m.r.run(ctx, trees); err != nil {
			return nil, err
		}
		return append(out, fleet.Finished{Pos: m.r.j.index, Finish: func() (fleet.Outcome, error) { return m.r.record(ctx, m.voided) }}), nil
	}
	if len(live) == 0 {
		return out, nil
	}
	b := &batchRun{c: c, trees: trees, members: live, shape: live[0].r.j.shape}
	start := time.Now()
	for _, m := range live {
		m.r.trees = trees
		m.r.t = transcriptRun{Tally: batch.Tally{BudgetOK: true, Complete: true, Retries: []string{}}}
		if err := m.r.open(true); err != nil {
			return nil, err
		}
	}
	if err := b.drive(ctx); err != nil {
		for _, m := range live {
			m.r.t.tr.Close() //nolint:errcheck // the check fails with err
		}
		return nil, err
	}
	secs := attempt.Seconds(time.Since(start))
	for _, m := range live {
		m.r.write(transcript.Event{Type: transcript.EventComplete})
		m.r.t.seconds = secs
		out = append(out, fleet.Finished{Pos: m.r.j.index, Finish: func() (fleet.Outcome, error) { return m.r.record(ctx, m.voided) }})
	}
	return out, nil
}

// attempt makes one batched attempt of members on side in tree at and
// puts each started member's result into results; it returns the
// members a killed batch never started (nothing is written for them).
// Members keep does not take run in the process, in their place, but
// take no result from it and nothing is written to their transcripts.
func (b *batchRun) attempt(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *sitepkg.Tree, results map[*batchMember]batch.Outcome) ([]*batchMember, error) {
	c := b.c
	defer c.timeProcess(b.members[0].r.j.ps.prop, side, time.Now()) // timings.go
	defer at.Release(c.resetClean)
	if err := at.Acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: at.Dir,
			Message: "cannot reset the worktree for the " + side + " batch", Err: err,
			Hint: "a git process may have died there (look for index.lock under the repository's .git/worktrees); remove what it left and run the check again"}
	}
	started := time.Now()
	run, err := b.runnable(ctx, side, members, keep, index, at, started, results)
	if err != nil || len(run) == 0 {
		return nil, err
	}
	shapes := make([]*batch.Shape, len(run))
	labels := make([]string, len(run))
	var budget time.Duration
	for i, m := range run {
		shapes[i] = m.r.j.shape
		labels[i] = memberLabel(m.r.j)
		budget += m.r.j.ps.prop.WallBudget
	}
	rep := batch.NewReport(b.shape.Framework, at.Dir)
	sum := sha256.New()
	cmd := attempt.Command{Dir: at.Dir, Env: c.iso.Env, WallBudget: budget, NoTestMarkers: []string{},
		Sandbox: c.attemptSandbox(at, run[0].r.j.ps), Output: io.MultiWriter(rep, sum)}
	known, undo, err := batch.ArmKnown(&cmd, batch.KnownPlan{Framework: b.shape.Framework, Dir: at.Dir, Members: shapes, Seed: run[0].r.j.seed, GoList: b.goList,
		Draws: &c.knownDraws, Tree: knownTree(at)}, b.shape)
	if err != nil {
		b.noteAll(run, keep, side, index, attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: started, Reason: err.Error()}, results)
		return nil, nil
	}
	defer undo()
	named := cmd.Argv // a go batch's command, as its record names it whichever process runs it (gocache/binary.go)
	if b.shape.Framework == evidence.FrameworkGo {
		c.goBuilds.Use(ctx, &cmd, knownTree(at), batch.GoModule(rep)) // gocache/build.go, binary.go
	}
	stream, streamed := b.batchStream(side, index(run[0]), len(run), known) // batchstream.go: progress only
	if stream != nil {
		cmd.Output = io.MultiWriter(rep, sum, stream)
	}
	file, argv, err := b.reportFile(&cmd, named)
	if err != nil {
		return nil, err
	}
	if file != "" {
		defer os.RemoveAll(filepath.Dir(file))
	}
	if side == transcript.SideCandidate {
		// As for a triple alone (attempt.go), a candidate batch whose
		// members all pass keeps what it read in the page cache: that
		// ends every member's attempts, so no retry follows that could
		// tell it ran. Its known answer fails, so it exits 1.
		cmd.KeepCache = func(code int) bool { return b.allPassed(rep, file, cmd, known, code, run) }
	}
	out := attempt.Run(ctx, cmd)
	streamed()
	batch.ReadReportFile(rep, file, cmd)
	verdict := known.Judge(rep, out)
	info := &transcript.Batch{Argv: argv, Members: labels, OutputSHA256: hex.EncodeToString(sum.Sum(nil)),
		OutputBytes: out.OutputBytes, ExitCode: out.ExitCode, WallSeconds: attempt.Seconds(out.Wall), KnownAnswers: verdict.Entries}
	var unstarted []*batchMember
	for _, m := range run {
		if !keep(m) {
			continue
		}
		tr := rep.Of(m.r.j.shape)
		o, rerun := b.memberOutcome(m, rep, tr, out, len(run), budget)
		if why := verdict.Wrong[batch.KnownScope(m.r.j.shape)]; why != "" && !rerun && (o.Result == attempt.Pass || o.Result == attempt.Fail) {
			if out.Result == attempt.Timeout {
				// Killed before its known answers could run: what it
				// says of this member is not trusted, and it runs again.
				rerun = true
			} else {
				o.Result, o.Reason = attempt.Errored, batch.KnownReason(why)
			}
		}
		if rerun {
			unstarted = append(unstarted, m)
			continue
		}
		if o.Tail == "" && o.Result == attempt.Errored {
			o.Tail = out.Tail
		}
		if o.Result == attempt.Timeout && side == transcript.SideCandidate && m.r.t.budgetWhy == "" {
			m.r.t.budgetWhy = o.Reason + fmt.Sprintf(" (candidate attempt %d)", index(m))
		}
		m.r.write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index(m), At: started})
		if ctx.Err() != nil {
			m.r.t.Complete = false
		}
		m.r.note(side, index(m), &o, info)
		// A test the report says is not there leaves later processes.
		results[m] = batch.Outcome{Result: o.Result, Absent: o.Result == attempt.Errored && !tr.Started}
	}
	return unstarted, nil
}

// reportFile adds the report file of the batch's framework to cmd
// (batch.AddReportFile) and returns it with the argv the batch's record
// names: cmd's, but a go batch's go test command (named) whichever
// process runs it (gocache/binary.go).
func (b *batchRun) reportFile(cmd *attempt.Command, named []string) (string, []string, error) {
	file, err := batch.AddReportFile(cmd, b.shape.Framework)
	if b.shape.Framework == evidence.FrameworkGo {
		return file, named, err
	}
	return file, cmd.Argv, err
}

// noteAll writes out as the attempt of each member of run that keep
// takes: none of them ran.
func (b *batchRun) noteAll(run []*batchMember, keep func(*batchMember) bool, side string, index func(*batchMember) int, out attempt.Outcome, results map[*batchMember]batch.Outcome) {
	for _, m := range run {
		if keep(m) {
			o := out
			b.noteOne(m, side, index(m), &o, nil)
			results[m] = batch.Outcome{Result: o.Result}
		}
	}
}

// goList is a go package's test list as the base's listing printed it,
// for a suite's batch (nil otherwise): the list go test -shuffle
// permutes (known.go checks the order against it).
func (b *batchRun) goList(pkg string) []string {
	s := b.members[0].r.j.ps.prop.Suite
	if s == nil || b.c.suite.lists == nil || b.c.suite.lists[s.Index] == nil {
		return nil
	}
	return b.c.suite.lists[s.Index].PkgTests[pkg]
}

// allPassed reports, once the batch cmd ended with code, whether its
// report shows every member of run passed and its known answers as
// planted.
func (b *batchRun) allPassed(rep batch.Report, file string, cmd attempt.Command, known *batch.KnownSet, code int, run []*batchMember) bool {
	batch.ReadReportFile(rep, file, cmd)
	if v := known.Judge(rep, attempt.Outcome{ExitCode: code}); len(v.Wrong) > 0 {
		return false
	}
	for _, m := range run {
		if rep.Of(m.r.j.shape).Result != attempt.Pass {
			return false
		}
	}
	return true
}

// runnable is the members of a batch that run in it: on the base side,
// a member whose base tree is not the one its property needs gets an
// error of its own instead (and results says so).
func (b *batchRun) runnable(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *sitepkg.Tree, started time.Time, results map[*batchMember]batch.Outcome) ([]*batchMember, error) {
	var run []*batchMember
	for _, m := range members {
		if side == transcript.SideCandidate || !keep(m) {
			run = append(run, m)
			continue
		}
		why, err := b.c.checkBaseTree(ctx, m.r.j.ps, at)()
		if err != nil {
			return nil, err
		}
		if why != "" {
			out := attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: started, Reason: why}
			b.noteOne(m, side, index(m), &out, nil)
			results[m] = batch.Outcome{Result: out.Result}
			continue
		}
		run = append(run, m)
	}
	return run, nil
}

// memberOutcome is member m's outcome in a batch of n members that
// ended as out, from its report tr (in rep, the batch's); rerun says it never started in a
// killed batch (or the report asks for it again): it runs in a batch of
// its own.
func (b *batchRun) memberOutcome(m *batchMember, rep batch.Report, tr evidence.TestReport, out attempt.Outcome, n int, budget time.Duration) (o attempt.Outcome, rerun bool) {
	return batch.Judge(b.shape.Framework, memberLabel(m.r.j), m.r.j.ps.prop.WallBudget, rep, tr, out, n, budget)
}

// noteOne writes an attempt of m that did not run in the batch's process.
func (b *batchRun) noteOne(m *batchMember, side string, index int, out *attempt.Outcome, info *transcript.Batch) {
	m.r.write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index, At: out.Started})
	m.r.note(side, index, out, info)
}

// memberLabel names a triple among a batch's members.
func memberLabel(j *job) string { return batch.Label(j.ps.prop.Path, j.ps.prop.Name) }

// knownTree is the key of a tree's known answers (batch.KnownPlan.Tree):
// its side and revision, the same in every worker's copy.
func knownTree(t *sitepkg.Tree) string {
	if t.SHA == "" {
		return ""
	}
	return t.Side + " " + t.SHA
}
