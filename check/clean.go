package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// resetClean resets a worktree of this check to sha and removes every
// untracked and ignored file (`git reset --hard`, `git clean -ffdx`). It
// is git.Client.CleanWorktree without the checks that client makes on
// every call (resolving sha, proving dir is a linked worktree of this
// repository): openWorktrees made them when it prepared dir, and the
// worktree lock keeps any other check out until this one ends. Two git
// processes per attempt instead of five keep the overhead of a check
// small next to the test commands it runs.
func (c *checker) resetClean(ctx context.Context, dir, sha string) error {
	for _, args := range [][]string{{"reset", "--hard", "--quiet", sha}, {"clean", "-ffdxq"}} {
		if err := c.gitIn(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// gitIn runs one git command in dir with the git client's safety settings:
// no hook and no fsmonitor command runs, no variable points git at another
// repository, and git never prompts.
func (c *checker) gitIn(ctx context.Context, dir string, args ...string) error {
	name := c.opts.Git
	if name == "" {
		name = "git"
	}
	argv := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// gitEnv is flakegate's environment without the variables that would point
// git at another repository or make it prompt.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
			"GIT_TERMINAL_PROMPT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}
