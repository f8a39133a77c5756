package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
)

// addMu serializes `git worktree add`: git reads every registered
// worktree's admin folder while adding one, and fails ("failed to read
// .git/worktrees/X/commondir") when it meets one that a concurrent add
// has created but not yet filled in.
var addMu sync.Mutex

// PrepareWorktree makes dir a clean, detached checkout of rev (resolved in
// c.Dir). A missing or empty dir is created with `git worktree add
// --detach`, replacing a registration left behind by a deleted folder; an
// existing linked worktree of this repository is force-checked-out at rev
// (`checkout --detach --force`). Either
// way it ends with `reset --hard` and `clean -ffdx`, so nothing of an
// earlier run (untracked or ignored files included) survives.
//
// An existing dir that is not a linked worktree of this repository, or is
// its main work tree, is refused (EINVALID): flakegate never resets or
// cleans a checkout it did not create.
func (c *Client) PrepareWorktree(ctx context.Context, dir, rev string) error {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	empty, err := isMissingOrEmpty(abs)
	if err != nil {
		return err
	}
	if empty {
		// --force replaces a registration whose folder was deleted (and
		// nothing else, since the checkout is detached). `worktree prune`
		// would do it too, but it removes .git/worktrees when it looks
		// empty and so breaks a concurrent add of another worktree.
		addMu.Lock()
		_, err := c.run(ctx, "", "worktree", "add", "--detach", "--force", "--quiet", abs, sha)
		addMu.Unlock()
		if err != nil {
			return err
		}
	} else {
		if err := c.checkWorktree(ctx, abs); err != nil {
			return err
		}
		if _, err := c.run(ctx, abs, "checkout", "--detach", "--force", "--quiet", sha); err != nil {
			return err
		}
	}
	return c.clean(ctx, abs, sha)
}

// CleanWorktree resets the worktree dir to rev (resolved in c.Dir) and
// removes every untracked and ignored file: `reset --hard` then
// `clean -ffdx`. It runs before every attempt. Like PrepareWorktree it
// refuses a dir that is not a linked worktree of this repository.
func (c *Client) CleanWorktree(ctx context.Context, dir, rev string) error {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := c.checkWorktree(ctx, abs); err != nil {
		return err
	}
	return c.clean(ctx, abs, sha)
}

// ResetClean is CleanWorktree without its checks: dir must be a worktree
// that PrepareWorktree made and that the caller still holds, and sha a full
// commit hash it resolved. Two git processes instead of five, for callers
// that reset a worktree before every attempt.
func (c *Client) ResetClean(ctx context.Context, dir, sha string) error {
	return c.clean(ctx, dir, sha)
}

func (c *Client) clean(ctx context.Context, abs, sha string) error {
	if _, err := c.run(ctx, abs, "reset", "--hard", "--quiet", sha); err != nil {
		return err
	}
	_, err := c.run(ctx, abs, "clean", "-ffdxq")
	return err
}

// checkWorktree returns nil if abs is the top of a linked worktree whose
// common git directory is this repository's.
func (c *Client) checkWorktree(ctx context.Context, abs string) error {
	refuse := func(why string, err error) error {
		return &flakegate.Error{
			Code:    flakegate.EINVALID,
			Op:      "git worktree",
			Path:    abs,
			Message: why,
			Hint:    "remove the folder or choose another one; flakegate creates its worktrees itself",
			Err:     err,
		}
	}
	out, err := c.run(ctx, abs, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		return refuse("exists and is not a worktree of this repository", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return fmt.Errorf("git rev-parse in %s: unexpected output %q", abs, out)
	}
	top, gitDir, common := lines[0], lines[1], lines[2]
	ours, err := c.CommonDir(ctx)
	if err != nil {
		return err
	}
	switch {
	case !samePath(top, abs):
		return refuse(fmt.Sprintf("is inside the work tree %s, not the top of a worktree", top), nil)
	case !samePath(common, ours):
		return refuse("is a worktree of another repository ("+common+")", nil)
	case samePath(gitDir, common):
		return refuse("is the repository's main work tree", nil)
	}
	return nil
}

// isMissingOrEmpty reports whether dir does not exist or is an empty
// folder, the two cases `git worktree add` accepts.
func isMissingOrEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, &flakegate.Error{Code: flakegate.EINVALID, Op: "git worktree", Path: dir, Message: "exists and is not a folder"}
	}
	names, err := f.Readdirnames(1)
	if len(names) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return true, nil
	}
	return false, nil
}

// samePath compares two absolute paths after resolving symlinks.
func samePath(a, b string) bool {
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// RemoveWorktree unregisters and deletes the linked worktree dir (`git
// worktree remove --force`), which must be a linked worktree of this
// repository (never its main work tree).
func (c *Client) RemoveWorktree(ctx context.Context, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := c.checkWorktree(ctx, abs); err != nil {
		return err
	}
	addMu.Lock()
	defer addMu.Unlock()
	_, err = c.run(ctx, "", "worktree", "remove", "--force", abs)
	return err
}
