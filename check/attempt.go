// One attempt of a triple: a tree acquired clean, the check made before
// it, the command run in its sandbox, and the outcome written to the
// transcript.

package check

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/evidence"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/transcript"
)

// attempt makes one attempt of the triple on side in at, and returns its
// result. precheck, when set, runs first on the acquired tree: a reason
// it gives makes the attempt an error without running it. An error is
// flakegate's own failure (a tree it cannot reset or prove clean): it
// ends the check, exit 3, and is never recorded as the attempt's result.
func (r *tripleRun) attempt(ctx context.Context, side string, index int, at *sitepkg.Tree, precheck func() (string, error)) (string, error) {
	c, ps := r.c, r.j.ps
	defer c.timeProcess(ps.prop, side, time.Now()) // timings.go
	defer at.Release(c.resetClean)
	if err := at.Acquire(); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: at.Dir,
			Message: "cannot reset the worktree for the " + side + " attempt", Err: err,
			Hint: "a git process may have died there (look for index.lock under the repository's .git/worktrees); remove what it left and run the check again"}
	}
	var why string
	if precheck != nil {
		var err error
		if why, err = precheck(); err != nil {
			return "", err
		}
	}
	r.write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index})
	var out attempt.Outcome
	if why != "" {
		out = attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: time.Now(), Reason: why}
	} else {
		cmd := attempt.Command{Argv: r.argv, Dir: at.Dir, Env: c.iso.Env, WallBudget: ps.prop.WallBudget, Sandbox: c.attemptSandbox(at, ps),
			KeepCacheOnPass: side == transcript.SideCandidate, NoTestMarkers: evidence.NoTestMarkers}
		ev := evidence.New(ps.framework, ps.prop.Name, ps.prop.PassMarker, ps.prop.FailMarker)
		if ev != nil {
			cmd.Output = ev
		}
		out = attempt.Run(ctx, cmd)
		ev.Judge(&out)
	}
	if ctx.Err() != nil {
		r.t.Complete = false // cancelled: the attempt did not finish
	}
	r.note(side, index, &out, nil)
	return out.Result, nil
}

// note keeps the outcome of an attempt: in the attempts of the record, in
// the transcript, and, for an error or a missed budget, the first reason.
// A batched attempt (batch set) also names its batch and the test's own
// output in the attempt_end event.
func (r *tripleRun) note(side string, index int, out *attempt.Outcome, batch *transcript.Batch) {
	t := &r.t
	out.Tail, out.Reason = r.c.redact(out.Tail), r.c.redact(out.Reason)
	a := flakegate.Attempt{Side: side, Index: index, Result: out.Result, ExitCode: out.ExitCode, Signal: out.Signal,
		StartedAt: out.Started.UTC(), WallSeconds: attempt.Seconds(out.Wall), OutputTail: out.Tail}
	t.attempts = append(t.attempts, a)
	ev := transcript.Event{Type: transcript.EventAttemptEnd, Side: side, Index: index, Result: out.Result,
		ExitCode: out.ExitCode, Signal: out.Signal, WallSeconds: a.WallSeconds, Reason: out.Reason}
	if batch != nil {
		ev.Batch, ev.Output = batch, out.Tail
	}
	r.write(ev)
	if out.Result == attempt.Errored && t.reason == "" {
		t.reason = side + " attempt " + strconv.Itoa(index) + ": " + out.Reason
	}
	if out.Result == attempt.Timeout && side == transcript.SideCandidate && t.budgetWhy == "" {
		t.budgetWhy = fmt.Sprintf("wall budget %s exceeded at %.1fs (candidate attempt %d)", r.j.ps.prop.WallBudget, out.Wall.Seconds(), index)
		if out.Limit != "" {
			t.budgetWhy = fmt.Sprintf("sandbox %s reached at %.1fs (candidate attempt %d)", out.Limit, out.Wall.Seconds(), index)
		}
	}
}
