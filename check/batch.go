// One batch: many triples run as one process per attempt (a side, a
// tree, a seed, a command), each triple judged from the framework's
// per-test report and written to its own transcript and record.
//
// The order of a batch's attempts is the order of a triple's (triple.go,
// attempts), made once for all members: the first candidate attempt; the
// base seed of every member (the replay cache per triple, the others in
// one base batch); the retries; the flake probe.
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
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/transcript"
)

// batchMember is one triple of a running batch.
type batchMember struct {
	r      *tripleRun
	voided string
	// absent is set once a report says the test is not there: later
	// batches (retries, probes) run without it.
	absent bool
}

// batchRun is a batch's members on one worker's trees.
type batchRun struct {
	c       *checker
	trees   *workerTrees
	members []*batchMember // in the order of the batch's command
	shape   *batchShape
}

// runBatch runs the triples of jobs (planned together, planBatches) on
// worker w's trees. Triples the ledger skips, or that run no attempt,
// are settled one by one; the others run as one batch (alone, exactly as
// runTriple runs them, when only one is left: but a suite's test runs as
// a batch of one, with its known answers, suiteMember).
func (c *checker) runBatch(ctx context.Context, w int, jobs []*job) ([]fleet.Finished, error) {
	var out []fleet.Finished
	var live []*batchMember
	trees := c.trees.workers[w]
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
	if err := b.attempts(ctx); err != nil {
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

// attempts runs the batch's attempts, in the order of a triple's.
func (b *batchRun) attempts(ctx context.Context) error {
	first, err := b.settle(ctx, transcript.SideCandidate, b.members, all, zero, b.trees.nextCandidate)
	if err != nil {
		return err
	}
	for _, m := range b.members {
		t := &m.r.t
		switch first[m] {
		case attempt.Pass:
			t.Candidate = attempt.Pass
		case attempt.Fail:
			t.Candidate = attempt.Fail
		case attempt.Timeout:
			t.Candidate, t.BudgetOK = attempt.Fail, false
		default:
			t.Candidate = attempt.Errored
		}
	}
	if err := b.bases(ctx); err != nil {
		return err
	}
	if err := b.retries(ctx); err != nil {
		return err
	}
	return b.probes(ctx)
}

// settle runs members as one attempt on side (index gives each member's
// attempt index) and returns each member's result. Members a killed
// batch never started run again in a batch of their own, a fresh attempt
// with the same index, until each has a result.
func (b *batchRun) settle(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, tree func() *tree) (map[*batchMember]string, error) {
	results := map[*batchMember]string{}
	todo := members
	for len(todo) > 0 {
		unstarted, err := b.attempt(ctx, side, todo, keep, index, tree(), results)
		if err != nil {
			return nil, err
		}
		if len(unstarted) == 0 {
			break
		}
		if len(unstarted) == len(todo) {
			// Killed before any test started (a build as long as the
			// budget): no batch of fewer members would do better.
			for _, m := range unstarted {
				out := attempt.Outcome{Result: attempt.Timeout, ExitCode: -1, Started: time.Now(),
					Reason: "the batch was killed at its budget before this test started"}
				b.noteOne(m, side, index(m), &out, nil)
				results[m] = out.Result
			}
			break
		}
		todo = unstarted
	}
	return results, nil
}

// attempt makes one batched attempt of members on side in tree at and
// puts each started member's result into results; it returns the
// members a killed batch never started (nothing is written for them).
// Members keep does not take run in the process, in their place, but
// take no result from it and nothing is written to their transcripts.
func (b *batchRun) attempt(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *tree, results map[*batchMember]string) ([]*batchMember, error) {
	c := b.c
	defer c.timeProcess(b.members[0].r.j.ps.prop, side, time.Now()) // timings.go
	defer at.release(c.resetClean)
	if err := at.acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: at.dir,
			Message: "cannot reset the worktree for the " + side + " batch", Err: err,
			Hint: "a git process may have died there (look for index.lock under the repository's .git/worktrees); remove what it left and run the check again"}
	}
	started := time.Now()
	run, err := b.runnable(ctx, side, members, keep, index, at, started, results)
	if err != nil || len(run) == 0 {
		return nil, err
	}
	shapes := make([]*batchShape, len(run))
	labels := make([]string, len(run))
	var budget time.Duration
	for i, m := range run {
		shapes[i] = m.r.j.shape
		labels[i] = memberLabel(m.r.j)
		budget += m.r.j.ps.prop.WallBudget
	}
	rep := newBatchReport(b.shape.framework, at.dir)
	sum := sha256.New()
	cmd := attempt.Command{Dir: at.dir, Env: c.iso.env, WallBudget: budget, NoTestMarkers: []string{},
		Sandbox: c.attemptSandbox(at, run[0].r.j.ps), Output: io.MultiWriter(rep, sum)}
	known, undo, err := armKnown(&cmd, knownPlan{framework: b.shape.framework, dir: at.dir, members: shapes, seed: run[0].r.j.seed, goList: b.goList}, b.shape)
	if err != nil {
		b.noteAll(run, keep, side, index, attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: started, Reason: err.Error()}, results)
		return nil, nil
	}
	defer undo()
	stream, streamed := b.batchStream(side, index(run[0]), len(run), known) // batchstream.go: progress only
	if stream != nil {
		cmd.Output = io.MultiWriter(rep, sum, stream)
	}
	file, err := batchReportFile(&cmd, b.shape.framework)
	if err != nil {
		return nil, err
	}
	if file != "" {
		defer os.RemoveAll(filepath.Dir(file))
	}
	argv := cmd.Argv
	if side == transcript.SideCandidate {
		// As for a triple alone (attempt.go), a candidate batch whose
		// members all pass keeps what it read in the page cache: that
		// ends every member's attempts, so no retry follows that could
		// tell it ran. Its known answer fails, so it exits 1.
		cmd.KeepCache = func(code int) bool { return b.allPassed(rep, file, cmd, known, code, run) }
	}
	out := attempt.Run(ctx, cmd)
	streamed()
	readReportFile(rep, file, cmd)
	verdict := known.judge(rep, out)
	info := &transcript.Batch{Argv: argv, Members: labels, OutputSHA256: hex.EncodeToString(sum.Sum(nil)),
		OutputBytes: out.OutputBytes, ExitCode: out.ExitCode, WallSeconds: attempt.Seconds(out.Wall), KnownAnswers: verdict.entries}
	var unstarted []*batchMember
	for _, m := range run {
		if !keep(m) {
			continue
		}
		tr := rep.report(m.r.j.shape)
		o, rerun := b.memberOutcome(m, rep, tr, out, len(run), budget)
		if why := verdict.wrong[knownScope(m.r.j.shape)]; why != "" && !rerun && (o.Result == attempt.Pass || o.Result == attempt.Fail) {
			if out.Result == attempt.Timeout {
				// Killed before its known answers could run: what it
				// says of this member is not trusted, and it runs again.
				rerun = true
			} else {
				o.Result, o.Reason = attempt.Errored, knownReason(why)
			}
		}
		if rerun {
			unstarted = append(unstarted, m)
			continue
		}
		if o.Result == attempt.Errored && !tr.Started {
			m.absent = true
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
		results[m] = o.Result
	}
	return unstarted, nil
}

// noteAll writes out as the attempt of each member of run that keep
// takes: none of them ran.
func (b *batchRun) noteAll(run []*batchMember, keep func(*batchMember) bool, side string, index func(*batchMember) int, out attempt.Outcome, results map[*batchMember]string) {
	for _, m := range run {
		if keep(m) {
			o := out
			b.noteOne(m, side, index(m), &o, nil)
			results[m] = o.Result
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
	return b.c.suite.lists[s.Index].pkgTests[pkg]
}

// allPassed reports, once the batch cmd ended with code, whether its
// report shows every member of run passed and its known answers as
// planted.
func (b *batchRun) allPassed(rep batchReport, file string, cmd attempt.Command, known *knownSet, code int, run []*batchMember) bool {
	readReportFile(rep, file, cmd)
	if v := known.judge(rep, attempt.Outcome{ExitCode: code}); len(v.wrong) > 0 {
		return false
	}
	for _, m := range run {
		if rep.report(m.r.j.shape).Result != attempt.Pass {
			return false
		}
	}
	return true
}

// runnable is the members of a batch that run in it: on the base side,
// a member whose base tree is not the one its property needs gets an
// error of its own instead (and results says so).
func (b *batchRun) runnable(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *tree, started time.Time, results map[*batchMember]string) ([]*batchMember, error) {
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
			results[m] = out.Result
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
func (b *batchRun) memberOutcome(m *batchMember, rep batchReport, tr evidence.TestReport, out attempt.Outcome, n int, budget time.Duration) (o attempt.Outcome, rerun bool) {
	return judgeMember(b.shape.framework, memberLabel(m.r.j), m.r.j.ps.prop.WallBudget, rep, tr, out, n, budget)
}

// judgeMember is the outcome of the member label (of wall budget
// budgetOf) in a batch of framework, as memberOutcome says; a replay of
// a suite's triple judges its test with it too (replaysuite.go).
func judgeMember(framework, label string, budgetOf time.Duration, rep batchReport, tr evidence.TestReport, out attempt.Outcome, n int, budget time.Duration) (o attempt.Outcome, rerun bool) {
	killed := out.Result == attempt.Timeout
	o = attempt.Outcome{Result: tr.Result, ExitCode: out.ExitCode, Signal: out.Signal, Started: out.Started, Wall: tr.Elapsed, Tail: tr.Output, Reason: tr.Reason}
	switch {
	case tr.Result == attempt.Fail && out.ExitCode == 0:
		// The framework exits non-zero when a test fails: a failure
		// in the report of a process that exited 0 is output the
		// code under test wrote, never a result.
		o.Result = attempt.Errored
		o.Reason = label + " is reported failed, but the batch exited 0: the report is not the framework's own"
	case tr.Result == attempt.Pass || tr.Result == attempt.Fail:
		if budgetOf > 0 && tr.Elapsed > budgetOf {
			o.Result = attempt.Timeout
			o.Reason = fmt.Sprintf("its own time %.1fs in the batch is over its wall budget %s", tr.Elapsed.Seconds(), budgetOf)
		}
	case killed && tr.Started && !tr.Ended:
		o.Result, o.Wall = attempt.Timeout, out.Wall
		o.Reason = fmt.Sprintf("the batch of %d tests was killed at %.1fs (%s) while this test ran", n, out.Wall.Seconds(), batchWhy(out, budget))
	case killed && !tr.Started && isJSFramework(framework):
		// A jest or vitest batch writes its report when it ends: killed,
		// it names no test that was running. Every member is a timeout
		// of this batch, and none runs again alone: a test can hang only
		// beside the others (state one test leaves in a module for the
		// next), as the project's own runner runs them, and a run alone
		// would pass it.
		o.Result, o.Wall = attempt.Timeout, out.Wall
		o.Reason = fmt.Sprintf("killed at %.1fs (%s) before %s wrote its report", out.Wall.Seconds(), batchWhy(out, budget), framework)
		if n > 1 {
			o.Reason = fmt.Sprintf("the batch of %d tests was killed at %.1fs (%s) before %s wrote its report: which test hung is not known, and none runs again alone (a test may hang only beside the others)", n, out.Wall.Seconds(), batchWhy(out, budget), framework)
		}
	case killed && !tr.Started || tr.Rerun:
		return o, true
	case tr.Result == "":
		o.Result = attempt.Errored
		o.Reason = label + " is absent from the batch's report"
		if tr.Reason != "" {
			o.Reason += ": " + tr.Reason
		}
		if out.Reason != "" {
			o.Reason += "; the batch: " + out.Reason
		}
		if l := rep.other(); l != "" {
			o.Reason += "; the last line is " + l
		}
	case killed:
		o.Result, o.Reason = attempt.Timeout, tr.Reason+"; "+batchWhy(out, budget)
	}
	return o, false
}

// batchWhy says what ended a killed batch: its budget or a sandbox limit.
func batchWhy(out attempt.Outcome, budget time.Duration) string {
	if out.Limit != "" {
		return "sandbox " + out.Limit + " reached"
	}
	return "the sum of its members' wall budgets is " + budget.String()
}

// noteOne writes an attempt of m that did not run in the batch's process.
func (b *batchRun) noteOne(m *batchMember, side string, index int, out *attempt.Outcome, info *transcript.Batch) {
	m.r.write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index, At: out.Started})
	m.r.note(side, index, out, info)
}

// bases sets every member's base seed result: from the replay cache
// (per triple, under each key's replay lock, taken in key order so that
// two checks never wait for each other), else from one base batch of the
// members the cache does not have.
func (b *batchRun) bases(ctx context.Context) error {
	c := b.c
	if ctx.Err() != nil {
		for _, m := range b.members {
			m.r.t.Base = notRun
		}
		return nil
	}
	keys := map[*batchMember]string{}
	order := append([]*batchMember(nil), b.members...)
	for _, m := range order {
		keys[m] = m.r.replayKey(b.shape.framework + " batch")
	}
	sort.SliceStable(order, func(i, k int) bool { return keys[order[i]] < keys[order[k]] })
	var need []*batchMember
	if !c.opts.NoReplayCache {
		var releases []func()
		defer func() {
			for i := len(releases) - 1; i >= 0; i-- {
				releases[i]()
			}
		}()
		cached := map[*batchMember]bool{}
		for _, m := range order {
			release, err := c.lockReplay(ctx, m.r.j, keys[m])
			if err != nil {
				if ctx.Err() != nil {
					// Interrupted: no member's base is known, not even
					// one read from the cache before (the record would
					// say not_run from the cache).
					for _, m := range b.members {
						m.r.t.Base, m.r.t.FromCache = notRun, false
					}
					return nil
				}
				return err
			}
			releases = append(releases, release)
			got, ok, err := c.store.GetReplay(ctx, keys[m])
			if err != nil {
				return flakegate.StoreError("read the replay cache", err)
			}
			if ok {
				m.r.t.Base, m.r.t.FromCache = got.Result, true
				cached[m] = true
			}
		}
		for _, m := range b.members {
			if !cached[m] {
				need = append(need, m)
			}
		}
	} else {
		need = b.members
	}
	if len(need) > 0 {
		started := time.Now()
		res, err := b.settle(ctx, transcript.SideBase, need, all, zero, func() *tree { return b.trees.base })
		if err != nil {
			return err
		}
		for _, m := range need {
			m.r.t.Base = res[m]
			if c.opts.NoReplayCache || ctx.Err() != nil || c.iso.mode != IsolationBwrap || (res[m] != attempt.Pass && res[m] != attempt.Fail) {
				continue
			}
			wall := 0.0
			if n := len(m.r.t.attempts); n > 0 {
				wall = m.r.t.attempts[n-1].WallSeconds
			}
			stored, err := c.store.PutReplay(ctx, keys[m], flakegate.BaseReplay{Result: res[m], WallSeconds: wall, RunID: m.r.t.runID, At: started.UTC()})
			if err != nil {
				return flakegate.StoreError("write the replay cache", err)
			}
			if stored.Result != res[m] {
				m.r.t.Base, m.r.t.FromCache = stored.Result, true
			}
		}
	}
	for _, m := range b.members {
		if ctx.Err() != nil && m.r.t.Base == "" {
			m.r.t.Base = notRun
		}
		if m.r.t.Base != notRun {
			m.r.write(transcript.Event{Type: transcript.EventBaseReplay, Result: m.r.t.Base, FromCache: m.r.t.FromCache})
		}
	}
	return nil
}

// retries runs the whole batch again, up to retry_cap times, while a
// member whose first attempt failed (and whose base seed did not fail)
// has not passed. Only those members take results from it.
func (b *batchRun) retries(ctx context.Context) error {
	want := map[*batchMember]bool{}
	for _, m := range b.members {
		if m.r.t.Candidate == attempt.Fail && m.r.t.BudgetOK && m.r.t.Base != attempt.Fail && len(m.r.graderEdits()) == 0 {
			want[m] = true
		}
	}
	for i := 1; i <= b.c.cfg.RetryCap && len(want) > 0 && ctx.Err() == nil; i++ {
		res, err := b.retry(ctx, i, want)
		if err != nil {
			return err
		}
		for _, m := range b.members {
			if !want[m] {
				continue
			}
			r := res[m]
			if r == attempt.Timeout {
				m.r.t.BudgetOK = false
				r = attempt.Fail
			}
			m.r.t.Retries = append(m.r.t.Retries, r)
			if r != attempt.Fail {
				delete(want, m)
			}
		}
	}
	return nil
}

// retry runs retry i of the batch: every member, in order, on the
// candidate tree; the members of want get attempt i in their transcript.
// A member a killed retry never reached is an error for that retry.
func (b *batchRun) retry(ctx context.Context, i int, want map[*batchMember]bool) (map[*batchMember]string, error) {
	results := map[*batchMember]string{}
	keep := func(m *batchMember) bool { return want[m] }
	unstarted, err := b.attempt(ctx, transcript.SideCandidate, b.present(), keep, func(*batchMember) int { return i }, b.trees.nextCandidate(), results)
	if err != nil {
		return nil, err
	}
	for _, m := range unstarted {
		out := attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: time.Now(),
			Reason: "this test did not run in the retry batch (it was killed at its budget, or stopped, before the test)"}
		b.noteOne(m, transcript.SideCandidate, i, &out, nil)
		results[m] = out.Result
	}
	return results, nil
}

// present are the members, in order, but those a report said are not
// there.
func (b *batchRun) present() []*batchMember {
	var out []*batchMember
	for _, m := range b.members {
		if !m.absent {
			out = append(out, m)
		}
	}
	return out
}

func all(*batchMember) bool { return true }
func zero(*batchMember) int { return 0 }

// probes runs the flake probe for the members whose attempts give
// SCHEDULER signals: the whole batch on the base tree, up to the largest
// flake_probe_runs, each such member stopping at its first base failure.
// Then each such member gets its flake origin, as probe does for a
// triple run alone ("unknown" when it has no probe runs).
func (b *batchRun) probes(ctx context.Context) error {
	want := map[*batchMember]bool{}
	var likely []*batchMember // every member that gets a flake origin
	k := 0
	for _, m := range b.members {
		if !batch.SchedulerLikely(&m.r.t.Tally) {
			continue
		}
		likely = append(likely, m)
		if n := m.r.j.ps.prop.FlakeProbeRuns; n > 0 {
			want[m] = true
			m.r.t.Probes = []string{}
			k = max(k, n)
		}
	}
	if len(likely) == 0 || ctx.Err() != nil {
		return nil
	}
	for i := 1; i <= k && len(want) > 0 && ctx.Err() == nil; i++ {
		keep := func(m *batchMember) bool { return want[m] }
		res, err := b.settle(ctx, transcript.SideProbe, b.present(), keep, func(*batchMember) int { return i }, func() *tree { return b.trees.base })
		if err != nil {
			return err
		}
		for _, m := range b.members {
			if !want[m] {
				continue
			}
			m.r.t.Probes = append(m.r.t.Probes, res[m])
			if res[m] == attempt.Fail || len(m.r.t.Probes) >= m.r.j.ps.prop.FlakeProbeRuns {
				delete(want, m)
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	for _, m := range likely {
		h, err := b.c.baseHistory(ctx, m.r.j)
		if err != nil {
			return err
		}
		t := &m.r.t
		t.Origin, t.OriginWhy, t.OriginCounts = batch.Origin(m.r.j.ps.prop.FlakeProbeRuns > 0, !t.FromCache, t.Probes, h, batch.CandidateRunsOf(&t.Tally))
	}
	return nil
}

// memberLabel names a triple among a batch's members.
func memberLabel(j *job) string {
	return j.ps.prop.Path + "::" + j.ps.prop.Name
}

// batchReport reads a batch's output and reports each member's result.
type batchReport interface {
	io.Writer
	report(s *batchShape) evidence.TestReport
	other() string
}

func newBatchReport(framework, dir string) batchReport {
	if framework == evidence.FrameworkPytest {
		return pytestReport{evidence.NewPytestJUnit()}
	}
	if isJSFramework(framework) {
		return jsReport{evidence.NewJSReport(framework)}
	}
	mod, err := goModulePath(filepath.Join(dir, "go.mod"))
	return &goReport{GoJSON: evidence.NewGoJSON(), module: mod, modErr: err}
}

type pytestReport struct{ *evidence.PytestJUnit }

func (p pytestReport) report(s *batchShape) evidence.TestReport { return p.Report(s.test) }
func (p pytestReport) other() string                            { return "" }

// goReport maps a member's package argument to the import path the
// events name, through the module path of the tree's go.mod.
type goReport struct {
	*evidence.GoJSON
	module string
	modErr error
}

func (g *goReport) report(s *batchShape) evidence.TestReport {
	if g.modErr != nil {
		return evidence.TestReport{Result: attempt.Errored, Reason: "cannot name the package of a batched go test: " + g.modErr.Error()}
	}
	return g.Report(g.importPath(s.pkg), s.test)
}

// importPath is the import path of a package argument ("./p", ".").
func (g *goReport) importPath(arg string) string {
	pkg := g.module
	if rel := strings.TrimPrefix(strings.TrimSuffix(arg, "/"), "./"); rel != "." && rel != "" {
		pkg += "/" + rel
	}
	return pkg
}

func (g *goReport) other() string {
	if l := g.Other(); l != "" {
		return fmt.Sprintf("%q", l)
	}
	return ""
}

// goModulePath reads the module directive of a go.mod file.
func goModulePath(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("no go.mod at the tree's root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if i := strings.Index(l, "//"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if rest, ok := strings.CutPrefix(l, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t' || rest[0] == '"') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", file)
}

// reportFile adds to cmd the file its framework writes its report to
// (flag, then the file's path: --junitxml=, --outputFile=): name, in a
// folder of its own outside the tree (junitDir), shared read-write with
// the sandbox for this one attempt. It returns the file's path; the
// caller removes its folder.
func reportFile(cmd *attempt.Command, name, flag string) (string, error) {
	dir, err := junitDir()
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	cmd.Argv = append(cmd.Argv, flag+file)
	if sb, _ := cmd.Sandbox.(*sandbox.Sandbox); sb != nil {
		sb.RW = append(append([]string(nil), sb.RW...), dir)
	}
	return file, nil
}

// batchReportFile adds the report file of framework's batch to cmd (the
// pytest JUnit file, the jest or vitest JSON report) and returns its
// path; "" for go, whose report is its output. The caller removes the
// file's folder.
func batchReportFile(cmd *attempt.Command, framework string) (string, error) {
	switch {
	case framework == evidence.FrameworkPytest:
		return pytestJUnitFile(cmd)
	case isJSFramework(framework):
		return jsReportFile(cmd) // batchjs.go
	}
	return "", nil
}

// readReportFile gives rep the report file the batch cmd wrote (file,
// from batchReportFile).
func readReportFile(rep batchReport, file string, cmd attempt.Command) {
	if pr, ok := rep.(pytestReport); ok {
		pr.SetJUnit(attempt.ReadBounded(file, 64<<20))
	}
	if jr, ok := rep.(jsReport); ok {
		data, err := attempt.ReadBounded(file, 64<<20)
		jr.SetFile(data, err, jsRoot(cmd))
	}
}

// pytestJUnitFile adds the JUnit file of a pytest batch to cmd.
func pytestJUnitFile(cmd *attempt.Command) (string, error) {
	return reportFile(cmd, "junit.xml", "--junitxml=")
}

// junitDir makes the folder a pytest batch writes its JUnit file into,
// shared read-write with the sandbox for that one attempt.
func junitDir() (string, error) {
	dir, err := os.MkdirTemp("", "flakegate-junit-")
	if err == nil {
		err = os.Chmod(dir, 0o777) // the sandbox's uid writes it
	}
	if err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot make a folder for a pytest batch's JUnit report", Err: err}
	}
	return dir, nil
}
