package check

import "context"

// resetClean resets a worktree of this check to sha and removes every
// untracked and ignored file (`git reset --hard`, `git clean -ffdx`),
// without the checks git.Client.CleanWorktree makes on every call:
// openWorktrees made them when it prepared dir, and the worktree lock keeps
// any other check out until this one ends. Two git processes per attempt
// instead of five keep the overhead of a check small next to the test
// commands it runs.
func (c *checker) resetClean(ctx context.Context, dir, sha string) error {
	return c.git.ResetClean(ctx, dir, sha)
}
