package site

import (
	"context"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/git"
)

// ResetClean resets a worktree of this check to its revision and removes
// every untracked and ignored file (`git reset --hard`, `git clean -ffdx`)
// through its registered git folder, without the checks
// git.Client.CleanWorktree makes on every call: OpenWorktrees made them
// when it prepared the tree, and the worktree lock keeps any other check
// out until this one ends. Two git processes per attempt instead of five
// keep the overhead of a check small next to the test commands it runs.
//
// An attempt that left a folder it may not read (mode 000: only sandbox
// mode none writes the worktree itself now) would stop git, and with it
// every later check: the folders are unlocked (sandbox.Unlock) and the
// reset tried once more.
func ResetClean(ctx context.Context, g *git.Client, t *Tree) error {
	err := g.ResetClean(ctx, t.GitDir, t.Dir, t.SHA)
	if err != nil && ctx.Err() == nil && sandbox.Unlock(t.Dir) == nil {
		err = g.ResetClean(ctx, t.GitDir, t.Dir, t.SHA)
	}
	return err
}
