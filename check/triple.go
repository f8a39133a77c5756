package check

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/runner"
)

// job is one triple of the config: a property and one of its seeds.
type job struct {
	index int // position in the summary
	ps    *propState
	seed  flakegate.Seed
	drawn bool // drawn from the candidate sha, not listed in the config
}

// tripleResult is a finished triple: its summary line and the record bytes
// (nil when skipped).
type tripleResult struct {
	result flakegate.Result
	raw    []byte
}

// jobs lists the triples in config order, after preflight: each
// property's listed seeds, then its drawn seeds.
func (c *checker) jobs() []job {
	var jobs []job
	for _, ps := range c.props {
		for _, s := range ps.prop.Seeds {
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s})
		}
		for _, s := range DrawSeeds(c.candSHA, ps.prop, ps.prop.RandomSeeds) {
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s, drawn: true})
		}
	}
	return jobs
}

// MaxDrawnSeed bounds drawn seeds: 1 to 2^53-1, integers every JSON
// reader keeps exactly and every framework accepts (never 0, which rapid
// reads as "pick a random seed").
const MaxDrawnSeed = 1<<53 - 1

// DrawSeeds returns n seeds for property p drawn from the candidate sha:
// the same candidate gets the same seeds, another candidate other ones.
// Seed i is the first 8 bytes of sha256("flakegate drawn seed\x00" +
// candidate sha + "\x00" + path + "\x00" + name + "\x00" + i), as a
// big-endian integer, mod 2^53-1, plus 1; a value that repeats a listed
// or earlier seed is skipped.
func DrawSeeds(candSHA string, p *config.Property, n int) []flakegate.Seed {
	seen := map[flakegate.Seed]bool{}
	for _, s := range p.Seeds {
		seen[s] = true
	}
	var out []flakegate.Seed
	for i := 0; len(out) < n; i++ {
		sum := sha256.Sum256([]byte("flakegate drawn seed\x00" + candSHA + "\x00" + p.Path + "\x00" + p.Name + "\x00" + strconv.Itoa(i)))
		v := binary.BigEndian.Uint64(sum[:8])%MaxDrawnSeed + 1
		s := flakegate.Seed(strconv.FormatUint(v, 10))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// A jobSource hands the workers their triples, one at a time: the
// config's list or one shard of it (newListSource), or a queue shared
// with other runners (queue.go).
type jobSource interface {
	// next returns the next task, or nil when none is left for this run.
	next(ctx context.Context) (*task, error)
}

// task is one triple handed to a worker.
type task struct {
	j *job
	// ctx, when set, ends the triple's attempts early (its lease was lost).
	ctx context.Context
	// run, when set, replaces runTriple (a triple given up on).
	run func(ctx context.Context, w int, j *job) (func() (tripleResult, error), error)
	// sink, when set, receives the finished triple; false means the
	// result is not this run's to report (another runner has it).
	sink func(ctx context.Context, r *tripleResult) (bool, error)
	// release, when set, is called once the triple is done with.
	release func()
}

func (t *task) done() {
	if t.release != nil {
		t.release()
	}
}

// listSource hands out a fixed list of jobs.
type listSource struct {
	mu   sync.Mutex
	jobs []job
	todo []int
}

func newListSource(jobs []job, positions []int) *listSource {
	return &listSource{jobs: jobs, todo: positions}
}

func (s *listSource) next(ctx context.Context) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.todo) == 0 || ctx.Err() != nil {
		return nil, nil
	}
	j := &s.jobs[s.todo[0]]
	s.todo = s.todo[1:]
	return &task{j: j}, nil
}

// runJobs runs the triples src hands out on the worker pool, one
// worktree pair per worker, and returns their results by config position
// (n of them; the ones this run did not label are zero). Workers only
// run attempts; one finisher goroutine writes the records, so the disk
// syncs of one triple overlap the attempts of the next.
func (c *checker) runJobs(ctx context.Context, src jobSource, n int) ([]tripleResult, error) {
	results := make([]tripleResult, n)
	type pending struct {
		t      *task
		finish func() (tripleResult, error)
	}
	finished := make(chan pending, len(c.trees.workers))
	errs := make(chan error, len(c.trees.workers)+1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for w := range c.trees.workers {
		go func(w int) {
			var first error
			for ctx.Err() == nil {
				t, err := src.next(ctx)
				if err != nil {
					first = err
					cancel(err)
					break
				}
				if t == nil {
					break
				}
				run, tctx := c.runTriple, ctx
				if t.run != nil {
					run = t.run
				}
				if t.ctx != nil {
					tctx = t.ctx
				}
				finish, err := run(tctx, w, t.j)
				if err != nil && tctx.Err() != nil && ctx.Err() == nil {
					// The lease was lost under the attempts: the triple is
					// another runner's now.
					t.done()
					c.progress.Note(fmt.Sprintf("%s seed %s: lease lost; another runner has the triple", t.j.ps.prop.Path, t.j.seed))
					continue
				}
				if err != nil {
					t.done()
					first = err
					cancel(err)
					break
				}
				finished <- pending{t, finish}
			}
			errs <- first
		}(w)
	}
	finisherDone := make(chan error, 1)
	go func() {
		var first error
		for p := range finished {
			if first != nil {
				p.t.done()
				continue
			}
			r, err := p.finish()
			keep := err == nil
			if err == nil && p.t.sink != nil {
				keep, err = p.t.sink(ctx, &r)
			}
			p.t.done()
			if err != nil {
				first = err
				cancel(err)
				continue
			}
			if keep {
				results[p.t.j.index] = r
				c.progress.Done(r.result)
			}
		}
		finisherDone <- first
	}()
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

// argv is the command of one attempt of the triple: the run template
// expanded, with the options that make the framework print its evidence.
func (c *checker) argv(j *job) ([]string, error) {
	argv, err := runner.Expand(j.ps.prop.Run, vars(j.ps.prop, j.seed))
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: j.ps.key + ".run: " + err.Error()}
	}
	return runner.EvidenceArgv(argv), nil
}

// stem names the triple's files in the output folder.
func (j *job) stem() string {
	p := j.ps.prop
	if p.Name != "" {
		return fmt.Sprintf("%02d-%s-%s-seed-%s", j.ps.index, slug(p.Path), slug(p.Name), slug(j.seed.String()))
	}
	return fmt.Sprintf("%02d-%s-seed-%s", j.ps.index, slug(p.Path), slug(j.seed.String()))
}

// runTriple consults the ledger, then runs the candidate attempts and the
// base replay of one triple. The returned finish writes its record.
func (c *checker) runTriple(ctx context.Context, w int, j *job) (func() (tripleResult, error), error) {
	ps := j.ps
	p := ps.prop
	argv, err := c.argv(j)
	if err != nil {
		return nil, err
	}
	stem := j.stem()
	triple := flakegate.Triple{PropertyPath: p.Path, Name: p.Name, Seed: j.seed, FixtureSHA256: ps.candFixtureSHA256}
	reproduce := c.reproduce(ps, j.seed)

	var voided string
	if c.mayConsultLedger(ps) {
		d, err := flakegate.SkipBound(ctx, c.store, triple, c.binding(j), c.opts.By)
		if err != nil {
			return nil, err
		}
		if d.Skipped {
			return func() (tripleResult, error) { return c.skipped(ctx, j, triple, d, stem, reproduce) }, nil
		}
		if d.Voided {
			voided = d.Reason
		}
	}

	t, err := c.attempts(ctx, w, j, argv)
	if err != nil {
		return nil, err
	}
	return func() (tripleResult, error) { return c.finish(ctx, j, t, argv, stem, reproduce, voided) }, nil
}

// binding is what a freeze of j's triple must match.
func (c *checker) binding(j *job) flakegate.Binding {
	b := flakegate.Binding{PropertySHA256: j.ps.candPropertySHA256, RunSHA256: j.ps.runSHA256, PropertyEntrySHA256: j.ps.entrySHA256}
	if j.drawn {
		b.SeedOrigin = SeedDrawn
	}
	return b
}

// SeedDrawn is the record's "seed_origin" for a seed drawn from the
// candidate sha (absent for a seed listed in the config).
const SeedDrawn = "drawn"

// finish closes the transcript, writes the record and its decision, stores
// the record and returns the triple's summary line.
func (c *checker) finish(ctx context.Context, j *job, t *transcriptRun, argv []string, stem, reproduce, voided string) (tripleResult, error) {
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
		RunnerHost:           c.opts.Runner.Host,
		RunnerID:             c.opts.Runner.ID,
		IncompleteReason:     t.givenUp,
		Name:                 p.Name,
		RunSHA256:            ps.runSHA256,
		PropertyEntrySHA256:  ps.entrySHA256,
		AttemptsSkipped:      t.skippedWhy,
		Command:              argv,
		Isolation:            c.iso.mode,
	}
	if j.drawn {
		rec.SeedOrigin = SeedDrawn
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
	if c.opts.Join == nil { // a joined check stores it when it labels the triple
		if err := c.store.PutRecord(ctx, sha, raw); err != nil {
			return tripleResult{}, err
		}
	}
	reason := d.Reason
	if d.Label == flakegate.Fixture && ps.candFixtureReason != "" {
		reason = ps.candFixtureReason
	}
	if d.Label.Reject() && t.reason != "" {
		reason = joinReason(reason, t.reason)
	}
	if voided != "" {
		reason = joinReason(reason, voided)
	}
	if d.Label == flakegate.Contaminated && len(ps.watchWhy) > 0 {
		reason = joinReason(reason, "watched: "+strings.Join(ps.watchWhy, ", "))
	}
	if d.Label == flakegate.Budget && t.budgetWhy != "" {
		reason = joinReason(reason, t.budgetWhy)
	}
	res := flakegate.Result{
		PropertyPath:    p.Path,
		Name:            p.Name,
		Seed:            j.seed,
		SeedOrigin:      rec.SeedOrigin,
		FixtureSHA256:   ps.candFixtureSHA256,
		Label:           d.Label,
		Row:             d.Row,
		Reason:          reason,
		Freeze:          d.Freeze,
		RecordSHA256:    sha,
		Record:          recPath,
		Reproduce:       reproduce,
		Attempts:        t.attempts,
		Seconds:         t.seconds,
		BaseCached:      t.fromCache,
		AttemptsSkipped: t.skippedWhy,
		RunnerID:        c.opts.Runner.ID,
		RunnerHost:      c.opts.Runner.Host,
		Isolation:       c.iso.mode,
	}
	for _, a := range t.attempts {
		if a.Side == runner.SideBase {
			res.BaseAttempts++
		} else {
			res.CandidateAttempts++
		}
	}
	if t.fromCache {
		res.BaseAttempts++ // the base run the cache holds, made by an earlier check
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
func (c *checker) skipped(ctx context.Context, j *job, t flakegate.Triple, d flakegate.SkipDecision, stem, reproduce string) (tripleResult, error) {
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
		Name:          t.Name,
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
	if j.drawn {
		res.SeedOrigin = SeedDrawn
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
	givenUp   string // why the triple was not run to the end (incomplete_reason)
	budgetWhy string // the budget and the wall time of the attempt that missed it
	seconds   float64
	// skippedWhy says why no attempt ran ("" when they ran).
	skippedWhy string
}

// attempts writes the transcript: the retry cap first, then the candidate
// attempts and the base replay, then complete.
//
// The order saves work a label does not need:
//   - when the diff alone makes the triple CONTAMINATED no attempt runs
//     (unless Options.RunContaminated): the record says candidate_result
//     "fail", no retries, base_seed_result "not_run" and why in the extra
//     key "attempts_skipped"; the table says CONTAMINATED from the diff (and
//     would say INCOMPLETE, never a pass, were the watched path dropped);
//   - after a failed first candidate attempt the base seed result is
//     obtained first (cache or replay); when base fails too the triple is
//     PROPERTY whatever the retries do, so none runs;
//   - otherwise the candidate retries up to retry_cap times (stopping at
//     the first pass) and the base seed is replayed once.
func (c *checker) attempts(ctx context.Context, w int, j *job, argv []string) (*transcriptRun, error) {
	start := time.Now()
	ps := j.ps
	t := &transcriptRun{runID: newRunID(c.candSHA), budgetOK: true, complete: true, retries: []string{}}
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
	done := func() (*transcriptRun, error) {
		write(runner.Event{Type: runner.EventComplete})
		t.tr = tr // finish closes it (an fsync) off the attempts' path
		t.seconds = roundSeconds(time.Since(start))
		return t, nil
	}

	if len(ps.contaminated) > 0 && !c.opts.RunContaminated {
		t.candidate, t.base = runner.Fail, "not_run"
		t.skippedWhy = "contaminated by diff: " + strings.Join(ps.contaminated, ", ")
		return done()
	}

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
			cmd := runner.Command{Argv: argv, Dir: tr.dir, Env: c.iso.env, WallBudget: ps.prop.WallBudget, Sandbox: c.sandboxFor(tr.dir)}
			ev := runner.NewEvidence(ps.framework, ps.prop.Name, ps.prop.PassMarker)
			if ev != nil {
				cmd.Output = ev
			}
			out = runner.Run(ctx, cmd)
			ev.Judge(&out)
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
		if out.Result == runner.Timeout && side == runner.SideCandidate && t.budgetWhy == "" {
			t.budgetWhy = fmt.Sprintf("wall budget %s exceeded at %.1fs (candidate attempt %d)", ps.prop.WallBudget, out.Wall.Seconds(), index)
		}
		return out.Result, nil
	}
	noCheck := func() (string, error) { return "", nil }
	fail := func(err error) (*transcriptRun, error) {
		tr.Close() //nolint:errcheck // the check fails with err
		return nil, err
	}
	// base sets t.base: from the replay cache or one base attempt. A store
	// or git failure there is flakegate's own and ends the check.
	base := func() error {
		if ctx.Err() != nil {
			t.base = "not_run"
			return nil
		}
		if err := c.baseReplay(ctx, w, j, argv, t, run); err != nil {
			return err
		}
		if t.base != "not_run" {
			write(runner.Event{Type: runner.EventBaseReplay, Result: t.base, FromCache: t.fromCache})
		}
		return nil
	}

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
		if err := base(); err != nil {
			return fail(err)
		}
		if t.base == runner.Fail {
			return done() // PROPERTY: the seed fails on base too
		}
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
		return done()
	case runner.Timeout:
		t.candidate, t.budgetOK = runner.Fail, false
	default:
		t.candidate = runner.Errored
	}
	if err := base(); err != nil {
		return fail(err)
	}
	return done()
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
	marker := ""
	if ps.prop.PassMarker != nil {
		marker = ps.prop.PassMarker.String()
	}
	key := flakegate.ReplayKey{
		BaseSHA:        c.baseSHA,
		Name:           ps.prop.Name,
		PassMarker:     marker,
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
		if ps.prop.Fixture == "" {
			return "", nil
		}
		sum, err := digest.Path(ctx, filepath.Join(base.dir, filepath.FromSlash(ps.prop.Fixture)))
		if err != nil {
			return "cannot digest the base fixture: " + err.Error(), nil
		}
		if sum != ps.baseFixtureSHA256 {
			return fmt.Sprintf("the base fixture digest is %s, expected %s", flakegate.ShortSHA(sum), flakegate.ShortSHA(ps.baseFixtureSHA256)), nil
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
	return flakegate.ShortSHA(candSHA) + "-" + hex.EncodeToString(b[:])
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
