// The worker pool: where the workers take their triples from (a
// jobSource: the config's list, a shard, or the shared queue of queue.go)
// and the workers and finisher that run them.

package check

import (
	"context"
	"fmt"
	"sync"
)

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
	// batch, when set, are the triples run as one batch (batch.go); j is
	// then the first of them.
	batch []*job
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

// listSource hands out a fixed list of jobs, in units: a triple alone,
// or the triples of one batch (planBatches).
type listSource struct {
	mu    sync.Mutex
	jobs  []job
	units [][]int
}

func (c *checker) newListSource(jobs []job, positions []int) *listSource {
	return &listSource{jobs: jobs, units: c.planBatches(jobs, positions)}
}

func (s *listSource) next(ctx context.Context) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.units) == 0 || ctx.Err() != nil {
		return nil, nil
	}
	u := s.units[0]
	s.units = s.units[1:]
	t := &task{j: &s.jobs[u[0]]}
	if len(u) > 1 {
		for _, pos := range u {
			t.batch = append(t.batch, &s.jobs[pos])
		}
	}
	return t, nil
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
		batch  *batchTally
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
				if t.batch != nil {
					done, err := c.runBatch(ctx, w, t.batch)
					if err != nil {
						first = err
						cancel(err)
						break
					}
					tally := newBatchTally(t.batch)
					for _, f := range done {
						finished <- pending{&task{j: f.j}, f.finish, tally}
					}
					continue
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
					c.progress.Note(NoteTopic, fmt.Sprintf("%s seed %s: lease lost; another runner has the triple", t.j.ps.prop.Path, t.j.seed))
					continue
				}
				if err != nil {
					t.done()
					first = err
					cancel(err)
					break
				}
				finished <- pending{t, finish, nil}
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
				if p.batch != nil {
					p.batch.done(c.progress, p.t.j, r.result)
				} else {
					c.progress.Done(r.result)
				}
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
