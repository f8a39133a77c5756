package check

import (
	"context"
	"path/filepath"
	"strings"

	sitepkg "github.com/flakegate/flakegate/site"
)

// treeRoot chooses where the worktrees of a check with workers workers
// live (sitepkg.ChooseTreeRoot). Probe first: it needs the sandbox's
// level.
func (c *site) treeRoot(ctx context.Context, workers int) (sitepkg.TreeRoot, error) {
	return sitepkg.ChooseTreeRoot(ctx, c.git, c.common, c.baseSHA, c.iso, workers)
}

// resetClean resets and cleans a worktree of this check after an
// attempt (sitepkg.ResetClean).
func (c *site) resetClean(ctx context.Context, t *sitepkg.Tree) error {
	return sitepkg.ResetClean(ctx, c.git, t)
}

// chooseTrees picks how attempts get a pristine tree (overlay or reset
// mode, see worktrees) before the trees are opened: overlay mode when the
// attempts are sandboxed and the sandbox probe (probeSandbox) ran an
// attempt on an overlay of a folder in root, the worktree folder.
func (c *checker) chooseTrees(ctx context.Context, root string) (overlay bool, why string, err error) {
	if c.iso.Mode != sitepkg.IsolationBwrap {
		return false, "the attempts are not sandboxed", nil
	}
	return c.probeSandbox(ctx, root)
}

// sayTrees writes the attempt trees' mode, and in overlay mode how the
// first worker's trees were opened, to the check's progress (stderr).
func (c *checker) sayTrees(why string, root sitepkg.TreeRoot) {
	if root.Why != "" {
		c.say("worktrees: " + c.redact(root.Why))
	}
	if !c.trees.Overlay {
		c.say("attempt trees: reset and cleaned after each attempt (" + c.redact(why) + ")")
		return
	}
	var hows []string
	wt := c.trees.Workers[0]
	for _, t := range append([]*sitepkg.Tree{wt.Base}, wt.Cand...) {
		if t.How != 0 {
			hows = append(hows, filepath.Base(t.Dir)+" "+t.How.String())
		}
	}
	lv := c.iso.Sandbox.Level
	where := ""
	if !lv.Root {
		where = " in the helper's user namespace (flakegate is not root)"
	}
	if !c.iso.Sandbox.Overlay {
		c.say("attempt trees: a fresh copy per attempt" + where + ", removed after it (" + c.redact(why) + "; the worktrees are never written; " + strings.Join(hows, ", ") + ")")
		return
	}
	c.say("attempt trees: a throwaway overlay per attempt" + where + " (the worktrees are never written; " + strings.Join(hows, ", ") + ")")
}

// say writes one line to the check's progress, as a note.
func (c *site) say(line string) { c.progress.Note(NoteTopic, line) }
