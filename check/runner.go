// The runners of the Driver's attempts (batch/drive.go): a triple alone
// (aloneRunner), a batch's members (batchRunner, over batch.go's
// processes), and the replay cache as the Driver uses it (replayCache).

package check

import (
	"context"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/transcript"
)

// driver is the Driver of the members of runs (each member's triple run)
// with runner making their attempts.
func (c *checker) driver(runner batch.Runner, runs map[*batch.Member]*tripleRun) *batch.Driver {
	d := &batch.Driver{RetryCap: c.cfg.RetryCap, Runner: runner, Keep: c.iso.Mode == sitepkg.IsolationBwrap,
		History: func(ctx context.Context, m *batch.Member) (batch.History, error) {
			return c.baseHistory(ctx, runs[m].j)
		},
		// CONTAMINATED: the base passes, and the patch edited what grades
		// the test (grade/gradertests.go): a retry would not change the label.
		NoRetry: func(m *batch.Member) bool { return len(runs[m].graderEdits()) > 0 },
	}
	if !c.opts.NoReplayCache {
		d.Cache = replayCache{c: c, runs: runs}
	}
	return d
}

// member is the triple as a member of the Driver's batch: its tally is
// the run's. batch names the batch form of its base result ("" alone;
// replayKey).
func (r *tripleRun) member(batchName string) *batch.Member {
	return &batch.Member{Key: r.replayKey(batchName), ProbeRuns: r.j.ps.prop.FlakeProbeRuns, Tally: &r.t.Tally}
}

// aloneRunner makes the attempts of a triple run alone: the candidate's
// in the worker's next candidate tree, the base's and the probes' in its
// base tree, proved first (checkBaseTree).
type aloneRunner struct{ r *tripleRun }

func (a aloneRunner) Attempt(ctx context.Context, at batch.Attempt) (batch.Results, error) {
	r := a.r
	tree, precheck := r.trees.Base, r.c.checkBaseTree(ctx, r.j.ps, r.trees.Base)
	if at.Side == transcript.SideCandidate {
		tree, precheck = r.trees.NextCandidate(), nil
	}
	res, err := r.attempt(ctx, at.Side, at.Index, tree, precheck)
	if err != nil {
		return batch.Results{}, err
	}
	return batch.Results{Of: map[*batch.Member]batch.Outcome{at.Members[0]: {Result: res}}}, nil
}

func (a aloneRunner) Note(_ *batch.Member, side string, index int, result, why string) {
	a.r.noteRan(side, index, result, why)
}

func (a aloneRunner) BaseKnown(m *batch.Member) { a.r.baseKnown() }

// noteRan writes an attempt of the triple that ran in no process: its
// result and why.
func (r *tripleRun) noteRan(side string, index int, result, why string) {
	out := attempt.Outcome{Result: result, ExitCode: -1, Started: time.Now(), Reason: why}
	r.write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index, At: out.Started})
	r.note(side, index, &out, nil)
}

// baseKnown writes the triple's base seed result to its transcript.
func (r *tripleRun) baseKnown() {
	r.write(transcript.Event{Type: transcript.EventBaseReplay, Result: r.t.Base, FromCache: r.t.FromCache})
}

// replayCache is the replay cache of the store as the Driver uses it:
// runs gives each member's triple run.
type replayCache struct {
	c    *checker
	runs map[*batch.Member]*tripleRun
}

// Lock takes the member's replay lock (lockReplay).
func (rc replayCache) Lock(ctx context.Context, m *batch.Member) (func(), error) {
	return rc.c.lockReplay(ctx, rc.runs[m].j, m.Key)
}

func (rc replayCache) Get(ctx context.Context, m *batch.Member) (string, bool, error) {
	got, ok, err := rc.c.store.GetReplay(ctx, m.Key)
	if err != nil {
		return "", false, flakegate.StoreError("read the replay cache", err)
	}
	return got.Result, ok, nil
}

// Put stores the member's base result with the wall time of its last
// attempt and its run id.
func (rc replayCache) Put(ctx context.Context, m *batch.Member, result string, at time.Time) (string, error) {
	t := &rc.runs[m].t
	wall := 0.0
	if n := len(t.attempts); n > 0 {
		wall = t.attempts[n-1].WallSeconds
	}
	stored, err := rc.c.store.PutReplay(ctx, m.Key, flakegate.BaseReplay{Result: result, WallSeconds: wall, RunID: t.runID, At: at.UTC()})
	if err != nil {
		return "", flakegate.StoreError("write the replay cache", err)
	}
	return stored.Result, nil
}

// drive runs the batch's attempts through the Driver: each member's
// base result is kept apart from the one its test gives alone (the
// replay key names the batch form).
func (b *batchRun) drive(ctx context.Context) error {
	runs := map[*batch.Member]*tripleRun{}
	br := batchRunner{b: b, of: map[*batch.Member]*batchMember{}}
	members := make([]*batch.Member, len(b.members))
	for i, bm := range b.members {
		bm.m = bm.r.member(b.shape.Framework + " batch")
		runs[bm.m], br.of[bm.m], members[i] = bm.r, bm, bm.m
	}
	return b.c.driver(br, runs).Drive(ctx, members)
}

// batchRunner makes the Driver's attempts of a batch: one process of
// the members asked for, in their order (batchRun.attempt), on the
// worker's next candidate tree or its base tree.
type batchRunner struct {
	b  *batchRun
	of map[*batch.Member]*batchMember
}

func (br batchRunner) Attempt(ctx context.Context, a batch.Attempt) (batch.Results, error) {
	members := make([]*batchMember, len(a.Members))
	for i, m := range a.Members {
		members[i] = br.of[m]
	}
	at := br.b.trees.Base
	if a.Side == transcript.SideCandidate {
		at = br.b.trees.NextCandidate()
	}
	results := map[*batchMember]batch.Outcome{}
	keep := func(bm *batchMember) bool { return a.Takes(bm.m) }
	unstarted, err := br.b.attempt(ctx, a.Side, members, keep, func(*batchMember) int { return a.Index }, at, results)
	if err != nil {
		return batch.Results{}, err
	}
	res := batch.Results{Of: map[*batch.Member]batch.Outcome{}}
	for bm, o := range results {
		res.Of[bm.m] = o
	}
	for _, bm := range unstarted {
		res.Unstarted = append(res.Unstarted, bm.m)
	}
	return res, nil
}

func (br batchRunner) Note(m *batch.Member, side string, index int, result, why string) {
	br.of[m].r.noteRan(side, index, result, why)
}

func (br batchRunner) BaseKnown(m *batch.Member) { br.of[m].r.baseKnown() }
