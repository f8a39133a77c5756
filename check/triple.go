// One triple from its job to its transcript: the jobs in config order,
// the command of an attempt, the ledger lookup that may skip it, and the
// attempt loop (candidate attempts under the retry cap, then the base).

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
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/transcript"
)

// job is one triple of the config: a property and one of its seeds.
type job struct {
	index int // position in the summary
	ps    *propState
	seed  flakegate.Seed
	drawn bool // drawn for the candidate (DrawSeeds), not listed in the config
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
		for _, s := range DrawSeeds(c.secret, c.candSHA, ps.prop, ps.prop.RandomSeeds) {
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s, drawn: true})
		}
	}
	return jobs
}

// argv is the command of one attempt of the triple: the run template
// expanded, with the options that make the framework print its evidence.
func (c *checker) argv(j *job) ([]string, error) {
	argv, err := tripleArgv(j.ps.prop, j.seed)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: j.ps.key + ".run: " + err.Error()}
	}
	return argv, nil
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

	if why := c.prepareFailure(ps); why != "" && (len(ps.contaminated) == 0 || c.opts.RunContaminated) {
		return c.prepareGivenUp(ctx, j, why)
	}
	t, err := c.attempts(ctx, w, j, argv)
	if err != nil {
		return nil, err
	}
	return func() (tripleResult, error) { return c.finish(ctx, j, t, argv, stem, reproduce, voided) }, nil
}

// transcriptRun is what the attempts of one triple produced.
type transcriptRun struct {
	tr        *transcript.Writer
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
	// probes are the flake probe's results (probe.go), nil when none ran;
	// origin is "base" or "new" after a probe, and originWhy says why.
	probes            []string
	origin, originWhy string
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
//   - likewise when the fixture digests differ (known before any attempt):
//     the table says FIXTURE from the digests alone;
//   - after a failed first candidate attempt the base seed result is
//     obtained first (cache or replay); when base fails too the triple is
//     PROPERTY whatever the retries do, so none runs;
//   - otherwise the candidate retries up to retry_cap times (stopping at
//     the first pass) and the base seed is replayed once;
//   - when that gives SCHEDULER, the flake probe runs the base seed up to
//     flake_probe_runs more times (probe.go).
func (c *checker) attempts(ctx context.Context, w int, j *job, argv []string) (*transcriptRun, error) {
	start := time.Now()
	ps := j.ps
	t := &transcriptRun{runID: newRunID(c.candSHA), budgetOK: true, complete: true, retries: []string{}}
	t.path = filepath.Join(c.outDir, "transcripts", t.runID+".jsonl")
	tr, err := transcript.Create(t.path)
	if err != nil {
		return nil, err
	}
	write := func(ev transcript.Event) {
		if tr.Write(ev) != nil {
			t.complete = false
		}
	}
	retryCap := c.cfg.RetryCap
	write(transcript.Event{Type: transcript.EventRetryCap, RetryCap: &retryCap})
	c.prepareEvents(ps, write)
	done := func() (*transcriptRun, error) {
		write(transcript.Event{Type: transcript.EventComplete})
		t.tr = tr // finish closes it (an fsync) off the attempts' path
		t.seconds = roundSeconds(time.Since(start))
		return t, nil
	}

	if len(ps.contaminated) > 0 && !c.opts.RunContaminated {
		t.candidate, t.base = runner.Fail, "not_run"
		t.skippedWhy = "contaminated by diff: " + strings.Join(ps.contaminated, ", ")
		return done()
	}
	if ps.candFixtureSHA256 != ps.baseFixtureSHA256 && !c.opts.RunContaminated {
		t.candidate, t.base = runner.Fail, "not_run"
		t.skippedWhy = fmt.Sprintf("fixture differs from base: %s is %s on the candidate, %s on base",
			ps.prop.Fixture, flakegate.ShortSHA(ps.candFixtureSHA256), flakegate.ShortSHA(ps.baseFixtureSHA256))
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
		write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index})
		var out runner.Outcome
		if why != "" {
			out = runner.Outcome{Result: runner.Errored, ExitCode: -1, Started: time.Now(), Reason: why}
		} else {
			cmd := runner.Command{Argv: argv, Dir: tr.dir, Env: c.iso.env, WallBudget: ps.prop.WallBudget, Sandbox: c.attemptSandbox(tr, ps)}
			ev := evidence.New(ps.framework, ps.prop.Name, ps.prop.PassMarker, ps.prop.FailMarker)
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
		write(transcript.Event{Type: transcript.EventAttemptEnd, Side: side, Index: index, Result: out.Result,
			ExitCode: out.ExitCode, Signal: out.Signal, WallSeconds: a.WallSeconds, Reason: out.Reason})
		if out.Result == runner.Errored && t.reason == "" {
			t.reason = side + " attempt " + strconv.Itoa(index) + ": " + out.Reason
		}
		if out.Result == runner.Timeout && side == transcript.SideCandidate && t.budgetWhy == "" {
			t.budgetWhy = fmt.Sprintf("wall budget %s exceeded at %.1fs (candidate attempt %d)", ps.prop.WallBudget, out.Wall.Seconds(), index)
			if out.Limit != "" {
				t.budgetWhy = fmt.Sprintf("sandbox %s reached at %.1fs (candidate attempt %d)", out.Limit, out.Wall.Seconds(), index)
			}
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
			write(transcript.Event{Type: transcript.EventBaseReplay, Result: t.base, FromCache: t.fromCache})
		}
		return nil
	}

	trees := c.trees.workers[w]
	r, err := run(transcript.SideCandidate, 0, trees.nextCandidate(), noCheck)
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
			rr, err := run(transcript.SideCandidate, i, trees.nextCandidate(), noCheck)
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
		if err := c.probe(ctx, w, j, t, run); err != nil {
			return fail(err)
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
