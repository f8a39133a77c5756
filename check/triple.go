// One triple from its job to its transcript: the jobs in config order,
// the command of an attempt, the ledger lookup that may skip it, and its
// run (tripleRun): the transcript, then the attempts in the order that
// decides the label.

package check

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/fleet"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/transcript"
)

// notRun is the base seed result of a triple whose base seed did not
// run: skipped, interrupted or given up on. The table reads it as no
// base replay (INCOMPLETE), never as a pass.
const notRun = batch.NotRun

// job is one triple of the config: a property and one of its seeds.
type job struct {
	index  int // position in the summary
	ps     *propState
	seed   flakegate.Seed
	drawn  bool // drawn for the base (DrawSeeds), not listed in the config
	corpus bool // from the failure corpus (corpus.go)
	// shape, when set, is how the triple takes part in a batch
	// (batchplan.go); nil runs it alone.
	shape *batch.Shape
}

// seedOrigin is the record's "seed_origin": "" for a listed seed, else
// flakegate.SeedDrawn or flakegate.SeedCorpus.
func (j *job) seedOrigin() string {
	switch {
	case j.drawn:
		return flakegate.SeedDrawn
	case j.corpus:
		return flakegate.SeedCorpus
	}
	return ""
}

// jobs lists the triples in config order, after preflight: each
// property's listed seeds, then its drawn seeds, then the seeds of its
// failure corpus that are neither.
func (c *checker) jobs() []job {
	var jobs []job
	for _, ps := range c.props {
		seen := map[flakegate.Seed]bool{}
		for _, s := range ps.prop.Seeds {
			seen[s] = true
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s})
		}
		for _, s := range c.drawnFor(ps) {
			seen[s] = true
			jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s, drawn: true})
		}
		for _, s := range ps.corpus {
			if !seen[s] {
				seen[s] = true
				jobs = append(jobs, job{index: len(jobs), ps: ps, seed: s, corpus: true})
			}
		}
	}
	return jobs
}

// argv is the command of one attempt of the triple: the run template
// expanded, with the options that make the framework print its evidence.
func (c *checker) argv(j *job) ([]string, error) {
	argv, err := batch.TripleArgv(j.ps.prop, j.seed)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath, Message: j.ps.key + ".run: " + err.Error()}
	}
	return argv, nil
}

// maxStem bounds a triple's file stem: with ".decision.json" and the
// temporary name a write goes through (".STEM.json.NNNNNNNNN.tmp"), a
// file name stays well under the 255 bytes file systems allow.
const maxStem = 180

// stem names the triple's files in the output folder. A longer one (a
// parametrised test's node id can hold its arguments: pytest prints
// bytes as \x80...) keeps its first bytes and ends in a digest of the
// whole, so that two long names stay apart.
func (j *job) stem() string {
	p := j.ps.prop
	stem := fmt.Sprintf("%02d-%s-seed-%s", j.ps.index, slug(p.Path), slug(j.seed.String()))
	if p.Name != "" {
		stem = fmt.Sprintf("%02d-%s-%s-seed-%s", j.ps.index, slug(p.Path), slug(p.Name), slug(j.seed.String()))
	}
	if len(stem) <= maxStem {
		return stem
	}
	sum := sha256.Sum256([]byte(stem))
	return stem[:maxStem-17] + "-" + hex.EncodeToString(sum[:8])
}

// triple is the job's triple, with the candidate's fixture digest.
func (j *job) triple() flakegate.Triple {
	return flakegate.Triple{PropertyPath: j.ps.prop.Path, Name: j.ps.prop.Name, Seed: j.seed, FixtureSHA256: j.ps.candFixtureSHA256}
}

// runTriple consults the ledger, then runs the candidate attempts and the
// base replay of one triple. The returned finish writes its record.
func (c *checker) runTriple(ctx context.Context, w int, j *job) (func() (fleet.Outcome, error), error) {
	r, finish, voided, err := c.beginTriple(ctx, w, j)
	if err != nil || finish != nil {
		return finish, err
	}
	if err := r.run(ctx, c.trees.Workers[w]); err != nil {
		return nil, err
	}
	return func() (fleet.Outcome, error) { return r.record(ctx, voided) }, nil
}

// beginTriple consults the ledger for j: a skipped triple, or one whose
// prepare failed, is settled without an attempt (finish is set); else it
// returns the run to make and why a freeze of it was voided.
func (c *checker) beginTriple(ctx context.Context, w int, j *job) (r *tripleRun, finish func() (fleet.Outcome, error), voided string, err error) {
	r, err = c.newTripleRun(j)
	if err != nil {
		return nil, nil, "", err
	}
	if c.mayConsultLedger(j.ps) {
		triple := j.triple()
		d, err := flakegate.SkipBound(ctx, c.store, triple, c.binding(j), c.opts.By)
		if err != nil {
			return nil, nil, "", err
		}
		if d.Skipped {
			stem, reproduce := r.stem, r.reproduce // r is returned nil
			return nil, func() (fleet.Outcome, error) { return c.skipped(ctx, j, triple, d, stem, reproduce) }, "", nil
		}
		if d.Voided {
			voided = d.Reason
		}
	}

	// The prepares run after the lookup, and only for a triple whose
	// attempts run: the diff or the digests alone decide the others.
	if r.decidedByDiff() == "" {
		if err := c.ensurePrepared(ctx, w, j.ps); err != nil {
			return nil, nil, "", err
		}
		if why := c.prepareFailure(j.ps); why != "" {
			finish, err = r.giveUp(ctx, why, true)
			return nil, finish, "", err
		}
	}
	return r, nil, voided, nil
}

// tripleRun is one run of a triple: its job and command, the trees of the
// worker that runs it, its transcript and what its attempts produced.
// Its methods are the steps of the run (run): the transcript, the
// attempts (a batch of one for the Driver of package batch, in the order
// that decides the label; runner.go), and then the record (record,
// record.go).
// A tripleRun is used by one worker, then by the finisher.
type tripleRun struct {
	c         *checker
	j         *job
	argv      []string
	stem      string // the triple's files in the output folder
	reproduce string // the command line that runs the triple again
	trees     *sitepkg.WorkerTrees
	t         transcriptRun
}

// transcriptRun is what the attempts of one triple produced.
type transcriptRun struct {
	tr          *transcript.Writer
	runID       string
	path        string
	sha256      string
	batch.Tally // what the attempts decided (the Driver's, batch/drive.go)
	attempts    []flakegate.Attempt
	reason      string // why an attempt errored, for the summary
	givenUp     string // why the triple was not run to the end (incomplete_reason)
	budgetWhy   string // the budget and the wall time of the attempt that missed it
	seconds     float64
	// skippedWhy says why no attempt ran ("" when they ran).
	skippedWhy string
}

// newTripleRun prepares the run of j: its command and file names.
func (c *checker) newTripleRun(j *job) (*tripleRun, error) {
	argv, err := c.argv(j)
	if err != nil {
		return nil, err
	}
	return &tripleRun{c: c, j: j, argv: argv, stem: j.stem(), reproduce: c.reproduce(j.ps, j.seed)}, nil
}

// open creates the triple's transcript under a new run id and writes its
// first event, the retry cap; with prepares, the prepares of the
// property's trees follow it.
func (r *tripleRun) open(prepares bool) error {
	r.t.runID = newRunID(r.c.candSHA)
	r.t.path = filepath.Join(r.c.outDir, "transcripts", r.t.runID+".jsonl")
	tr, err := transcript.Create(r.t.path)
	if err != nil {
		return err
	}
	r.t.tr = tr
	retryCap := r.c.cfg.RetryCap
	r.write(transcript.Event{Type: transcript.EventRetryCap, RetryCap: &retryCap})
	if prepares {
		r.c.prepareEvents(r.j.ps, r.write)
	}
	return nil
}

// write appends ev to the transcript; a failed write makes it incomplete.
func (r *tripleRun) write(ev transcript.Event) {
	if r.t.tr.Write(ev) != nil {
		r.t.Complete = false
	}
}

// giveUp labels the triple without running it: a transcript that says
// the retry cap (and the prepares, with prepares) and ends incomplete,
// and a record with transcript_complete false and the reason in
// incomplete_reason, which the decision table labels INCOMPLETE. The
// lease of a queued triple that expired too often (fleet.Join;
// queue.go, givenUp)
// and a failed prepare (runTriple) end here.
func (r *tripleRun) giveUp(ctx context.Context, reason string, prepares bool) (func() (fleet.Outcome, error), error) {
	r.t = transcriptRun{Tally: batch.Tally{Candidate: attempt.Errored, Retries: []string{}, Base: notRun, BudgetOK: true, Complete: false},
		attempts: []flakegate.Attempt{}, reason: reason, givenUp: reason}
	if err := r.open(prepares); err != nil {
		return nil, err
	}
	return func() (fleet.Outcome, error) { return r.record(ctx, "") }, nil
}

// run writes the transcript on the worker's trees: the retry cap and the
// prepares first, then the attempts (attempts), then complete. An error
// is flakegate's own failure and ends the check.
func (r *tripleRun) run(ctx context.Context, trees *sitepkg.WorkerTrees) error {
	start := time.Now()
	r.trees = trees
	r.t = transcriptRun{Tally: batch.Tally{BudgetOK: true, Complete: true, Retries: []string{}}}
	if err := r.open(true); err != nil {
		return err
	}
	if err := r.attempts(ctx); err != nil {
		r.t.tr.Close() //nolint:errcheck // the check fails with err
		return err
	}
	r.write(transcript.Event{Type: transcript.EventComplete})
	r.t.seconds = attempt.Seconds(time.Since(start))
	return nil // record closes the transcript (an fsync) off the attempts' path
}

// attempts runs the attempts of the triple. The order saves work a label
// does not need:
//   - when the diff alone makes the triple CONTAMINATED no attempt runs
//     (unless Options.RunContaminated): the record says candidate_result
//     "fail", no retries, base_seed_result "not_run" and why in the extra
//     key "attempts_skipped"; the table says CONTAMINATED from the diff (and
//     would say INCOMPLETE, never a pass, were the watched path dropped);
//   - likewise when the fixture digests differ (known before any attempt):
//     the table says FIXTURE from the digests alone;
//   - otherwise the triple is a batch of one for the Driver
//     (batch/drive.go): the first candidate attempt, the base seed (cache
//     or replay), the retries after a failure that base does not share,
//     and the flake probe of a SCHEDULER result.
func (r *tripleRun) attempts(ctx context.Context) error {
	if why := r.skipWhy(); why != "" {
		r.t.Candidate, r.t.Base = attempt.Fail, notRun
		r.t.skippedWhy = why
		return nil
	}
	m := r.member("")
	return r.c.driver(aloneRunner{r}, map[*batch.Member]*tripleRun{m: r}).Drive(ctx, []*batch.Member{m})
}

// decidedByDiff says why the diff or the committed digests alone decide
// the triple (no prepare, no attempt runs), "" when they do not.
func (r *tripleRun) decidedByDiff() string {
	ps := r.j.ps
	switch {
	case r.c.opts.RunContaminated:
		return ""
	case len(ps.contaminated) > 0:
		return "contaminated by diff: " + strings.Join(ps.contaminated, ", ")
	case ps.candFixtureSHA256 != ps.baseFixtureSHA256:
		return r.skipWhy()
	}
	return ""
}

// skipWhy says why no attempt of the triple runs: the diff contaminates
// it, the candidate's prepare wrote a watched path, or the fixture the
// attempts would see differs from base's; "" when they run.
func (r *tripleRun) skipWhy() string {
	ps := r.j.ps
	candFixture, baseFixture := r.c.fixtureDigests(ps)
	switch {
	case r.c.opts.RunContaminated:
		return ""
	case len(ps.contaminated) > 0:
		return "contaminated by diff: " + strings.Join(ps.contaminated, ", ")
	case len(r.c.prepareWrote(ps)) > 0:
		return "contaminated by the candidate's prepare, which wrote " + strings.Join(r.c.prepareWrote(ps), ", ")
	case candFixture != baseFixture:
		why := ""
		if pw := r.c.preparedWatch(ps); pw != nil && pw.FixtureWhy != "" {
			why = " (" + pw.FixtureWhy + ")"
		}
		return fmt.Sprintf("fixture differs from base: %s is %s on the candidate, %s on base%s",
			ps.prop.Fixture, flakegate.ShortSHA(candFixture), flakegate.ShortSHA(baseFixture), why)
	}
	return ""
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
