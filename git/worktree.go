package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
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
// ignored files included) survives. A seal (Seal) is removed unread.
//
// An existing dir that is not a linked worktree of this repository, or is
// its main work tree, is refused (EINVALID): flakegate never resets or
// cleans a checkout it did not create.
func (c *Client) PrepareWorktree(ctx context.Context, dir, rev string) error {
	_, err := c.prepare(ctx, dir, rev, false)
	return err
}

// How says how OpenWorktree made a worktree ready.
type How int

const (
	// Added: the folder was missing or empty; `git worktree add` made it.
	Added How = iota + 1
	// Kept: the worktree was sealed at rev; nothing was written.
	Kept
	// Moved: the worktree was sealed at another commit; only the paths
	// that differ between the two were written.
	Moved
	// Reset: checked out, reset and cleaned, as PrepareWorktree does.
	Reset
)

func (h How) String() string {
	switch h {
	case Added:
		return "added"
	case Kept:
		return "kept"
	case Moved:
		return "moved"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("How(%d)", int(h))
}

// OpenWorktree is PrepareWorktree for a worktree that flakegate may have
// sealed (Seal) when it last let it go. A sealed worktree is taken at its
// word: it is kept as it is when it is sealed at rev, and otherwise moved
// to rev by writing only the paths that differ (a few git processes,
// whatever the repository's size); an unsealed one, or one that cannot be
// moved, is reset and cleaned in full. Either way the seal is removed
// first, so a worktree is sealed only between two uses. A seal is
// flakegate's record of its own last use of the tree, kept where no
// attempt can reach, not a proof: a caller that must know the tree is
// pristine proves it (Pristine).
func (c *Client) OpenWorktree(ctx context.Context, dir, rev string) (How, error) {
	return c.prepare(ctx, dir, rev, true)
}

func (c *Client) prepare(ctx context.Context, dir, rev string, trustSeal bool) (How, error) {
	sha, err := c.RevParse(ctx, rev)
	if err != nil {
		return 0, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	empty, err := isMissingOrEmpty(abs)
	if err != nil {
		return 0, err
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
			return 0, err
		}
	}
	gitDir, err := c.WorktreeGitDir(ctx, abs)
	if err != nil {
		return 0, err
	}
	sealed := takeSeal(gitDir)
	if empty {
		return Added, nil // a fresh checkout: nothing to reset or clean
	}
	// The code that ran in the tree may have pointed its .git file at a
	// git folder of its own, with hooks, filters or another index, or made
	// it a symlink (a rename replaces the link; a write would follow it).
	if err := atomicfile.WriteFile(filepath.Join(abs, ".git"), []byte("gitdir: "+gitDir+"\n"), 0o644); err != nil {
		return 0, err
	}
	tree := []string{"--git-dir=" + gitDir, "--work-tree=" + abs}
	out, err := c.run(ctx, abs, "--git-dir="+gitDir, "rev-parse", "--verify", "HEAD")
	head := strings.TrimSpace(string(out))
	if err != nil {
		head = ""
	}
	if trustSeal && sealed != "" && head == sealed {
		if sealed == sha {
			return Kept, nil
		}
		if err := c.moveWorktree(ctx, gitDir, abs, sealed, sha); err == nil {
			return Moved, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
	// A checkout rewrites only the files whose bytes differ in the index,
	// so a file whose .gitattributes changed (line ends, say) would keep
	// the old conversion: then every file is written again, from an empty
	// index.
	if head == "" || c.attributesDiffer(ctx, head, sha) {
		if _, err := c.run(ctx, abs, append(tree, "read-tree", "--empty")...); err != nil {
			return 0, err
		}
	}
	if _, err := c.run(ctx, abs, append(tree, "checkout", "--detach", "--force", "--quiet", sha)...); err != nil {
		return 0, err
	}
	return Reset, c.ResetClean(ctx, gitDir, abs, sha)
}

// attributesDiffer reports whether a .gitattributes file differs between
// the commits from and to (true when that cannot be told).
func (c *Client) attributesDiffer(ctx context.Context, from, to string) bool {
	if from == to {
		return false
	}
	out, err := c.run(ctx, "", "diff-tree", "-r", "-z", "--name-only", from, to, "--", ".gitattributes", ":(glob)**/.gitattributes")
	return err != nil || len(out) > 0
}

// sealName is the seal's file in a worktree's registered git folder.
const sealName = "flakegate-sealed"

// Seal records, in the registered git folder gitDir of a worktree (which
// no attempt can see), that flakegate lets the worktree go as a pristine
// checkout of the full commit hash sha, so that the next OpenWorktree
// need not reset and clean it. Only a caller that knows nothing wrote the
// worktree since it was proven pristine may seal it.
func (c *Client) Seal(gitDir, sha string) error {
	return atomicfile.WriteFile(filepath.Join(gitDir, sealName), []byte(sha+"\n"), 0o644)
}

// takeSeal removes the seal of the worktree whose git folder is gitDir and
// returns the commit it names: "" when there was none, or when it could
// not be removed (a seal that outlived its use must never be trusted).
func takeSeal(gitDir string) string {
	p := filepath.Join(gitDir, sealName)
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	if err := os.Remove(p); err != nil {
		return ""
	}
	sha := strings.TrimSpace(string(b))
	if len(sha) < 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return ""
	}
	return sha
}

// moveWorktree moves the worktree abs (registered git folder gitDir), a
// pristine checkout of the commit from, to the commit to, writing only the
// paths that differ between the two: `git rm` of the paths to does not
// have, `git checkout to` of the others (the index keeps the stat data of
// every untouched file), then HEAD. It refuses (the caller resets in full)
// a difference in a submodule or in a .gitattributes file, whose effect a
// path-by-path checkout would not reproduce.
func (c *Client) moveWorktree(ctx context.Context, gitDir, abs, from, to string) error {
	out, err := c.run(ctx, "", "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return err
	}
	var gone, write bytes.Buffer
	var fields []string
	if len(out) > 0 {
		fields = strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	if len(fields)%2 != 0 {
		return fmt.Errorf("git diff-tree %s %s: unexpected output", from, to)
	}
	for i := 0; i < len(fields); i += 2 {
		meta, p := strings.Fields(strings.TrimPrefix(fields[i], ":")), fields[i+1]
		if len(meta) != 5 {
			return fmt.Errorf("git diff-tree %s %s: unexpected line %q", from, to, fields[i])
		}
		if meta[0] == "160000" || meta[1] == "160000" {
			return fmt.Errorf("%s: a submodule differs", p)
		}
		if path.Base(p) == ".gitattributes" {
			return fmt.Errorf("%s differs", p)
		}
		if meta[4] == "D" {
			gone.WriteString(p + "\x00")
		} else {
			write.WriteString(p + "\x00")
		}
	}
	// A split index writes only the entries that changed, not all of them
	// (the shared part is written again once a fifth has changed; an old
	// shared part is deleted at once).
	tree := []string{"-c", "core.splitIndex=true", "-c", "splitIndex.sharedIndexExpire=now",
		"--literal-pathspecs", "--git-dir=" + gitDir, "--work-tree=" + abs}
	if gone.Len() > 0 {
		if _, err := c.runInput(ctx, abs, gone.Bytes(), append(tree, "rm", "-q", "-f", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
			return err
		}
	}
	if write.Len() > 0 {
		if _, err := c.runInput(ctx, abs, write.Bytes(), append(tree, "checkout", to, "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
			return err
		}
	}
	_, err = c.run(ctx, abs, "--git-dir="+gitDir, "update-ref", "--no-deref", "HEAD", to, from)
	return err
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
