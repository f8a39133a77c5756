// The prepared layer of a replay: the check's own, found by the key the
// check gave it, or one built the same way in the replay's sandbox.

package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

// prepare lays the property's prepared layer under sb (nothing without a
// prepare). It uses the check's layer of the same commit, prepare,
// sandbox and Go cache when the repository keeps it, else runs the
// prepare once in sb with the tree writable into a layer of its own,
// removed by done. why says why the command cannot run: the prepare
// failed, or there is no overlay to lay a layer under (as in a check,
// whose triples are then INCOMPLETE).
func (r *Replay) prepare(ctx context.Context, sb *sandbox.Sandbox) (done func(), why string) {
	return r.prepareIn(ctx, sb, r.opts.Dir, r.opts.PrepareTree)
}

// prepareIn is prepare for the checkout dir of commit tree (a suite's
// base, for its listing, as well as the replay's own checkout).
func (r *Replay) prepareIn(ctx context.Context, sb *sandbox.Sandbox, dir, tree string) (done func(), why string) {
	done = func() {}
	p := r.opts.Prepare
	if p == nil {
		return done, ""
	}
	if !sb.Overlay {
		return done, "prepare failed: a prepare needs attempts on overlays (flakegate as root, with overlayfs), so that its layer can lie under them"
	}
	sha := site.PrepareSHA256(p, r.iso.Env)
	if r.common != "" && tree != "" {
		key := site.LayerKey(tree, sha, r.iso.Label(), sb.GoCache, sb.Level.UID, p.Budget)
		layer := filepath.Join(site.PreparedRoot(r.common), key)
		if m, ok := site.ReadLayerMeta(layer); ok {
			sb.Prepared = layer
			r.notes = append(r.notes, fmt.Sprintf("prepare: the check's prepared layer of %s (%.1f s when it ran)", flakegate.ShortSHA(tree), m.Seconds))
			return done, ""
		}
	}
	layer, err := os.MkdirTemp("", "flakegate-replay-layer-")
	if err != nil {
		return done, "prepare failed: cannot create a layer folder: " + err.Error()
	}
	done = func() { os.RemoveAll(layer) }
	for _, d := range []string{"tree", "tree.work", "gocache", "gocache.work"} {
		if err := os.Mkdir(filepath.Join(layer, d), 0o755); err != nil {
			return done, "prepare failed: cannot create a layer folder: " + err.Error()
		}
	}
	psb := *sb
	// As a check's prepare: never the host's network; with network: true,
	// outbound through flakegate's proxy, to what allow lists.
	psb.Persist, psb.Network = layer, false
	if p.Network {
		psb.Outbound = &sandbox.Outbound{Allow: p.Allow}
	}
	out := attempt.Run(ctx, attempt.Command{Argv: p.Run, Dir: dir, Env: r.iso.Env, WallBudget: p.Budget, Sandbox: &psb, NoTestMarkers: []string{}})
	if why := r.iso.PrepareFailed(out, p, r.iso.Redact(out.Tail)); why != "" {
		return done, why
	}
	for _, d := range []string{"tree.work", "gocache.work"} {
		os.RemoveAll(filepath.Join(layer, d))
	}
	sb.Prepared = layer
	r.notes = append(r.notes, fmt.Sprintf("prepare: ran in %.1f s (no prepared layer of the check's was kept for %s)", out.Wall.Seconds(), flakegate.ShortSHA(tree)))
	return done, ""
}
