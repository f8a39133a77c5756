package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// memQueue is a CheckQueue (and GroupQueue, when group is set) in
// memory, for one runner: what a claim takes, what a label writes.
type memQueue struct {
	mu       sync.Mutex
	qc       flakegate.QueuedCheck
	triples  []flakegate.QueuedTriple
	state    []string
	expiries map[int]int  // the lease expiries a claim of the position reports
	conflict map[int]bool // positions another runner labelled first
	results  map[int]flakegate.Result
}

func (q *memQueue) Enqueue(_ context.Context, c flakegate.QueuedCheck, ts []flakegate.QueuedTriple) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.qc, q.triples, q.state = c, ts, make([]string, len(ts))
	for i := range q.state {
		q.state[i] = flakegate.TripleQueued
	}
	q.results = map[int]flakegate.Result{}
	return true, nil
}

func (q *memQueue) lease(pos int) flakegate.TripleLease {
	q.state[pos] = flakegate.TripleClaimed
	l := flakegate.TripleLease{TripleID: q.triples[pos].ID, Position: pos, Token: "t", Expiries: q.expiries[pos]}
	if l.Expiries > 0 {
		l.Runners = []string{"gone"}
	}
	return l
}

func (q *memQueue) Claim(_ context.Context, _ string, _ flakegate.Runner, _ time.Duration) (flakegate.TripleLease, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pos := slices.Index(q.state, flakegate.TripleQueued)
	if pos < 0 {
		return flakegate.TripleLease{}, false, nil
	}
	return q.lease(pos), true, nil
}

func (q *memQueue) Renew(context.Context, string, flakegate.TripleLease, time.Duration) error {
	return nil
}

func (q *memQueue) Complete(_ context.Context, _ string, l flakegate.TripleLease, res flakegate.Result, _ []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.state[l.Position] = flakegate.TripleDone
	if q.conflict[l.Position] {
		return &flakegate.Error{Code: flakegate.ECONFLICT, Message: "another runner labelled it"}
	}
	q.results[l.Position] = res
	return nil
}

func (q *memQueue) CheckState(context.Context, string) (flakegate.QueuedCheck, []flakegate.QueuedTripleState, error) {
	return q.qc, nil, nil
}

func (q *memQueue) Progress(context.Context, string) ([]flakegate.CheckProgress, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := flakegate.CheckProgress{Check: q.qc, Total: len(q.state)}
	for _, s := range q.state {
		switch s {
		case flakegate.TripleDone:
			p.Done++
		case flakegate.TripleClaimed:
			p.Claimed++
		default:
			p.Queued++
		}
	}
	return []flakegate.CheckProgress{p}, nil
}

// groupQueue claims a position with the queued positions of its batch.
type groupQueue struct{ *memQueue }

func (q groupQueue) ClaimGroup(_ context.Context, _ string, _ flakegate.Runner, _ time.Duration, group func(int) []int) ([]flakegate.TripleLease, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pos := slices.Index(q.state, flakegate.TripleQueued)
	if pos < 0 {
		return nil, nil
	}
	var ls []flakegate.TripleLease
	for _, p := range group(pos) {
		if q.state[p] == flakegate.TripleQueued {
			ls = append(ls, q.lease(p))
		}
	}
	return ls, nil
}

// queueWorker runs no process: it keeps what it was asked to run.
type queueWorker struct {
	mu      sync.Mutex
	giveUp  map[int]string
	batches [][]int
}

func (w *queueWorker) Triple(_ context.Context, _, pos int, giveUp string) (func() (Outcome, error), error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.giveUp[pos] = giveUp
	return func() (Outcome, error) { return Outcome{Result: flakegate.Result{PropertyPath: fmt.Sprint(pos)}}, nil }, nil
}

func (w *queueWorker) Batch(_ context.Context, _ int, pos []int) ([]Finished, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches = append(w.batches, slices.Clone(pos))
	var out []Finished
	for _, p := range pos {
		out = append(out, Finished{p, func() (Outcome, error) { return Outcome{Result: flakegate.Result{PropertyPath: fmt.Sprint(p)}}, nil }})
	}
	return out, nil
}

type queueProgress struct {
	mu       sync.Mutex
	labelled []int
	lines    []string
}

func (p *queueProgress) Labelled(pos int, _ Outcome, _ bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labelled = append(p.labelled, pos)
}
func (p *queueProgress) BatchLabelled([]int) {}
func (p *queueProgress) Note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, msg)
}
func (p *queueProgress) QueueLine(msg string) { p.Note(msg) }

// TestJoin: a joined runner claims every triple (with a group queue,
// the queued members of a batch together), labels each through the
// queue, gives up on a triple whose lease expired more than K times
// instead of running it, and leaves a triple another runner labelled
// first unlabelled here.
func TestJoin(t *testing.T) {
	units := [][]int{{0}, {1, 2}, {3}, {4}}
	triples := make([]flakegate.QueuedTriple, 5)
	for i := range triples {
		triples[i] = flakegate.QueuedTriple{ID: fmt.Sprint("id", i), Position: i, PropertyPath: "p.sh", Seed: flakegate.Seed(fmt.Sprint(i))}
	}
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprintf("grouped %v", grouped), func(t *testing.T) {
			mq := &memQueue{expiries: map[int]int{3: 3}, conflict: map[int]bool{4: true}}
			var q flakegate.CheckQueue = mq
			if grouped {
				q = groupQueue{mq}
			}
			p := &queueProgress{}
			o := JoinOptions{CheckID: "c1", MaxLeaseExpiries: 2, Poll: time.Millisecond}
			src, err := Join(context.Background(), q, o, flakegate.QueuedCheck{BaseSHA: "b"}, triples, units,
				func(int) bool { return false }, flakegate.Runner{ID: "r1", Host: "h"}, p)
			if err != nil {
				t.Fatal(err)
			}
			if mq.qc.ID != "c1" || mq.qc.BaseSHA != "b" || mq.qc.MaxLeaseExpiries != 2 || mq.qc.CreatedBy != "r1" || mq.qc.TriplesSHA256 == "" {
				t.Errorf("enqueued check %+v", mq.qc)
			}
			wk := &queueWorker{giveUp: map[int]string{}}
			if err := Run(context.Background(), 2, src, wk, p); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(p.labelled)); !slices.Equal(got, []int{0, 1, 2, 3}) {
				t.Errorf("labelled %v, want 0 to 3 (4 is another runner's)", got)
			}
			for pos := range 4 {
				if r, ok := mq.results[pos]; !ok || r.PropertyPath != fmt.Sprint(pos) {
					t.Errorf("the queue holds %+v for %d", r, pos)
				}
			}
			if !strings.Contains(wk.giveUp[3], "expired 3 times (more than --max-lease-expiries 2; runners gone)") {
				t.Errorf("triple 3 given up with %q", wk.giveUp[3])
			}
			if wk.giveUp[0] != "" {
				t.Errorf("triple 0 given up with %q", wk.giveUp[0])
			}
			if grouped != (fmt.Sprint(wk.batches) == "[[1 2]]") {
				t.Errorf("batches %v with a group queue %v", wk.batches, grouped)
			}
			all := strings.Join(p.lines, "\n")
			for _, want := range []string{"created check c1 (5 triples) as runner r1 on h",
				"p.sh seed 4: lease lost before the label was written; another runner labels it", "/5 done, "} {
				if !strings.Contains(all, want) {
					t.Errorf("lines %q lack %q", all, want)
				}
			}
		})
	}
}
