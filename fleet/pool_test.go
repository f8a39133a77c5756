package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
)

// fakeWorker runs no process: each triple's outcome names its position,
// and fail, when set, is the error of the triple (or the batch holding
// it) at that position.
type fakeWorker struct {
	mu      sync.Mutex
	triples []int   // positions run alone
	batches [][]int // positions run as one batch
	fail    map[int]error
}

func outcome(pos int) fleet.Outcome {
	return fleet.Outcome{Result: flakegate.Result{PropertyPath: fmt.Sprintf("t%d", pos), Label: flakegate.Pass}}
}

func (w *fakeWorker) Triple(ctx context.Context, _, pos int, giveUp string) (func() (fleet.Outcome, error), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.triples = append(w.triples, pos)
	if err := w.fail[pos]; err != nil {
		return nil, err
	}
	return func() (fleet.Outcome, error) { return outcome(pos), nil }, nil
}

func (w *fakeWorker) Batch(ctx context.Context, _ int, pos []int) ([]fleet.Finished, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches = append(w.batches, slices.Clone(pos))
	var out []fleet.Finished
	for _, p := range pos {
		if err := w.fail[p]; err != nil {
			return nil, err
		}
		out = append(out, fleet.Finished{Pos: p, Finish: func() (fleet.Outcome, error) { return outcome(p), nil }})
	}
	return out, nil
}

// fakeProgress keeps what Run tells (Labelled and BatchLabelled come from
// the finisher alone; the lock is for the race detector's sake of the
// test's own reads).
type fakeProgress struct {
	mu       sync.Mutex
	labelled map[int]int  // position -> times
	batched  map[int]bool // position -> labelled as a batch's member
	batches  [][]int
	notes    []string
}

func newFakeProgress() *fakeProgress {
	return &fakeProgress{labelled: map[int]int{}, batched: map[int]bool{}}
}

func (p *fakeProgress) Labelled(pos int, o fleet.Outcome, batched bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.Result.PropertyPath != fmt.Sprintf("t%d", pos) {
		panic(fmt.Sprintf("position %d labelled with the outcome of %s", pos, o.Result.PropertyPath))
	}
	p.labelled[pos]++
	p.batched[pos] = batched
}

func (p *fakeProgress) BatchLabelled(pos []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches = append(p.batches, slices.Clone(pos))
}

func (p *fakeProgress) Note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, msg)
}

func (p *fakeProgress) QueueLine(msg string) { p.Note(msg) }

// TestRunLabelsEveryTripleOnce: every unit of the list runs once, on
// any of the workers; a triple alone is labelled alone, the members of
// a batch (and a batch of one, when batchOfOne says so) as members, and
// each batch is reported once, in its own order, after its members.
func TestRunLabelsEveryTripleOnce(t *testing.T) {
	units := [][]int{{0}, {1, 4, 5}, {2}, {3}, {6, 7}, {8}}
	batchOfOne := func(pos int) bool { return pos == 8 }
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			wk := &fakeWorker{}
			p := newFakeProgress()
			if err := fleet.Run(context.Background(), workers, fleet.List(units, batchOfOne), wk, p); err != nil {
				t.Fatal(err)
			}
			alone := slices.Sorted(slices.Values(wk.triples))
			if !slices.Equal(alone, []int{0, 2, 3}) {
				t.Errorf("triples run alone %v, want [0 2 3]", alone)
			}
			slices.SortFunc(wk.batches, slices.Compare)
			if fmt.Sprint(wk.batches) != "[[1 4 5] [6 7] [8]]" {
				t.Errorf("batches run %v, want [[1 4 5] [6 7] [8]]", wk.batches)
			}
			for pos := range 9 {
				if p.labelled[pos] != 1 {
					t.Errorf("triple %d labelled %d times, want once", pos, p.labelled[pos])
				}
				if want := !slices.Contains([]int{0, 2, 3}, pos); p.batched[pos] != want {
					t.Errorf("triple %d labelled batched=%v, want %v", pos, p.batched[pos], want)
				}
			}
			slices.SortFunc(p.batches, slices.Compare)
			if fmt.Sprint(p.batches) != "[[1 4 5] [6 7] [8]]" {
				t.Errorf("batches labelled %v, want [[1 4 5] [6 7] [8]]", p.batches)
			}
		})
	}
}

// TestRunStopsAtAWorkerError: the first error of a worker (a triple
// alone or a batch) is Run's, and the workers take no unit after it.
func TestRunStopsAtAWorkerError(t *testing.T) {
	boom := errors.New("boom")
	units := [][]int{{0}, {1}, {2, 3}, {4}, {5}, {6}}
	for _, failAt := range []int{1, 3} {
		t.Run(fmt.Sprintf("at %d", failAt), func(t *testing.T) {
			wk := &fakeWorker{fail: map[int]error{failAt: boom}}
			p := newFakeProgress()
			err := fleet.Run(context.Background(), 1, fleet.List(units, func(int) bool { return false }), wk, p)
			if !errors.Is(err, boom) {
				t.Fatalf("Run = %v, want the worker's error", err)
			}
			for pos := 4; pos <= 6; pos++ {
				if slices.Contains(wk.triples, pos) {
					t.Errorf("triple %d ran after the error (alone: %v)", pos, wk.triples)
				}
			}
			if p.labelled[failAt] != 0 {
				t.Errorf("triple %d failed and was labelled", failAt)
			}
		})
	}
}

// TestRunStopsAtAFinishError: a record that cannot be written fails the
// run, and no later triple is labelled.
func TestRunStopsAtAFinishError(t *testing.T) {
	boom := errors.New("disk")
	wk := &finishFails{fakeWorker: &fakeWorker{}, at: 1, err: boom}
	p := newFakeProgress()
	err := fleet.Run(context.Background(), 1, fleet.List([][]int{{0}, {1}, {2}, {3}}, func(int) bool { return false }), wk, p)
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the finish's error", err)
	}
	if p.labelled[1] != 0 || p.labelled[3] != 0 {
		t.Errorf("labelled %v after the finish of 1 failed", p.labelled)
	}
}

type finishFails struct {
	*fakeWorker
	at  int
	err error
}

func (w *finishFails) Triple(ctx context.Context, wn, pos int, giveUp string) (func() (fleet.Outcome, error), error) {
	f, err := w.fakeWorker.Triple(ctx, wn, pos, giveUp)
	if pos != w.at || err != nil {
		return f, err
	}
	return func() (fleet.Outcome, error) { return fleet.Outcome{}, w.err }, nil
}

// TestRunInterrupted: a run whose context ends labels nothing more and
// says it was interrupted.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wk := &fakeWorker{}
	err := fleet.Run(ctx, 2, fleet.List([][]int{{0}, {1}}, func(int) bool { return false }), wk, newFakeProgress())
	if err == nil || len(wk.triples) != 0 {
		t.Fatalf("Run = %v after the context ended, ran %v", err, wk.triples)
	}
}
