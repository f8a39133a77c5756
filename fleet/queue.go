package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
)

// JoinOptions are check --join's: the check runs through a queue in the
// store (PostgreSQL) that any number of runners work on at once.
type JoinOptions struct {
	// CheckID names the check; every runner of one check passes the same.
	CheckID string
	// Lease is how long a claimed triple stays this runner's without a
	// renewal; it is renewed every Lease/3 while the attempts run. 0 is
	// DefaultLease.
	Lease time.Duration
	// MaxLeaseExpiries is K: a triple whose lease expired more than K
	// times is labelled INCOMPLETE instead of being run again.
	MaxLeaseExpiries int
	// Poll is how often a runner with nothing to claim looks again; 0 is
	// DefaultPoll.
	Poll time.Duration
	// ProgressEvery is how often a waiting runner prints the queue's
	// progress; 0 is 10 s.
	ProgressEvery time.Duration
}

// Defaults of JoinOptions.
const (
	DefaultLease            = 30 * time.Second
	DefaultPoll             = 500 * time.Millisecond
	DefaultMaxLeaseExpiries = 2
)

var errLeaseLost = errors.New("the lease of the triple was lost")

// Join enqueues the check's triples in q (or verifies the check another
// runner enqueued: the same qc and triples) and returns the queue as the
// workers' Source. qc names the revisions and the config; Join fills in
// the rest from o, triples and runner. units is the check's batch plan
// (every runner makes the same one, from the same config and seeds), and
// batchOfOne says which triple runs as a batch even alone, as for List.
func Join(ctx context.Context, q flakegate.CheckQueue, o JoinOptions, qc flakegate.QueuedCheck, triples []flakegate.QueuedTriple,
	units [][]int, batchOfOne func(pos int) bool, runner flakegate.Runner, p Progress) (Source, error) {
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10 * time.Second
	}
	qc.ID, qc.TriplesSHA256, qc.MaxLeaseExpiries, qc.CreatedBy = o.CheckID, flakegate.QueuedTriplesSHA256(triples), o.MaxLeaseExpiries, runner.ID
	created, err := q.Enqueue(ctx, qc, triples)
	if err != nil {
		return nil, err
	}
	verb := "joined"
	if created {
		verb = "created"
	}
	p.QueueLine(fmt.Sprintf("%s check %s (%d triples) as runner %s on %s", verb, o.CheckID, len(triples), runner.ID, runner.Host))
	byPos := map[int][]int{}
	for _, u := range units {
		for _, pos := range u {
			byPos[pos] = u
		}
	}
	return &queueSource{q: q, opts: o, runner: runner, p: p, triples: triples, units: byPos, batchOfOne: batchOfOne}, nil
}

// queueSource claims the check's triples one at a time from the queue.
type queueSource struct {
	q       flakegate.CheckQueue
	opts    JoinOptions
	runner  flakegate.Runner
	p       Progress
	triples []flakegate.QueuedTriple
	// units gives each position the positions of its batch (itself
	// alone when it runs alone), from the check's plan.
	units      map[int][]int
	batchOfOne func(pos int) bool

	mu        sync.Mutex
	lastShown time.Time
}

// next claims a triple, and with it the other triples of its batch that
// no other runner holds (a GroupQueue claims them in one transaction).
// With nothing to claim it waits (polling) while other runners hold
// triples, since one of them may die and leave its triple to be taken
// over, and returns nil once every triple is labelled.
func (s *queueSource) Next(ctx context.Context) (*Task, error) {
	id := s.opts.CheckID
	for {
		leases, err := s.claim(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, flakegate.StoreError("claim a triple", err)
		}
		if len(leases) > 0 {
			return s.group(ctx, leases)
		}
		ps, err := s.q.Progress(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, flakegate.StoreError("read the queue", err)
		}
		if len(ps) == 1 && ps[0].Finished() {
			return nil, nil
		}
		if len(ps) == 1 && s.due() {
			s.p.QueueLine(ProgressLine(ps[0]) + "; waiting for other runners")
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(s.opts.Poll):
		}
	}
}

// claim claims the next triple and the claimable triples of its batch;
// none when nothing is claimable now.
func (s *queueSource) claim(ctx context.Context) ([]flakegate.TripleLease, error) {
	if gq, ok := s.q.(flakegate.GroupQueue); ok {
		return gq.ClaimGroup(ctx, s.opts.CheckID, s.runner, s.opts.Lease, func(pos int) []int { return s.units[pos] })
	}
	l, ok, err := s.q.Claim(ctx, s.opts.CheckID, s.runner, s.opts.Lease)
	if err != nil || !ok {
		return nil, err
	}
	return []flakegate.TripleLease{l}, nil
}

// group makes the task of the claimed triples: one triple alone, or a
// batch whose members each keep their own lease (renewed, labelled and,
// when lost, left to another runner one by one, as a triple alone).
func (s *queueSource) group(ctx context.Context, leases []flakegate.TripleLease) (*Task, error) {
	var members []*Task
	for _, l := range leases {
		t, err := s.task(ctx, l)
		if err != nil {
			for _, m := range members {
				m.done()
			}
			return nil, err
		}
		members = append(members, t)
	}
	if len(members) == 1 && !s.batchOfOne(members[0].Pos) {
		return members[0], nil
	}
	// The batch's order is the plan's: config order.
	sort.SliceStable(members, func(i, k int) bool { return members[i].Pos < members[k].Pos })
	t := &Task{Pos: members[0].Pos, members: members}
	for _, m := range members {
		t.Batch = append(t.Batch, m.Pos)
	}
	return t, nil
}

// due reports whether a waiting runner should print progress again.
func (s *queueSource) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.lastShown) < s.opts.ProgressEvery {
		return false
	}
	s.lastShown = time.Now()
	return true
}

// task wraps a claimed triple: its attempts run under a context that ends
// when the lease cannot be renewed, and its result is labelled through
// the queue, only if the lease is still this runner's.
func (s *queueSource) task(ctx context.Context, l flakegate.TripleLease) (*Task, error) {
	if l.Position < 0 || l.Position >= len(s.triples) || s.triples[l.Position].ID != l.TripleID {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check --join", Path: s.opts.CheckID,
			Message: fmt.Sprintf("the queue's triple %d is %s, not this runner's %d", l.Position, l.TripleID, len(s.triples))}
	}
	qt := &s.triples[l.Position]
	tctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.keepLease(tctx, l, stop, cancel)
	}()
	t := &Task{Pos: l.Position, ctx: tctx, what: fmt.Sprintf("%s seed %s", qt.PropertyPath, qt.Seed)}
	t.release = sync.OnceFunc(func() {
		close(stop)
		<-renewed
		cancel(nil)
	})
	if l.Expiries > s.opts.MaxLeaseExpiries {
		reason := fmt.Sprintf("the lease of this triple expired %d times (more than --max-lease-expiries %d; runners %s): given up",
			l.Expiries, s.opts.MaxLeaseExpiries, strings.Join(l.Runners, ", "))
		t.giveUp = reason
	}
	t.sink = func(ctx context.Context, o *Outcome) (bool, error) {
		if context.Cause(tctx) == errLeaseLost {
			// The attempts were cut short: never label what did not run.
			// The lease expires and another runner runs the triple.
			s.p.Note(t.what + ": the lease could not be renewed; the triple is left to another runner")
			return false, nil
		}
		err := s.q.Complete(ctx, s.opts.CheckID, l, o.Result, o.Raw)
		if flakegate.ErrorCode(err) == flakegate.ECONFLICT {
			s.p.Note(t.what + ": lease lost before the label was written; another runner labels it")
			return false, nil
		}
		if err != nil {
			return false, flakegate.StoreError("label the triple in the queue", err)
		}
		if ps, err := s.q.Progress(ctx, s.opts.CheckID); err == nil && len(ps) == 1 {
			s.p.QueueLine(ProgressLine(ps[0]))
		}
		return true, nil
	}
	return t, nil
}

// keepLease renews l every Lease/3 until stop is closed. When the lease
// is another runner's, or cannot be renewed before it ends, it cancels
// the attempts: their result would not be this runner's to label.
func (s *queueSource) keepLease(ctx context.Context, l flakegate.TripleLease, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	every := s.opts.Lease / 3
	until := time.Now().Add(s.opts.Lease)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := s.q.Renew(ctx, s.opts.CheckID, l, s.opts.Lease)
		switch {
		case err == nil:
			until = time.Now().Add(s.opts.Lease)
		case flakegate.ErrorCode(err) == flakegate.ECONFLICT || time.Now().Add(every).After(until):
			cancel(errLeaseLost)
			return
		}
	}
}

// QueuedSummary reads a queued check: its summary (nil until every triple
// is labelled) and its progress. An unknown check id is EINVALID.
func QueuedSummary(ctx context.Context, q flakegate.CheckQueue, checkID string) (*flakegate.Summary, flakegate.CheckProgress, error) {
	qc, ts, err := q.CheckState(ctx, checkID)
	if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
		return nil, flakegate.CheckProgress{}, &flakegate.Error{Code: flakegate.EINVALID, Op: "verdict", Path: checkID,
			Message: "no check with this id in the ledger", Hint: "pass the --check-id the runners were started with (and the same --ledger)"}
	}
	if err != nil {
		return nil, flakegate.CheckProgress{}, err
	}
	p := flakegate.CheckProgress{Check: qc, Total: len(ts)}
	runners := map[string]*flakegate.RunnerProgress{}
	var order []string
	sum := &flakegate.Summary{Base: qc.BaseSHA, Candidate: qc.CandidateSHA, ConfigSHA256: qc.ConfigSHA256, CheckID: qc.ID,
		Results: make([]flakegate.Result, 0, len(ts))}
	for _, t := range ts {
		switch t.State {
		case flakegate.TripleQueued:
			p.Queued++
			continue
		case flakegate.TripleClaimed:
			p.Claimed++
		case flakegate.TripleDone:
			p.Done++
			var r flakegate.Result
			if err := json.Unmarshal(t.Result, &r); err != nil {
				return nil, p, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "verdict", Path: checkID,
					Message: "the stored result of " + t.ID + " does not decode", Err: err}
			}
			sum.Results = append(sum.Results, r)
		}
		rp, ok := runners[t.Runner.ID]
		if !ok {
			rp = &flakegate.RunnerProgress{Runner: t.Runner}
			runners[t.Runner.ID] = rp
			order = append(order, t.Runner.ID)
		}
		if t.State == flakegate.TripleDone {
			rp.Done++
		} else {
			rp.Claimed++
		}
	}
	for _, id := range order {
		p.Runners = append(p.Runners, *runners[id])
	}
	if !p.Finished() {
		return nil, p, nil
	}
	sum.Verdict = flakegate.VerdictOf(sum.Results)
	return sum, p, nil
}

// ProgressLine says how far a queued check is, per runner.
func ProgressLine(p flakegate.CheckProgress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "check %s: %d/%d done, %d claimed, %d queued", p.Check.ID, p.Done, p.Total, p.Claimed, p.Queued)
	for _, r := range p.Runners {
		fmt.Fprintf(&b, "; %s %d done", r.ID, r.Done)
		if r.Claimed > 0 {
			fmt.Fprintf(&b, " %d claimed", r.Claimed)
		}
	}
	return b.String()
}
