// The worker pool: where the workers take their triples from (a
// Source: the check's list, a shard of it, or the shared queue of
// queue.go) and the workers and finisher that run them.

package fleet

import (
	"context"
	"fmt"
	"sync"

	"github.com/flakegate/flakegate"
)

// Outcome is a finished triple: its summary line and the record bytes
// (nil when skipped).
type Outcome struct {
	Result flakegate.Result
	Raw    []byte
}

// Finished is a triple whose attempts are done: Finish writes its record.
type Finished struct {
	Pos    int
	Finish func() (Outcome, error)
}

// A Worker runs the attempts of triples, named by their positions in the
// check, on the trees of worker w. The Outcome's Finish writes the
// record; the pool calls it on its finisher.
type Worker interface {
	// Triple runs the triple at pos alone. giveUp, when set, labels it
	// without running it, with giveUp as the reason (a triple whose lease
	// expired too often).
	Triple(ctx context.Context, w, pos int, giveUp string) (finish func() (Outcome, error), err error)
	// Batch runs the triples at pos (planned together) as one batch.
	Batch(ctx context.Context, w int, pos []int) ([]Finished, error)
}

// Progress hears what the pool and the queue do. Labelled and
// BatchLabelled are called from one goroutine (the finisher), Note and
// QueueLine from any.
type Progress interface {
	// Labelled is called once for each triple this run labelled; batched
	// says it ran in a batch, whose BatchLabelled follows once every
	// member of it is labelled.
	Labelled(pos int, o Outcome, batched bool)
	// BatchLabelled is called once per batch, after its last member's
	// Labelled, with the positions of its members in the batch's order.
	BatchLabelled(pos []int)
	// Note is a line about one triple (a lease lost).
	Note(msg string)
	// QueueLine is a line of the shared queue's progress.
	QueueLine(msg string)
}

// A Source hands the workers their triples, one at a time: the check's
// list or one shard of it (List), or a queue shared with other runners
// (Join).
type Source interface {
	// Next returns the next task, or nil when none is left for this run.
	Next(ctx context.Context) (*Task, error)
}

// Task is one triple, or one batch of triples, handed to a worker.
type Task struct {
	// Pos is the triple's position in the check.
	Pos int
	// Batch, when set, are the positions run as one batch; Pos is then
	// the first of them.
	Batch []int
	// members, when set (a batch claimed from the queue), are the tasks
	// of Batch's triples, each with its own lease (ctx, giveUp, sink and
	// release), in the same order.
	members []*Task
	// ctx, when set, ends the triple's attempts early (its lease was lost).
	ctx context.Context
	// giveUp, when set, labels the triple without running it.
	giveUp string
	// what names the triple in notes ("path seed S").
	what string
	// sink, when set, receives the finished triple; false means the
	// result is not this run's to report (another runner has it).
	sink func(ctx context.Context, o *Outcome) (bool, error)
	// release, when set, is called once the triple is done with.
	release func()
}

func (t *Task) done() {
	if t.release != nil {
		t.release()
	}
}

// listSource hands out a fixed list of units: a triple alone, or the
// triples of one batch.
type listSource struct {
	mu         sync.Mutex
	units      [][]int
	batchOfOne func(pos int) bool
}

// List hands out units, in their order: each a triple alone or the
// triples of one batch (planned by the caller). A unit of one runs as a
// batch (of one) when batchOfOne says so (a suite's test).
func List(units [][]int, batchOfOne func(pos int) bool) Source {
	return &listSource{units: units, batchOfOne: batchOfOne}
}

func (s *listSource) Next(ctx context.Context) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.units) == 0 || ctx.Err() != nil {
		return nil, nil
	}
	u := s.units[0]
	s.units = s.units[1:]
	t := &Task{Pos: u[0]}
	if len(u) > 1 || s.batchOfOne(t.Pos) {
		t.Batch = append(t.Batch, u...)
	}
	return t, nil
}

// Run runs the triples src hands out on workers workers, and tells p of
// each one labelled. Workers only run attempts; one finisher goroutine
// writes the records, so the disk syncs of one triple overlap the
// attempts of the next. A worker hands the finisher a whole batch at
// once (one send, not one per member), so it starts the next batch while
// the records of the last one are written, and the finisher writes the
// records of a batch a few at a time (finishBatch).
func Run(ctx context.Context, workers int, src Source, wk Worker, p Progress) error {
	finished := make(chan []pending, workers)
	errs := make(chan error, workers+1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pl := &pool{wk: wk, p: p, src: src, cancel: cancel, finished: finished}
	for w := range workers {
		go func(w int) { errs <- pl.work(ctx, w) }(w)
	}
	finisherDone := make(chan error, 1)
	go func() { finisherDone <- pl.finish(ctx) }()
	var first error
	for range workers {
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
	return first
}

// pool is one Run: its workers and its finisher.
type pool struct {
	wk       Worker
	p        Progress
	src      Source
	cancel   context.CancelCauseFunc
	finished chan []pending
}

// finish is the finisher of Run: it writes the records of the units the
// workers finished, hands each result to its sink and to p, and returns
// the first error, having cancelled the workers with it.
func (pl *pool) finish(ctx context.Context) error {
	var first error
	for unit := range pl.finished {
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
				pl.cancel(err)
				continue
			}
			if keep {
				pl.p.Labelled(p.t.Pos, r, p.batch != nil)
				if p.batch != nil && p.batch.done(p.t.Pos) {
					pl.p.BatchLabelled(p.batch.pos)
				}
			}
		}
	}
	return first
}

// work is worker w of Run: it runs the triples and batches the source
// gives until there are none, and hands each finished one to the
// finisher. It returns the first error, having cancelled the others with
// it.
func (pl *pool) work(ctx context.Context, w int) error {
	var first error
	for ctx.Err() == nil {
		t, err := pl.src.Next(ctx)
		if err != nil {
			first = err
			pl.cancel(err)
			break
		}
		if t == nil {
			break
		}
		if t.Batch != nil {
			if err := pl.runBatchTask(ctx, w, t); err != nil {
				first = err
				pl.cancel(err)
				break
			}
			continue
		}
		tctx := ctx
		if t.ctx != nil {
			tctx = t.ctx
		}
		finish, err := pl.wk.Triple(tctx, w, t.Pos, t.giveUp)
		if err != nil && tctx.Err() != nil && ctx.Err() == nil {
			// The lease was lost under the attempts: the triple is
			// another runner's now.
			t.done()
			pl.p.Note(fmt.Sprintf("%s: lease lost; another runner has the triple", t.what))
			continue
		}
		if err != nil {
			t.done()
			first = err
			pl.cancel(err)
			break
		}
		pl.finished <- []pending{{t, finish, nil}}
	}
	return first
}

// pending is a triple whose attempts are done, for the finisher.
type pending struct {
	t      *Task
	finish func() (Outcome, error)
	batch  *tally
}

// tally counts the labelled members of one batch, for BatchLabelled. The
// finisher alone uses it.
type tally struct {
	pos  []int
	seen map[int]bool
}

func newTally(pos []int) *tally { return &tally{pos: pos, seen: map[int]bool{}} }

// done counts pos and reports whether it was the batch's last.
func (b *tally) done(pos int) bool {
	b.seen[pos] = true
	return len(b.seen) == len(b.pos)
}

// runBatchTask runs the triples of batch task t on worker w and hands
// each one to the finisher. In a joined check (t.members set) every
// member keeps its own lease: a member given up on is settled alone, the
// others run as one batch, which stops only when the lease of every one
// of them is lost (then none is labelled: the triples are other
// runners' now). A member whose lease alone is lost runs on with the
// batch, but its sink refuses its label, as for a triple alone.
func (pl *pool) runBatchTask(ctx context.Context, w int, t *Task) error {
	if t.members == nil {
		done, err := pl.wk.Batch(ctx, w, t.Batch)
		if err != nil {
			return err
		}
		b := newTally(t.Batch)
		unit := make([]pending, len(done))
		for i, f := range done {
			unit[i] = pending{&Task{Pos: f.Pos}, f.Finish, b}
		}
		pl.finished <- unit
		return nil
	}
	byPos := map[int]*Task{}
	var live []*Task
	var pos []int
	for _, m := range t.members {
		if m.giveUp == "" {
			byPos[m.Pos] = m
			live = append(live, m)
			pos = append(pos, m.Pos)
			continue
		}
		finish, err := pl.wk.Triple(m.ctx, w, m.Pos, m.giveUp)
		if err != nil {
			m.done()
			if m.ctx.Err() != nil && ctx.Err() == nil {
				pl.p.Note(fmt.Sprintf("%s: lease lost; another runner has the triple", m.what))
				continue
			}
			for _, o := range live {
				o.done()
			}
			return err
		}
		pl.finished <- []pending{{m, finish, nil}}
	}
	if len(live) == 0 {
		return nil
	}
	bctx, stop := whileAnyLease(ctx, live)
	done, err := pl.wk.Batch(bctx, w, pos)
	stop()
	if bctx.Err() != nil && ctx.Err() == nil {
		for _, m := range live {
			m.done()
		}
		pl.p.Note(fmt.Sprintf("batch of %d (%s ...): every lease lost; other runners have the triples", len(live), live[0].what))
		return nil
	}
	if err != nil {
		for _, m := range live {
			m.done()
		}
		return err
	}
	b := newTally(pos)
	unit := make([]pending, len(done))
	for i, f := range done {
		unit[i] = pending{byPos[f.Pos], f.Finish, b}
	}
	pl.finished <- unit
	return nil
}

// whileAnyLease returns a context of ctx that ends when the contexts of
// all members have ended (every lease lost), until stop is called;
// after stop it ends only with ctx.
func whileAnyLease(ctx context.Context, members []*Task) (context.Context, func()) {
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
func finishBatch(unit []pending) ([]Outcome, []error) {
	rs := make([]Outcome, len(unit))
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
