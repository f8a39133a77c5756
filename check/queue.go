package check

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
)

// joinQueue enqueues the check's triples (or verifies the check another
// runner enqueued) and returns the queue as the workers' source
// (fleet.Join).
func (c *checker) joinQueue(ctx context.Context, p *pool) (fleet.Source, error) {
	q, ok := c.store.(flakegate.CheckQueue)
	if !ok {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "check --join",
			Message: "--join needs a shared store: the ledger is not a PostgreSQL database",
			Hint:    "pass --ledger postgres://... (or set FLAKEGATE_LEDGER), or use --shard I/N with any store"}
	}
	triples := make([]flakegate.QueuedTriple, len(p.jobs))
	all := make([]int, len(p.jobs))
	for i := range p.jobs {
		j := &p.jobs[i]
		triples[i] = flakegate.QueuedTriple{ID: j.tripleID(), Position: i, PropertyPath: j.ps.prop.Path, Name: j.ps.prop.Name, Seed: j.seed}
		all[i] = i
	}
	qc := flakegate.QueuedCheck{BaseSHA: c.baseSHA, CandidateSHA: c.candSHA, ConfigSHA256: c.cfgSHA}
	// The check's own batch plan: every runner makes the same one, from
	// the same config and seeds.
	units, batchOfOne := p.units(all)
	return fleet.Join(ctx, q, *c.opts.Join, qc, triples, units, batchOfOne, c.opts.Runner, p)
}

// givenUp labels a triple without running it: a record with
// transcript_complete false and the reason in incomplete_reason, which
// the decision table labels INCOMPLETE (a triple whose lease expired
// too often, fleet.Join).
func (c *checker) givenUp(ctx context.Context, j *job, reason string) (func() (fleet.Outcome, error), error) {
	r, err := c.newTripleRun(j)
	if err != nil {
		return nil, err
	}
	return r.giveUp(ctx, reason, false)
}

// joinedSummary waits for nothing: the workers return once every triple
// of the check is labelled. It reads the whole check's summary.
func (c *checker) joinedSummary(ctx context.Context) (*flakegate.Summary, error) {
	q := c.store.(flakegate.CheckQueue)
	sum, _, err := fleet.QueuedSummary(ctx, q, c.opts.Join.CheckID)
	if err != nil {
		return nil, err
	}
	if sum == nil {
		return nil, internalf("check %s: the runners stopped before every triple was labelled", c.opts.Join.CheckID)
	}
	return sum, nil
}
