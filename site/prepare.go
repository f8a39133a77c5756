// A prepare's layer of one tree: built in the attempt's sandbox with
// the tree writable (sandbox.Persist), kept under
// <git common dir>/flakegate/prepared by its key (LayerKey) with its
// meta.json, and found there again by later checks and by a replay.

package site

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/diskfull"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/transcript"
)

// Prepared is one side's prepared layer of a tree for one prepare.
type Prepared struct {
	Side    string
	SHA256  string // prepare_sha256: its command and environment
	Dir     string // the layer (tree/, gocache/), when OK
	OK      bool
	Reason  string // why it failed: "prepare failed: exit 1: <tail>"
	Seconds float64
	Cached  bool
	Exit    int
	Lock    *os.File // a shared lock on Dir while a check uses it
}

// PrepareTree returns the prepared layer of tree t for p (sha: its
// PrepareSHA256) under root (PreparedRoot): cached, or built now in t,
// which trees proves first when it is the base's. A prepare that fails is not an error of the check: the
// layer says why, and every triple of that tree is INCOMPLETE. Nothing of
// a failed prepare is kept. A full disk is (exit 3, "no space left on").
func (iso *Isolation) PrepareTree(ctx context.Context, trees *Worktrees, root string, p *config.Prepare, sha string, t *Tree) (*Prepared, error) {
	side := t.Side
	pt := &Prepared{Side: side, SHA256: sha, Exit: -1}
	if iso.Mode != IsolationBwrap || !iso.Sandbox.Overlay || !iso.Sandbox.Level.Root {
		pt.Reason = "prepare failed: a prepare needs attempts on overlays (flakegate as root, with overlayfs), so that its layer can lie under them"
		return pt, nil
	}
	sb := iso.SandboxFor(t.Dir)
	key := LayerKey(t.SHA, sha, iso.Label(), sb.GoCache, sb.Level.UID, p.Budget)
	final := filepath.Join(root, key)
	if err := os.MkdirAll(root, 0o700); err != nil { // root only: no attempt walks into it
		return nil, diskfull.Error(err, root, "cannot create the prepared layers' folder")
	}
	if lock, err := flock.Share(ctx, final); err == nil {
		if m, ok := ReadLayerMeta(final); ok {
			pt.Dir, pt.OK, pt.Cached, pt.Seconds, pt.Exit, pt.Lock = final, true, true, m.Seconds, m.ExitCode, lock
			TouchLayer(final)
			return pt, nil
		}
		lock.Close()
	} else if ctx.Err() != nil {
		return nil, flakegate.Interrupted(ctx)
	}
	if err := t.Acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot prepare the worktree", Err: err}
	}
	if side == transcript.SideBase {
		if err := trees.Prove(ctx, t); err != nil {
			return nil, err
		}
	}
	// The layer is built in place: the worktree lock keeps other checks of
	// this repository out, and a layer without meta.json (a check killed
	// while preparing, or a failed prepare) is never used and is removed.
	if err := os.RemoveAll(final); err != nil {
		return nil, diskfull.Error(err, final, "cannot remove an unfinished prepared layer")
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(final)
			if pt.Lock != nil {
				pt.Lock.Close()
				pt.Lock = nil
			}
		}
	}()
	if err := os.Mkdir(final, 0o755); err != nil {
		return nil, diskfull.Error(err, final, "cannot create a prepared layer")
	}
	lock, err := flock.Share(ctx, final)
	if err != nil {
		if ctx.Err() != nil {
			return nil, flakegate.Interrupted(ctx)
		}
		return nil, diskfull.Error(err, final, "cannot lock a prepared layer")
	}
	pt.Lock = lock
	for _, d := range []string{"tree", "gocache"} {
		if err := os.Mkdir(filepath.Join(final, d), 0o755); err != nil {
			return nil, diskfull.Error(err, final, "cannot create a prepared layer")
		}
	}
	sb.Persist, sb.Network = final, false // never the host's network, whatever sandbox.network says
	if p.Network {
		sb.Outbound = &sandbox.Outbound{Allow: p.Allow}
	}
	if p.Disk > 0 {
		sb.Limits.Disk = p.Disk
	}
	out := attempt.Run(ctx, attempt.Command{Argv: p.Run, Dir: t.Dir, Env: iso.Env, WallBudget: p.Budget, Sandbox: sb, NoTestMarkers: []string{}})
	if ctx.Err() != nil {
		return nil, flakegate.Interrupted(ctx)
	}
	pt.Seconds, pt.Exit = attempt.Seconds(out.Wall), out.ExitCode
	tail := iso.Redact(out.Tail)
	if pt.Reason = iso.PrepareFailed(out, p, tail); pt.Reason != "" {
		return pt, nil
	}
	if out.KeepErr != nil {
		return nil, diskfull.Error(out.KeepErr, root, "cannot keep the prepared layer")
	}
	m := LayerMeta{Command: p.Run, Seconds: pt.Seconds, ExitCode: out.ExitCode, At: time.Now().UTC(), Tail: tail, Side: side, Tree: t.SHA}
	b, _ := json.Marshal(m)
	if err := atomicfile.WriteFile(filepath.Join(final, "meta.json"), b, 0o644); err != nil {
		return nil, diskfull.Error(err, final, "cannot keep the prepared layer")
	}
	keep = true
	pt.Dir, pt.OK = final, true
	return pt, nil
}

// PrepareFailed says why a prepare that ended as out failed ("" for
// none), with the end of its output, tail (redacted).
func (iso *Isolation) PrepareFailed(out attempt.Outcome, p *config.Prepare, tail string) string {
	if out.Limit != "" {
		return fmt.Sprintf("prepare failed: sandbox %s reached: %s", out.Limit, attempt.ShortTail(tail))
	}
	switch out.Result {
	case attempt.Pass:
		return ""
	case attempt.Timeout:
		return fmt.Sprintf("prepare failed: ran past its budget %s: %s", p.Budget, attempt.ShortTail(tail))
	default:
		why := fmt.Sprintf("exit %d", out.ExitCode)
		if out.ExitCode < 0 {
			why = iso.Redact(out.Reason)
		}
		return "prepare failed: " + why + ": " + attempt.ShortTail(tail)
	}
}
