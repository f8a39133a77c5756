// The base seed of a triple: its replay on the base tree, the replay
// cache, and the replay lock that makes checks of one base replay a seed
// once.

package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/evidence"
	sitepkg "github.com/flakegate/flakegate/site"
)

// replayKey is the replay cache key of the triple's base seed. batch
// names the batch form its base result comes from ("" alone): a result
// a batch gave is kept apart from one the test gave alone, since the
// tests that ran before it may be what made it pass or fail.
func (r *tripleRun) replayKey(batch string) string {
	ps := r.j.ps
	marker := ""
	if ps.prop.PassMarker != nil {
		marker = ps.prop.PassMarker.String()
	}
	failMarker := ""
	if ps.prop.FailMarker != nil {
		failMarker = ps.prop.FailMarker.String()
	}
	return flakegate.ReplayKey{
		BaseSHA:        r.c.baseSHA,
		Name:           ps.prop.Name,
		PassMarker:     marker,
		FailMarker:     failMarker,
		FailEvidence:   ps.framework != evidence.FrameworkNone || failMarker != "",
		PropertySHA256: ps.basePropertySHA256,
		FixtureSHA256:  ps.baseFixtureSHA256,
		Seed:           r.j.seed,
		Command:        r.argv,
		Env:            ps.baseEnv,
		Prepare:        ps.prepareSHA256,
		Batch:          batch,
	}.String()
}

// checkBaseTree returns the check made before each attempt on the base
// tree: the tree must be exactly the base commit (a failure to prove it is
// flakegate's, exit 3), and its fixture the bytes digested at the start
// (else the attempt is an error: INCOMPLETE).
func (c *checker) checkBaseTree(ctx context.Context, ps *propState, base *sitepkg.Tree) func() (string, error) {
	return func() (string, error) {
		if err := c.trees.Prove(ctx, base); err != nil {
			return "", err
		}
		if ps.prop.Fixture == "" {
			return "", nil
		}
		sum, err := digest.Path(ctx, filepath.Join(base.Dir, filepath.FromSlash(ps.prop.Fixture)))
		if err != nil {
			return "cannot digest the base fixture: " + err.Error(), nil
		}
		if sum != ps.baseFixtureSHA256 {
			return fmt.Sprintf("the base fixture digest is %s, expected %s", flakegate.ShortSHA(sum), flakegate.ShortSHA(ps.baseFixtureSHA256)), nil
		}
		return "", nil
	}
}

// errReplayLockDeadline ends a wait for another check's base replay.
var errReplayLockDeadline = errors.New("replay lock deadline")

// lockReplay takes the replay lock of key, waiting at most the lock
// timeout plus the wall budget of the base attempt its holder runs, and
// saying so when the wait lasts.
func (c *checker) lockReplay(ctx context.Context, j *job, key string) (func(), error) {
	lctx := ctx
	var limit time.Duration
	if c.opts.LockTimeout > 0 {
		limit = c.opts.LockTimeout + j.ps.prop.WallBudget
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeoutCause(ctx, limit, errReplayLockDeadline)
		defer cancel()
	}
	since := time.Now()
	note := time.AfterFunc(time.Second, func() {
		c.progress.Note(NoteTopic, fmt.Sprintf("waiting for another check replaying %s seed %s on the base (the replay lock), since %s",
			j.ps.prop.Path, j.seed, since.Format("15:04:05")))
	})
	release, err := c.store.LockReplay(lctx, key)
	note.Stop()
	if err == nil {
		return release, nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(lctx), errReplayLockDeadline) {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check",
			Message: fmt.Sprintf("gave up after %s waiting for another check's base replay of %s seed %s (the replay lock)", limit, j.ps.prop.Path, j.seed),
			Hint:    "let that check finish, or end it if it is stuck; --lock-timeout sets how long to wait"}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, flakegate.StoreError("lock the replay cache", err)
}
