// The run record of a triple: built from its transcript, labelled by the
// decision table, written and stored, and the summary line it gives.

package check

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/transcript"
)

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
		Isolation:            c.iso.label(),
		PrepareSHA256:        ps.prepareSHA256,
		PrepareSeconds:       c.prepareSeconds(ps, transcript.SideCandidate),
		BasePrepareSeconds:   c.prepareSeconds(ps, transcript.SideBase),
		BaseProbeResults:     t.probes,
		FlakeOrigin:          t.origin,
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
	origin := ""
	if d.Label == flakegate.Scheduler && t.origin != "" {
		origin = t.origin
		reason = joinReason(reason, t.originWhy)
	}
	res := flakegate.Result{
		PropertyPath:     p.Path,
		Name:             p.Name,
		Seed:             j.seed,
		SeedOrigin:       rec.SeedOrigin,
		FixtureSHA256:    ps.candFixtureSHA256,
		Label:            d.Label,
		Row:              d.Row,
		Reason:           reason,
		Freeze:           d.Freeze,
		RecordSHA256:     sha,
		Record:           recPath,
		Reproduce:        reproduce,
		Attempts:         t.attempts,
		Seconds:          t.seconds,
		BaseCached:       t.fromCache,
		AttemptsSkipped:  t.skippedWhy,
		RunnerID:         c.opts.Runner.ID,
		RunnerHost:       c.opts.Runner.Host,
		Isolation:        c.iso.label(),
		FlakeOrigin:      origin,
		BaseProbeResults: t.probes,
		BaseSHA:          c.baseSHA,
		CandidateSHA:     c.candSHA,
		At:               c.now().UTC().Format(time.RFC3339),
	}
	for _, a := range t.attempts {
		switch a.Side {
		case transcript.SideBase:
			res.BaseAttempts++
		case transcript.SideCandidate:
			res.CandidateAttempts++
		}
	}
	if t.fromCache {
		res.BaseAttempts++ // the base run the cache holds, made by an earlier check
	}
	return tripleResult{result: res, raw: raw}, nil
}
