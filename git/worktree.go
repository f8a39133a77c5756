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
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// addMu serializes `git worktree add`: git reads every registered
// worktree's admin folder while adding one, and fails ("failed to read
// .git/worktrees/X/commondir") when it meets one that a concurrent add
// has created but not yet filled in.
var addMu sync.Mutex

// PrepareWorktree makes dir a clean, detached checkout of rev (resolved in
// c.Dir). A missing or empty dir is created with `git worktree add
// --detach`, replacing a registration left behind by a deleted folder; an
// existing linked worktree of this repository has its .git file rewritten
// and is force-checked-out at rev (`checkout --detach --force`) and then
// reset and cleaned (`reset --hard`, `clean -ffdx`), through its
// registered git folder, so nothing of an earlier run (untracked or
// ignored files included) survives.
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
	}
	gitDir, err := c.WorktreeGitDir(ctx, abs)
	if err != nil {
		return err
	}
	if empty {
		return nil // a fresh checkout: nothing to reset or clean
	}
	return c.checkoutClean(ctx, gitDir, abs, sha)
}

// checkoutClean moves an existing worktree to sha, rewriting its .git
// file first: the code that ran in the tree may have pointed it at a git
// folder of its own, with hooks, filters or another index, or made it a
// symlink (a rename replaces the link; a write would follow it).
func (c *Client) checkoutClean(ctx context.Context, gitDir, abs, sha string) error {
	if err := atomicfile.WriteFile(filepath.Join(abs, ".git"), []byte("gitdir: "+gitDir+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := c.run(ctx, abs, "--git-dir="+gitDir, "--work-tree="+abs, "checkout", "--detach", "--force", "--quiet", sha); err != nil {
		return err
	}
	return c.ResetClean(ctx, gitDir, abs, sha)
}

// WorktreeGitDir returns the administrative folder (.git/worktrees/NAME)
// of the linked worktree abs, found from the repository's side: the one
// whose gitdir file names abs/.git. The tree's own .git file is never
// trusted. A folder that no registration names is refused (EINVALID):
// flakegate never resets or cleans a checkout it did not create.
func (c *Client) WorktreeGitDir(ctx context.Context, abs string) (string, error) {
	common, err := c.CommonDir(ctx)
	if err != nil {
		return "", err
	}
	root := filepath.Join(common, "worktrees")
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	want := filepath.Join(abs, ".git")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if samePath(strings.TrimSpace(string(b)), want) {
			return filepath.Join(root, e.Name()), nil
		}
	}
	if err := c.checkWorktree(ctx, abs); err != nil {
		return "", err
	}
	return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "git worktree", Path: abs,
		Message: "is not registered as a worktree of this repository",
		Hint:    "remove the folder and run 'git worktree prune'; flakegate recreates it"}
}

// CleanWorktree resets the worktree dir to rev (resolved in c.Dir) and
// removes every untracked and ignored file: `reset --hard` then
// `clean -ffdx`. Like PrepareWorktree it refuses a dir that is not a
// linked worktree of this repository.
func (c *Client) CleanWorktree(ctx context.Context, dir, rev string) error {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	gitDir, err := c.WorktreeGitDir(ctx, abs)
	if err != nil {
		return err
	}
	return c.ResetClean(ctx, gitDir, abs, sha)
}

// ResetClean resets the worktree abs, whose administrative folder is
// gitDir (WorktreeGitDir), to the full commit hash sha and removes every
// untracked and ignored file: `reset --hard`, then `clean -ffdx`. Both run
// with the git folder and work tree named explicitly, so nothing the tree
// holds (its .git file included) chooses what git reads. Two git processes,
// for callers that reset a worktree before every attempt.
func (c *Client) ResetClean(ctx context.Context, gitDir, abs, sha string) error {
	tree := []string{"--git-dir=" + gitDir, "--work-tree=" + abs}
	if _, err := c.run(ctx, abs, append(tree, "reset", "--hard", "--quiet", sha)...); err != nil {
		return err
	}
	_, err := c.run(ctx, abs, append(tree, "clean", "-ffdxq")...)
	return err
}

// Pristine proves that the worktree abs (administrative folder gitDir) is
// exactly the commit sha: HEAD is sha, no tracked file differs from it and
// no untracked or ignored file exists. An error says what differs.
func (c *Client) Pristine(ctx context.Context, gitDir, abs, sha string) error {
	tree := []string{"--git-dir=" + gitDir, "--work-tree=" + abs}
	head, err := c.run(ctx, abs, append(tree, "rev-parse", "--verify", "HEAD")...)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(head)); got != sha {
		return fmt.Errorf("the worktree %s is at %s, not %s", abs, flakegate.ShortSHA(got), flakegate.ShortSHA(sha))
	}
	out, err := c.run(ctx, abs, append(tree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=traditional", "--no-renames", "--ignore-submodules=none")...)
	if err != nil {
		return err
	}
	if len(out) > 0 {
		entries := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
		if len(entries) > 5 {
			entries = append(entries[:5], fmt.Sprintf("and %d more", len(entries)-5))
		}
		return fmt.Errorf("the worktree %s differs from %s: %s", abs, flakegate.ShortSHA(sha), strings.Join(entries, ", "))
	}
	return nil
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

// Worktrees lists the absolute paths of every work tree of the repository
// (`git worktree list --porcelain`): the main one and the linked ones.
func (c *Client) Worktrees(ctx context.Context) ([]string, error) {
	out, err := c.run(ctx, "", "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, line := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && filepath.IsAbs(p) {
			paths = append(paths, filepath.Clean(p))
		}
	}
	return paths, nil
}
