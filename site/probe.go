// The probe of the isolation on this host, before the trees are opened,
// the sandbox of one attempt in a tree, and the Go caches' mirror beside
// trees on a tmpfs.

package site

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/gocache"
)

// SandboxFor is the sandbox of one attempt in tree, nil without bwrap.
func (iso *Isolation) SandboxFor(tree string) *sandbox.Sandbox {
	if iso.Mode != IsolationBwrap {
		return nil
	}
	sb := iso.Sandbox
	sb.Tree = tree
	return &sb
}

// ProbeTrees finds the isolation this host gives the attempts (in trees
// under root), says it ("sandbox: ...", with the Go caches goc gives),
// and refuses a limit the config asks for that the host cannot enforce.
// It reports whether the attempts leave their worktrees unwritten (each
// runs on a throwaway overlay or a fresh copy of its tree), and why not,
// or why a copy.
func (iso *Isolation) ProbeTrees(ctx context.Context, root string, goc *gocache.Caches, say func(string)) (overlay bool, why string, err error) {
	if err := iso.Probe(ctx, root); err != nil {
		return false, "", err
	}
	sb := &iso.Sandbox
	line := sb.Level.Describe(sb.Limits, sb.Overlay)
	if iso.Mode == IsolationBwrap {
		line += goc.Describe(sb.GoCache != "")
	}
	say("sandbox: " + iso.Redact(line))
	if n := sandbox.SweepLayers(); n > 0 {
		say(fmt.Sprintf("removed %d overlay folders that a killed check left in %s", n, os.TempDir()))
	}
	if n := sandbox.SweepCopies(sb.CopyDir); n > 0 {
		say(fmt.Sprintf("removed %d attempt copies that a killed check left in %s", n, sb.CopyDir))
	}
	if sb.Overlay {
		return true, "", nil
	}
	why = "no overlay"
	if iso.NoOverlay {
		why += ": " + sandbox.NoOverlayEnv + "=1"
	}
	for _, m := range sb.Level.Missing {
		if strings.HasPrefix(m, "no overlay") || strings.HasPrefix(m, "no fresh copy") {
			why = m
		}
	}
	return sb.Level.Copy, why, nil
}

// MirrorGoCaches points the sandbox's Go caches goc at mirrors under shm
// (gocache.Mirror) when they fit in a quarter of the tmpfs's free space;
// it returns what it did for the progress, "" when nothing.
func (iso *Isolation) MirrorGoCaches(goc *gocache.Caches, shm string) string {
	sb := &iso.Sandbox
	if shm == "" || goc == nil || sb.GoCache == "" {
		return ""
	}
	tooBig := "the Go caches stay on disk, swept before every attempt: they do not fit in a quarter of " + ShmRoot
	free, err := FreeBytes(shm)
	if err != nil {
		return tooBig
	}
	switch fits, err := gocache.Mirror(sb, shm, free/4); {
	case !fits:
		return tooBig
	case err != nil:
		return "the Go caches stay on disk, swept before every attempt: cannot mirror them: " + err.Error()
	}
	return "the Go caches are mirrored there too, and need no sweep either"
}
