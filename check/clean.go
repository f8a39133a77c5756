package check

import "context"

// resetClean resets a worktree of this check to its revision and removes
// every untracked and ignored file (`git reset --hard`, `git clean -ffdx`)
// through its registered git folder, without the checks
// git.Client.CleanWorktree makes on every call: openWorktrees made them
// when it prepared the tree, and the worktree lock keeps any other check
// out until this one ends. Two git processes per attempt instead of five
// keep the overhead of a check small next to the test commands it runs.
func (c *checker) resetClean(ctx context.Context, t *tree) error {
	return c.git.ResetClean(ctx, t.gitDir, t.dir, t.sha)
}
