// The check's side of the worker pool (package fleet): where the workers
// take their triples from (the check's list, a shard of it, or the
// shared queue of queue.go), how a worker runs them (runTriple,
// runBatch) and what the check does with each one labelled.

package check

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
)

// pool is the check's fleet.Worker and fleet.Progress: it runs the jobs
// by position and keeps their results by config position (the ones this
// run did not label are zero).
type pool struct {
	c       *checker
	jobs    []job
	results []fleet.Outcome
}

func (c *checker) newPool(jobs []job) *pool {
	return &pool{c: c, jobs: jobs, results: make([]fleet.Outcome, len(jobs))}
}

// Triple runs the job at pos alone, or labels it given up on.
func (p *pool) Triple(ctx context.Context, w, pos int, giveUp string) (func() (fleet.Outcome, error), error) {
	if giveUp != "" {
		return p.c.givenUp(ctx, &p.jobs[pos], giveUp)
	}
	return p.c.runTriple(ctx, w, &p.jobs[pos])
}

// Batch runs the jobs at pos as one batch.
func (p *pool) Batch(ctx context.Context, w int, pos []int) ([]fleet.Finished, error) {
	jobs := make([]*job, len(pos))
	for i, k := range pos {
		jobs[i] = &p.jobs[k]
	}
	return p.c.runBatch(ctx, w, jobs)
}

// Labelled keeps the result; a batch's member is shown with its batch
// when the handler shows batches (BatchProgressHandler).
func (p *pool) Labelled(pos int, o fleet.Outcome, batched bool) {
	p.results[pos] = o
	if _, ok := p.c.progress.(BatchProgressHandler); !batched || !ok {
		p.c.progress.Done(o.Result)
	}
}

// BatchLabelled shows a batch's results as one line, in the batch's order.
func (p *pool) BatchLabelled(pos []int) {
	bh, ok := p.c.progress.(BatchProgressHandler)
	if !ok {
		return
	}
	ordered := make([]flakegate.Result, len(pos))
	for i, k := range pos {
		ordered[i] = p.results[k].Result
	}
	first := &p.jobs[pos[0]]
	bh.BatchDone(first.shape.Framework+", seed "+first.seed.String(), ordered)
}

func (p *pool) Note(msg string)      { p.c.progress.Note(NoteTopic, msg) }
func (p *pool) QueueLine(msg string) { p.c.progress.Note(QueueTopic, msg) }

// units plans the positions into units (planBatches) for fleet.List and
// fleet.Join; a suite's test alone is a batch of one (suiteMember).
func (p *pool) units(positions []int) ([][]int, func(pos int) bool) {
	units := planBatches(p.jobs, positions)
	return units, func(pos int) bool { return suiteMember(&p.jobs[pos]) }
}
