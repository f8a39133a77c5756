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
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/suites"
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
func (b *batchRun) attempt(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *tree, results map[*batchMember]batch.Outcome) ([]*batchMember, error) {
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
func (b *batchRun) runnable(ctx context.Context, side string, members []*batchMember, keep func(*batchMember) bool, index func(*batchMember) int, at *tree, started time.Time, results map[*batchMember]batch.Outcome) ([]*batchMember, error) {
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
	mod, err := suites.GoModulePath(filepath.Join(dir, "go.mod"))
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
