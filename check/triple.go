package check

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/runner"
)

// job is one triple of the config: a property and one of its seeds.
type job struct {
	index int // position in the summary
	ps    *propState
	seed  flakegate.Seed
}

// tripleResult is a finished triple: its summary line and the record bytes
// (nil when skipped).
type tripleResult struct {
	result flakegate.Result
	raw    []byte
}

// jobs lists the triples in config order, after preflight.
func (c *checker) jobs() []job {
	var jobs []job
	for _, ps := range c.props {
		for _, s := range ps.prop.Seeds {
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s})
		}
	}
	return jobs
}

// runJobs runs the triples on the worker pool, one worktree pair per
// worker, and returns their results in config order. Workers only run
// attempts; one finisher goroutine writes the records, so the disk syncs
// of one triple overlap the attempts of the next.
func (c *checker) runJobs(ctx context.Context, jobs []job) ([]tripleResult, error) {
	results := make([]tripleResult, len(jobs))
	queue := make(chan *job)
	type pending struct {
		index  int
		finish func() (tripleResult, error)
	}
	finished := make(chan pending, len(jobs))
	errs := make(chan error, len(c.trees.workers)+1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for w := range c.trees.workers {
		go func(w int) {
			var first error
			for j := range queue {
				if first != nil {
					continue
				}
				finish, err := c.runTriple(ctx, w, j)
				if err != nil {
					first = err
					cancel(err)
					continue
				}
				finished <- pending{j.index, finish}
			}
			errs <- first
		}(w)
	}
	finisherDone := make(chan error, 1)
	go func() {
		var first error
		for p := range finished {
			if first != nil {
				continue
			}
			r, err := p.finish()
			if err != nil {
				first = err
				cancel(err)
				continue
			}
			results[p.index] = r
			c.progress.Done(r.result)
		}
		finisherDone <- first
	}()
feed:
	for i := range jobs {
		select {
		case queue <- &jobs[i]:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	var first error
	for range c.trees.workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	close(finished)
	if err := <-finisherDone; err != nil && first == nil {
		first = err
	}
	if first == nil && ctx.Err() != nil {
		first = interrupted(ctx)
	}
	return results, first
}

// runTriple consults the ledger, then runs the candidate attempts and the
// base replay of one triple. The returned finish writes its record.
func (c *checker) runTriple(ctx context.Context, w int, j *job) (func() (tripleResult, error), error) {
	ps := j.ps
	p := ps.prop
	argv, err := runner.Expand(p.Run, runner.Vars{Path: p.Path, Seed: j.seed.String(), Samples: strconv.Itoa(p.Samples), Fixture: p.Fixture})
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: ps.key + ".run: " + err.Error()}
	}
	stem := fmt.Sprintf("%02d-%s-seed-%s", ps.index, slug(p.Path), slug(j.seed.String()))
	triple := flakegate.Triple{PropertyPath: p.Path, Seed: j.seed, FixtureSHA256: ps.candFixtureSHA256}
	reproduce := c.reproduce(c.trees.workers[w].cand[0].dir, ps, j.seed, argv)

	var voided string
	if c.mayConsultLedger(ps) {
		d, err := flakegate.Skip(ctx, c.store, triple, ps.candPropertySHA256, c.opts.By)
		if err != nil {
			return nil, err
		}
		if d.Skipped {
			return func() (tripleResult, error) { return c.skipped(ctx, triple, d, stem, reproduce) }, nil
		}
		if d.Voided {
			voided = d.Reason
		}
	}

	t, err := c.attempts(ctx, w, j, argv)
	if err != nil {
		return nil, err
	}
	return func() (tripleResult, error) { return c.finish(ctx, j, t, stem, reproduce, voided) }, nil
}

// finish closes the transcript, writes the record and its decision, stores
// the record and returns the triple's summary line.
func (c *checker) finish(ctx context.Context, j *job, t *transcriptRun, stem, reproduce, voided string) (tripleResult, error) {
	ps := j.ps
	p := ps.prop
	if err := t.tr.Close(); err != nil {
		t.complete = false
	}
	t.sha256 = t.tr.SHA256()
	rec := &flakegate.RunRecord{
		Schema:               flakegate.Schema,
		RunID:                t.runID,
		Seed:                 j.seed,
		PropertyPath:         p.Path,
		PropertySHA256:       ps.candPropertySHA256,
		FixtureSHA256:        ps.candFixtureSHA256,
		BaseFixtureSHA256:    ps.baseFixtureSHA256,
		DiffPaths:            c.diff,
		CandidateResult:      t.candidate,
		BaseSeedResult:       t.base,
		RetryResults:         t.retries,
		RetryCap:             c.cfg.RetryCap,
		BudgetOK:             t.budgetOK,
		TranscriptComplete:   t.complete,
		FixtureGeneratorPath: p.Generator,
		WatchPaths:           ps.watch,
		CandidateEnv:         &ps.candEnv,
		BaseEnv:              &ps.baseEnv,
		BaseSHA:              c.baseSHA,
		CandidateSHA:         c.candSHA,
		FixturePath:          p.Fixture,
		WallBudgetS:          p.WallBudget.Seconds(),
		Samples:              p.Samples,
		Attempts:             t.attempts,
		TranscriptPath:       t.path,
		TranscriptSHA256:     t.sha256,
		BaseFromCache:        t.fromCache,
		ToolVersion:          flakegate.Version,
		Isolation:            c.iso.mode,
	}
	raw, err := rec.Marshal()
	if err != nil {
		return tripleResult{}, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot encode the record", Err: err}
	}
	sha, err := flakegate.RecordSHA256(raw)
	if err != nil {
		return tripleResult{}, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot hash the record", Err: err}
	}
	d := flakegate.ClassifyBytes(raw)
	recPath := filepath.Join(c.outDir, stem+".json")
	if err := writeFile(recPath, raw); err != nil {
		return tripleResult{}, err
	}
	if err := writeFile(filepath.Join(c.outDir, stem+".decision.json"), append(mustJSON(d), '\n')); err != nil {
		return tripleResult{}, err
	}
	if err := c.store.PutRecord(ctx, sha, raw); err != nil {
		return tripleResult{}, err
	}
	reason := d.Reason
	if d.Label == flakegate.Fixture && ps.candFixtureReason != "" {
		reason = ps.candFixtureReason
	}
	if d.Label == flakegate.Incomplete && t.reason != "" {
		reason = joinReason(reason, t.reason)
	}
	if voided != "" {
		reason = joinReason(reason, voided)
	}
	res := flakegate.Result{
		PropertyPath:  p.Path,
		Seed:          j.seed,
		FixtureSHA256: ps.candFixtureSHA256,
		Label:         d.Label,
		Row:           d.Row,
		Reason:        reason,
		Freeze:        d.Freeze,
		RecordSHA256:  sha,
		Record:        recPath,
		Reproduce:     reproduce,
		Attempts:      t.attempts,
		Seconds:       t.seconds,
		Isolation:     c.iso.mode,
	}
	return tripleResult{result: res, raw: raw}, nil
}

// mayConsultLedger is false when a freeze must not hide what the patch
// did: a watched path is in the diff or the fixture changed. Such a
// triple runs, and the table rejects it.
func (c *checker) mayConsultLedger(ps *propState) bool {
	return len(ps.contaminated) == 0 && ps.candFixtureSHA256 == ps.baseFixtureSHA256
}

// skipped is the result of a triple the ledger lets the check skip. The
// frozen record is copied into the output folder.
func (c *checker) skipped(ctx context.Context, t flakegate.Triple, d flakegate.SkipDecision, stem, reproduce string) (tripleResult, error) {
	recPath := ""
	raw, err := c.store.GetRecord(ctx, d.Freeze.RecordSHA256)
	switch {
	case err == nil:
		recPath = filepath.Join(c.outDir, stem+".frozen.json")
		if err := writeFile(recPath, raw); err != nil {
			return tripleResult{}, err
		}
	case flakegate.ErrorCode(err) != flakegate.ENOTFOUND:
		return tripleResult{}, storeError("read the frozen record", err)
	}
	left := d.RunsLeft
	res := flakegate.Result{
		PropertyPath:  t.PropertyPath,
		Seed:          t.Seed,
		FixtureSHA256: t.FixtureSHA256,
		Label:         d.Freeze.Label,
		Reason:        d.Reason,
		Skipped:       true,
		RunsLeft:      &left,
		Owner:         d.Freeze.Owner,
		RecordSHA256:  d.Freeze.RecordSHA256,
		Record:        recPath,
		Reproduce:     reproduce,
	}
	return tripleResult{result: res}, nil
}

// transcriptRun is what the attempts of one triple produced.
type transcriptRun struct {
	tr        *runner.Transcript
	runID     string
	path      string
	sha256    string
	candidate string   // pass, fail or error
	retries   []string // pass, fail or error
	base      string   // pass, fail, error or timeout
	fromCache bool
	budgetOK  bool
	complete  bool
	attempts  []flakegate.Attempt
	reason    string // why an attempt errored, for the summary
	seconds   float64
}

// attempts writes the transcript: the retry cap first, then the candidate
// attempts (the first run, then retries until the first pass, at most
// retry_cap), then the base replay, then complete.
func (c *checker) attempts(ctx context.Context, w int, j *job, argv []string) (*transcriptRun, error) {
	start := time.Now()
	ps := j.ps
	t := &transcriptRun{runID: newRunID(c.candSHA), budgetOK: true, complete: true}
	t.path = filepath.Join(c.outDir, "transcripts", t.runID+".jsonl")
	tr, err := runner.CreateTranscript(t.path)
	if err != nil {
		return nil, err
	}
	write := func(ev runner.Event) {
		if tr.Write(ev) != nil {
			t.complete = false
		}
	}
	retryCap := c.cfg.RetryCap
	write(runner.Event{Type: runner.EventRetryCap, RetryCap: &retryCap})

	// run makes one attempt in tr. An error is flakegate's own failure (a
	// tree it cannot reset or prove clean): it ends the check, exit 3,
	// and is never recorded as the attempt's result.
	run := func(side string, index int, tr *tree, check func() (string, error)) (string, error) {
		defer tr.release(c.resetClean)
		if err := tr.acquire(); err != nil {
			return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: tr.dir,
				Message: "cannot reset the worktree for the " + side + " attempt", Err: err,
				Hint: "a git process may have died there (look for index.lock under the repository's .git/worktrees); remove what it left and run the check again"}
		}
		why, err := check()
		if err != nil {
			return "", err
		}
		write(runner.Event{Type: runner.EventAttemptStart, Side: side, Index: index})
		var out runner.Outcome
		if why != "" {
			out = runner.Outcome{Result: runner.Errored, ExitCode: -1, Started: time.Now(), Reason: why}
		} else {
			out = runner.Run(ctx, runner.Command{Argv: argv, Dir: tr.dir, Env: c.iso.env, WallBudget: ps.prop.WallBudget, Sandbox: c.sandboxFor(tr.dir)})
		}
		if ctx.Err() != nil {
			t.complete = false // cancelled: the attempt did not finish
		}
		out.Tail, out.Reason = c.redact(out.Tail), c.redact(out.Reason)
		a := flakegate.Attempt{Side: side, Index: index, Result: out.Result, ExitCode: out.ExitCode, Signal: out.Signal,
			StartedAt: out.Started.UTC(), WallSeconds: roundSeconds(out.Wall), OutputTail: out.Tail}
		t.attempts = append(t.attempts, a)
		write(runner.Event{Type: runner.EventAttemptEnd, Side: side, Index: index, Result: out.Result,
			ExitCode: out.ExitCode, Signal: out.Signal, WallSeconds: a.WallSeconds, Reason: out.Reason})
		if out.Result == runner.Errored && t.reason == "" {
			t.reason = side + " attempt " + strconv.Itoa(index) + ": " + out.Reason
		}
		return out.Result, nil
	}
	noCheck := func() (string, error) { return "", nil }
	fail := func(err error) (*transcriptRun, error) {
		tr.Close() //nolint:errcheck // the check fails with err
		return nil, err
	}

	// Candidate: the first run, then retries under the cap.
	trees := c.trees.workers[w]
	r, err := run(runner.SideCandidate, 0, trees.nextCandidate(), noCheck)
	if err != nil {
		return fail(err)
	}
	switch r {
	case runner.Pass:
		t.candidate = runner.Pass
	case runner.Fail:
		t.candidate = runner.Fail
		for i := 1; i <= retryCap && ctx.Err() == nil; i++ {
			rr, err := run(runner.SideCandidate, i, trees.nextCandidate(), noCheck)
			if err != nil {
				return fail(err)
			}
			if rr == runner.Timeout {
				t.budgetOK = false
				rr = runner.Fail
			}
			t.retries = append(t.retries, rr)
			if rr != runner.Fail {
				break // a pass ends the retries; an error ends the decision
			}
		}
	case runner.Timeout:
		t.candidate, t.budgetOK = runner.Fail, false
	default:
		t.candidate = runner.Errored
	}
	if t.retries == nil {
		t.retries = []string{}
	}

	// Base: replayed once, never retried; the first result per replay key
	// is kept in the cache. A store that fails here fails the check: a gate
	// that cannot reach its replay cache gives no labels.
	if ctx.Err() == nil {
		if err := c.baseReplay(ctx, w, j, argv, t, run); err != nil {
			return fail(err)
		}
		if t.base != "not_run" {
			write(runner.Event{Type: runner.EventBaseReplay, Result: t.base, FromCache: t.fromCache})
		}
	} else {
		t.base = "not_run"
	}
	write(runner.Event{Type: runner.EventComplete})
	t.tr = tr // finish closes it (an fsync) off the attempts' path
	t.seconds = roundSeconds(time.Since(start))
	return t, nil
}

// baseReplay sets t.base from the replay cache or from one base attempt.
// With the cache on it holds the key's replay lock from the lookup to the
// store of the result, so checks running at once on other candidates of
// the same base (in any process sharing the store) replay the seed once:
// the later ones wait and read the first one's result. An error means the
// store failed; an interrupted check is not an error here (t.base says
// not_run and the check reports the interruption).
func (c *checker) baseReplay(ctx context.Context, w int, j *job, argv []string, t *transcriptRun, run func(string, int, *tree, func() (string, error)) (string, error)) error {
	ps := j.ps
	key := flakegate.ReplayKey{
		BaseSHA:        c.baseSHA,
		PropertySHA256: ps.basePropertySHA256,
		FixtureSHA256:  ps.baseFixtureSHA256,
		Seed:           j.seed,
		Command:        argv,
		Env:            ps.baseEnv,
	}.String()
	if !c.opts.NoReplayCache {
		release, err := c.lockReplay(ctx, j, key)
		if err != nil {
			if ctx.Err() != nil {
				t.base = "not_run"
				return nil
			}
			return err
		}
		defer release()
		r, ok, err := c.store.GetReplay(ctx, key)
		if err != nil {
			return storeError("read the replay cache", err)
		}
		if ok {
			t.base, t.fromCache = r.Result, true
			return nil
		}
	}
	base := c.trees.workers[w].base
	// The base tree must be exactly the base commit (a failure to prove it
	// is flakegate's, exit 3), and its fixture the bytes digested at the
	// start (else the attempt is an error: INCOMPLETE).
	checkBase := func() (string, error) {
		if err := c.git.Pristine(ctx, base.gitDir, base.dir, base.sha); err != nil {
			if ctx.Err() != nil {
				return "", interrupted(ctx)
			}
			return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: base.dir,
				Message: "the base worktree is not a pristine checkout of the base", Err: err,
				Hint: "remove the folder and run 'git worktree prune'; flakegate recreates it"}
		}
		sum, err := digest.Path(ctx, filepath.Join(base.dir, filepath.FromSlash(ps.prop.Fixture)))
		if err != nil {
			return "cannot digest the base fixture: " + err.Error(), nil
		}
		if sum != ps.baseFixtureSHA256 {
			return fmt.Sprintf("the base fixture digest is %s, expected %s", short(sum), short(ps.baseFixtureSHA256)), nil
		}
		return "", nil
	}
	started := time.Now()
	result, err := run(runner.SideBase, 0, base, checkBase)
	if err != nil {
		return err
	}
	t.base = result
	// Only what a sandboxed base said about itself is kept for later
	// checks: an error or a timeout may be the machine's, and an
	// unsandboxed attempt may have been tampered with.
	if c.opts.NoReplayCache || ctx.Err() != nil || c.iso.mode != IsolationBwrap || (result != runner.Pass && result != runner.Fail) {
		return nil
	}
	wall := 0.0
	if n := len(t.attempts); n > 0 {
		wall = t.attempts[n-1].WallSeconds
	}
	stored, err := c.store.PutReplay(ctx, key, flakegate.BaseReplay{Result: result, WallSeconds: wall, RunID: t.runID, At: started.UTC()})
	if err != nil {
		return storeError("write the replay cache", err)
	}
	if stored.Result != result {
		// Another check stored its base result first; the first one rules.
		t.base, t.fromCache = stored.Result, true
	}
	return nil
}

// errReplayLockDeadline ends a wait for another check's base replay.
var errReplayLockDeadline = errors.New("replay lock deadline")

// lockReplay takes the replay lock of key, waiting at most the lock
// timeout plus the wall budget of the base attempt its holder runs, and
// saying so when the wait lasts.
func (c *checker) lockReplay(ctx context.Context, j *job, key string) (func(), error) {
	lctx := ctx
	var limit time.Duration
	if c.opts.LockTimeout > 0 {
		limit = c.opts.LockTimeout + j.ps.prop.WallBudget
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeoutCause(ctx, limit, errReplayLockDeadline)
		defer cancel()
	}
	since := time.Now()
	note := time.AfterFunc(time.Second, func() {
		c.progress.Note(fmt.Sprintf("waiting for another check replaying %s seed %s on the base (the replay lock), since %s",
			j.ps.prop.Path, j.seed, since.Format("15:04:05")))
	})
	release, err := c.store.LockReplay(lctx, key)
	note.Stop()
	if err == nil {
		return release, nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(lctx), errReplayLockDeadline) {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check",
			Message: fmt.Sprintf("gave up after %s waiting for another check's base replay of %s seed %s (the replay lock)", limit, j.ps.prop.Path, j.seed),
			Hint:    "let that check finish, or end it if it is stuck; --lock-timeout sets how long to wait"}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, storeError("lock the replay cache", err)
}

// storeError is a store failure that ends the check: the store's own
// *flakegate.Error as it is (it names the store and what to try), anything
// else as EINTERNAL.
func storeError(op string, err error) error {
	if _, ok := errors.AsType[*flakegate.Error](err); ok {
		return err
	}
	return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot " + op, Err: err}
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// newRunID names one triple's run: the candidate's short hash and 8
// random bytes, unique across checks.
func newRunID(candSHA string) string {
	var b [8]byte
	rand.Read(b[:])
	return short(candSHA) + "-" + hex.EncodeToString(b[:])
}

// slug turns a path or seed into a file name part.
func slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
