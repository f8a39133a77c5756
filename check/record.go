// The run record of a triple: built from its transcript, labelled by the
// decision table, written and stored, and the summary line it gives.

package check

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/transcript"
)

// record ends the triple's run: it closes the transcript, builds the
// record, labels it with the decision table, writes and stores it, and
// returns the triple's summary line. voided is why a freeze of the
// triple no longer holds ("" when none was voided).
func (r *tripleRun) record(ctx context.Context, voided string) (fleet.Outcome, error) {
	r.closeTranscript()
	rec := r.runRecord()
	raw, sha, err := encodeRecord(rec)
	if err != nil {
		return fleet.Outcome{}, err
	}
	d := flakegate.ClassifyBytes(raw)
	recPath, err := r.writeRecord(ctx, raw, sha, d)
	if err != nil {
		return fleet.Outcome{}, err
	}
	if err := r.c.addFailure(ctx, r.j, &r.t); err != nil {
		return fleet.Outcome{}, err
	}
	res := r.result(rec, d, sha, recPath, voided)
	return fleet.Outcome{Result: res, Raw: raw}, nil
}

// closeTranscript closes the transcript (a failed close makes it
// incomplete) and keeps its digest.
func (r *tripleRun) closeTranscript() {
	if err := r.t.tr.Close(); err != nil {
		r.t.Complete = false
	}
	r.t.sha256 = r.t.tr.SHA256()
}

// runRecord is the triple's run record: the config entry, both sides'
// digests and envs, and what the attempts produced.
func (r *tripleRun) runRecord() *flakegate.RunRecord {
	c, ps, t := r.c, r.j.ps, &r.t
	p := ps.prop
	// What the candidate's prepare wrote of the watched paths is part of
	// the patch's change (grade/preparewatch.go), and the fixture digests are
	// those of the trees the attempts see.
	diff, watch := c.diff, ps.watch
	if wrote := c.prepareWrote(ps); len(wrote) > 0 {
		diff = append(append([]string(nil), c.diff...), wrote...)
		watch = append(append([]string(nil), ps.watch...), wrote...)
	}
	candFixture, baseFixture := c.fixtureDigests(ps)
	rec := &flakegate.RunRecord{
		Schema:               flakegate.Schema,
		RunID:                t.runID,
		Seed:                 r.j.seed,
		PropertyPath:         p.Path,
		PropertySHA256:       ps.candPropertySHA256,
		FixtureSHA256:        candFixture,
		BaseFixtureSHA256:    baseFixture,
		DiffPaths:            diff,
		CandidateResult:      t.Candidate,
		BaseSeedResult:       t.Base,
		RetryResults:         t.Retries,
		RetryCap:             c.cfg.RetryCap,
		BudgetOK:             t.BudgetOK,
		TranscriptComplete:   t.Complete,
		FixtureGeneratorPath: p.Generator,
		WatchPaths:           watch,
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
		BaseFromCache:        t.FromCache,
		ToolVersion:          flakegate.Version,
		RunnerHost:           c.opts.Runner.Host,
		RunnerID:             c.opts.Runner.ID,
		IncompleteReason:     t.givenUp,
		Name:                 p.Name,
		RunSHA256:            ps.runSHA256,
		PropertyEntrySHA256:  ps.entrySHA256,
		AttemptsSkipped:      t.skippedWhy,
		Command:              r.argv,
		Isolation:            c.iso.Label(),
		PrepareSHA256:        ps.prepareSHA256,
		PrepareSeconds:       c.prepareSeconds(ps, transcript.SideCandidate),
		BasePrepareSeconds:   c.prepareSeconds(ps, transcript.SideBase),
		BaseProbeResults:     t.Probes,
		FlakeOrigin:          t.Origin,
	}
	rec.SeedOrigin = r.j.seedOrigin()
	rec.Suite, rec.Order = c.suiteKeys(r.j)
	r.graderKeys(rec) // grade/gradertests.go
	return rec
}

// encodeRecord returns the record's bytes and their record hash.
func encodeRecord(rec *flakegate.RunRecord) (raw []byte, sha string, err error) {
	raw, err = rec.Marshal()
	if err != nil {
		return nil, "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot encode the record", Err: err}
	}
	sha, err = flakegate.RecordSHA256(raw)
	if err != nil {
		return nil, "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot hash the record", Err: err}
	}
	return raw, sha, nil
}

// writeRecord writes the record and its decision into the output folder
// and, unless the check is joined to a queue (which stores it when it
// labels the triple), into the store. It returns the record's path.
func (r *tripleRun) writeRecord(ctx context.Context, raw []byte, sha string, d flakegate.Decision) (string, error) {
	c := r.c
	recPath := filepath.Join(c.outDir, r.stem+".json")
	if err := publishFile(recPath, raw); err != nil {
		return "", err
	}
	if err := publishFile(filepath.Join(c.outDir, r.stem+".decision.json"), append(mustJSON(d), '\n')); err != nil {
		return "", err
	}
	if c.opts.Join == nil {
		if err := c.store.PutRecord(ctx, sha, raw); err != nil {
			return "", err
		}
	}
	return recPath, nil
}

// reason is the summary's reason for decision d: the table's, with what
// the check knows beside the record (the fixture's story, an attempt's
// error, a voided freeze, the watched paths, the missed budget, the
// flake's origin).
func (r *tripleRun) reason(d flakegate.Decision, voided string) string {
	ps, t := r.j.ps, &r.t
	reason := d.Reason
	if d.Label == flakegate.Fixture && ps.candFixtureReason != "" {
		reason = ps.candFixtureReason
	}
	if why := r.incompleteReason(d); d.Label == flakegate.Incomplete && why != "" {
		reason = why
	} else if d.Label.Reject() && t.reason != "" {
		reason = joinReason(reason, t.reason)
	}
	if voided != "" {
		reason = joinReason(reason, voided)
	}
	if d.Label == flakegate.Contaminated && len(r.graderEdits()) > 0 {
		reason = joinReason(r.graderReason(), voided) // one line: never the attempt's compiler output
	} else if why := r.contaminatedReason(d); d.Label == flakegate.Contaminated && why != "" {
		reason = strings.Replace(reason, d.Reason, why, 1) // each path once, with what watches it
	}
	if d.Label == flakegate.Budget && t.budgetWhy != "" {
		reason = joinReason(reason, t.budgetWhy)
	}
	if d.Label == flakegate.Scheduler && t.Origin != "" {
		reason = joinReason(reason, t.OriginWhy)
	}
	return reason
}

// result is the triple's summary line for record rec, labelled d, hashed
// sha and written at recPath.
func (r *tripleRun) result(rec *flakegate.RunRecord, d flakegate.Decision, sha, recPath, voided string) flakegate.Result {
	c, ps, t := r.c, r.j.ps, &r.t
	origin, counts := "", ""
	if d.Label == flakegate.Scheduler {
		origin, counts = t.Origin, t.OriginCounts
	}
	res := flakegate.Result{
		PropertyPath:     ps.prop.Path,
		Name:             ps.prop.Name,
		Seed:             r.j.seed,
		SeedOrigin:       rec.SeedOrigin,
		FixtureSHA256:    ps.candFixtureSHA256,
		Label:            d.Label,
		Row:              d.Row,
		Reason:           r.reason(d, voided),
		Freeze:           d.Freeze,
		RecordSHA256:     sha,
		Record:           recPath,
		Reproduce:        r.reproduce,
		Attempts:         t.attempts,
		Seconds:          t.seconds,
		BaseCached:       t.FromCache,
		AttemptsSkipped:  t.skippedWhy,
		RunnerID:         c.opts.Runner.ID,
		RunnerHost:       c.opts.Runner.Host,
		Isolation:        c.iso.Label(),
		Suite:            rec.Suite,
		FlakeOrigin:      origin,
		BaseProbeResults: t.Probes,
		FlakeCounts:      counts,
		BaseSHA:          c.baseSHA,
		CandidateSHA:     c.candSHA,
		At:               c.now().UTC().Format(time.RFC3339),
	}
	res.CandidateAttempts, res.BaseAttempts = r.attemptCounts()
	return res
}

// attemptCounts counts the candidate and base attempts; a base result
// from the cache counts as the base attempt an earlier check made.
func (r *tripleRun) attemptCounts() (candidate, base int) {
	for _, a := range r.t.attempts {
		switch a.Side {
		case transcript.SideBase:
			base++
		case transcript.SideCandidate:
			candidate++
		}
	}
	if r.t.FromCache {
		base++
	}
	return candidate, base
}

// joinReason joins two reasons with "; ", either of which may be empty.
func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
