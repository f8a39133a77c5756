// The worker pool: where the workers take their triples from (a
// jobSource: the config's list, a shard, or the shared queue of queue.go)
// and the workers and finisher that run them.

package check

import (
	"context"
	"fmt"
	"sync"

	"github.com/flakegate/flakegate"
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
	// members, when set (a batch claimed from the queue), are the tasks
	// of batch's triples, each with its own lease (ctx, run, sink and
	// release), in the same order.
	members []*task
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
	return &listSource{jobs: jobs, units: planBatches(jobs, positions)}
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
	if len(u) > 1 || suiteMember(t.j) { // suitejs.go: a suite's test alone is a batch of one
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
// syncs of one triple overlap the attempts of the next. A worker hands
// the finisher a whole batch at once (one send, not one per member), so
// it starts the next batch while the records of the last one are
// written, and the finisher writes the records of a batch a few at a
// time (finishBatch).
func (c *checker) runJobs(ctx context.Context, src jobSource, n int) ([]tripleResult, error) {
	results := make([]tripleResult, n)
	finished := make(chan []pending, len(c.trees.workers))
	errs := make(chan error, len(c.trees.workers)+1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for w := range c.trees.workers {
		go func(w int) { errs <- c.work(ctx, cancel, w, src, finished) }(w)
	}
	finisherDone := make(chan error, 1)
	go func() {
		var first error
		for unit := range finished {
			if first != nil {
				for _, p := range unit {
					p.t.done()
				}
				continue
			}
			rs, ferrs := finishBatch(unit)
			for i, p := range unit {
				if first != nil {
					p.t.done()
					continue
				}
				r, err := rs[i], ferrs[i]
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
		first = flakegate.Interrupted(ctx)
	}
	return results, first
}

// work is worker w of runJobs: it runs the triples and batches src gives
// until there are none, and hands each finished one to the finisher. It
// returns the first error, having cancelled the others with it.
func (c *checker) work(ctx context.Context, cancel context.CancelCauseFunc, w int, src jobSource, finished chan<- []pending) error {
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
			if err := c.runBatchTask(ctx, w, t, finished); err != nil {
				first = err
				cancel(err)
				break
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
		finished <- []pending{{t, finish, nil}}
	}
	return first
}

// pending is a triple whose attempts are done, for the finisher.
type pending struct {
	t      *task
	finish func() (tripleResult, error)
	batch  *batchTally
}

// runBatchTask runs the triples of batch task t on worker w and hands
// each one to the finisher. In a joined check (t.members set) every
// member keeps its own lease: a member given up on is settled alone, the
// others run as one batch, which stops only when the lease of every one
// of them is lost (then none is labelled: the triples are other
// runners' now). A member whose lease alone is lost runs on with the
// batch, but its sink refuses its label, as for a triple alone.
func (c *checker) runBatchTask(ctx context.Context, w int, t *task, finished chan<- []pending) error {
	if t.members == nil {
		done, err := c.runBatch(ctx, w, t.batch)
		if err != nil {
			return err
		}
		tally := newBatchTally(t.batch)
		unit := make([]pending, len(done))
		for i, f := range done {
			unit[i] = pending{&task{j: f.j}, f.finish, tally}
		}
		finished <- unit
		return nil
	}
	byJob := map[*job]*task{}
	var live []*task
	var jobs []*job
	for _, m := range t.members {
		if m.run == nil {
			byJob[m.j] = m
			live = append(live, m)
			jobs = append(jobs, m.j)
			continue
		}
		finish, err := m.run(m.ctx, w, m.j)
		if err != nil {
			m.done()
			if m.ctx.Err() != nil && ctx.Err() == nil {
				c.progress.Note(NoteTopic, fmt.Sprintf("%s seed %s: lease lost; another runner has the triple", m.j.ps.prop.Path, m.j.seed))
				continue
			}
			for _, o := range live {
				o.done()
			}
			return err
		}
		finished <- []pending{{m, finish, nil}}
	}
	if len(live) == 0 {
		return nil
	}
	bctx, stop := whileAnyLease(ctx, live)
	done, err := c.runBatch(bctx, w, jobs)
	stop()
	if bctx.Err() != nil && ctx.Err() == nil {
		for _, m := range live {
			m.done()
		}
		c.progress.Note(NoteTopic, fmt.Sprintf("batch of %d (%s seed %s ...): every lease lost; other runners have the triples", len(live), live[0].j.ps.prop.Path, live[0].j.seed))
		return nil
	}
	if err != nil {
		for _, m := range live {
			m.done()
		}
		return err
	}
	tally := newBatchTally(jobs)
	unit := make([]pending, len(done))
	for i, f := range done {
		unit[i] = pending{byJob[f.j], f.finish, tally}
	}
	finished <- unit
	return nil
}

// whileAnyLease returns a context of ctx that ends when the contexts of
// all members have ended (every lease lost), until stop is called;
// after stop it ends only with ctx.
func whileAnyLease(ctx context.Context, members []*task) (context.Context, func()) {
	bctx, cancel := context.WithCancelCause(ctx)
	stopped := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for _, m := range members {
			select {
			case <-m.ctx.Done():
			case <-stopped:
				return
			}
		}
		cancel(errLeaseLost)
	}()
	stop := sync.OnceFunc(func() {
		close(stopped)
		<-exited
		// bctx is still the finisher's (the members' records): it ends
		// with ctx, when the check's workers are done.
	})
	return bctx, stop
}

// finishParallel is how many records of one batch the finisher writes
// at once: each waits mostly on its disk syncs (the transcript, the
// record, its decision, the store's copy), which the file system
// commits together.
const finishParallel = 4

// finishBatch runs the finish of every pending triple of a unit, a few
// at a time, and returns their results in the unit's order. The bytes
// of each record are the same as one at a time: each finish writes only
// its own triple's files.
func finishBatch(unit []pending) ([]tripleResult, []error) {
	rs := make([]tripleResult, len(unit))
	errs := make([]error, len(unit))
	if len(unit) == 1 {
		rs[0], errs[0] = unit[0].finish()
		return rs, errs
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(finishParallel, len(unit)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rs[i], errs[i] = unit[i].finish()
			}
		}()
	}
	for i := range unit {
		next <- i
	}
	close(next)
	wg.Wait()
	return rs, errs
}
