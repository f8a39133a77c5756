package git_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/git"
)

// mustState checks that wt is a clean, detached checkout of rev.
func mustState(t *testing.T, wt, rev string) {
	t.Helper()
	if got := gitT(t, wt, "rev-parse", "HEAD"); got != rev {
		t.Fatalf("worktree HEAD = %s, want %s", got, rev)
	}
	if st := gitT(t, wt, "status", "--porcelain", "--ignored", "--untracked-files=all"); st != "" {
		t.Fatalf("worktree not clean:\n%s", st)
	}
	if sym := gitT(t, wt, "rev-parse", "--symbolic-full-name", "HEAD"); sym != "HEAD" {
		t.Fatalf("worktree is on %s, want a detached HEAD", sym)
	}
}

// dirty leaves every kind of leftover an attempt could leave behind.
func dirty(t *testing.T, wt string) {
	t.Helper()
	writeFile(t, filepath.Join(wt, "a.txt"), "modified by an attempt\n")
	writeFile(t, filepath.Join(wt, "untracked.txt"), "u\n")
	writeFile(t, filepath.Join(wt, "run.log"), "ignored\n")
	writeFile(t, filepath.Join(wt, "cache", "deep", "x.log"), "ignored in an untracked folder\n")
	if err := os.Remove(filepath.Join(wt, "dir", "b.txt")); err != nil {
		t.Fatal(err)
	}
	gitT(t, wt, "add", "untracked.txt") // staged, not committed
}

func TestPrepareWorktree(t *testing.T) {
	type testCase struct {
		name string
		// setup prepares the situation before the call and returns the
		// folder to pass.
		setup func(t *testing.T, r repo, c *git.Client) string
		rev   func(r repo) string
	}
	run := func(t *testing.T, tc testCase) {
		r := newRepo(t)
		c := &git.Client{Dir: r.dir}
		wt := tc.setup(t, r, c)
		rev := tc.rev(r)
		if err := c.PrepareWorktree(context.Background(), wt, rev); err != nil {
			t.Fatal(err)
		}
		mustState(t, wt, rev)
		if got := gitT(t, r.dir, "rev-parse", "HEAD"); got != r.c2 {
			t.Fatalf("main work tree moved to %s", got)
		}
	}
	c1 := func(r repo) string { return r.c1 }
	c2 := func(r repo) string { return r.c2 }
	fresh := func(t *testing.T, r repo, c *git.Client) string {
		return filepath.Join(t.TempDir(), "wt")
	}
	prepared := func(rev func(repo) string) func(*testing.T, repo, *git.Client) string {
		return func(t *testing.T, r repo, c *git.Client) string {
			wt := fresh(t, r, c)
			if err := c.PrepareWorktree(context.Background(), wt, rev(r)); err != nil {
				t.Fatal(err)
			}
			return wt
		}
	}
	for _, tc := range []testCase{
		{name: "new folder", setup: fresh, rev: c1},
		{name: "new nested folder", setup: func(t *testing.T, r repo, c *git.Client) string {
			return filepath.Join(t.TempDir(), "a", "b", "wt")
		}, rev: c1},
		{name: "existing empty folder", setup: func(t *testing.T, r repo, c *git.Client) string {
			return t.TempDir()
		}, rev: c2},
		{name: "same rev again", setup: prepared(c1), rev: c1},
		{name: "switch rev", setup: prepared(c1), rev: c2},
		{name: "dirty worktree is cleaned", setup: func(t *testing.T, r repo, c *git.Client) string {
			wt := prepared(c2)(t, r, c)
			dirty(t, wt)
			return wt
		}, rev: c2},
		{name: "dirty worktree switches rev", setup: func(t *testing.T, r repo, c *git.Client) string {
			wt := prepared(c2)(t, r, c)
			dirty(t, wt)
			return wt
		}, rev: c1},
		{name: "deleted while registered", setup: func(t *testing.T, r repo, c *git.Client) string {
			wt := prepared(c1)(t, r, c)
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
			return wt
		}, rev: c1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

func TestPrepareWorktreeRelativeDir(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	t.Chdir(t.TempDir())
	for _, rev := range []string{r.c1, r.c2} {
		if err := c.PrepareWorktree(context.Background(), "wt", rev); err != nil {
			t.Fatal(err)
		}
		mustState(t, "wt", rev)
	}
}

// TestPrepareWorktreeRefuses checks that a folder flakegate did not create
// is never reset or cleaned.
func TestPrepareWorktreeRefuses(t *testing.T) {
	type testCase struct {
		name    string
		setup   func(t *testing.T, r repo) string
		wantMsg string
	}
	run := func(t *testing.T, tc testCase) {
		r := newRepo(t)
		c := &git.Client{Dir: r.dir}
		dir := tc.setup(t, r)
		keep := filepath.Join(dir, "precious.txt")
		writeFile(t, keep, "do not delete\n")
		for name, call := range map[string]func() error{
			"PrepareWorktree": func() error { return c.PrepareWorktree(context.Background(), dir, r.c1) },
			"CleanWorktree":   func() error { return c.CleanWorktree(context.Background(), dir, r.c1) },
		} {
			err := call()
			if flakegate.ErrorCode(err) != flakegate.EINVALID || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("%s: error %v, want EINVALID containing %q", name, err, tc.wantMsg)
			}
			if _, err := os.Stat(keep); err != nil {
				t.Fatalf("%s removed a file in a folder it does not own: %v", name, err)
			}
		}
		if got := gitT(t, r.dir, "rev-parse", "HEAD"); got != r.c2 {
			t.Fatalf("main work tree moved to %s", got)
		}
	}
	for _, tc := range []testCase{
		{name: "main work tree", setup: func(t *testing.T, r repo) string { return r.dir }, wantMsg: "main work tree"},
		{name: "folder inside the main work tree", setup: func(t *testing.T, r repo) string { return filepath.Join(r.dir, "dir") }, wantMsg: "not the top of a worktree"},
		{name: "unrelated folder", setup: func(t *testing.T, r repo) string { return t.TempDir() }, wantMsg: "not a worktree of this repository"},
		{name: "worktree of another repository", setup: func(t *testing.T, r repo) string {
			other := newRepo(t)
			wt := filepath.Join(t.TempDir(), "wt")
			gitT(t, other.dir, "worktree", "add", "-q", "--detach", wt, other.c1)
			return wt
		}, wantMsg: "worktree of another repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

func TestCleanWorktree(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(context.Background(), wt, r.c2); err != nil {
		t.Fatal(err)
	}
	dirty(t, wt)
	if err := c.CleanWorktree(context.Background(), wt, r.c2); err != nil {
		t.Fatal(err)
	}
	mustState(t, wt, r.c2)
	for _, name := range []string{"untracked.txt", "run.log", "cache"} {
		if _, err := os.Lstat(filepath.Join(wt, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived CleanWorktree (%v)", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(wt, "a.txt")); err != nil || string(b) != "a2\n" {
		t.Errorf("a.txt = %q, %v; want the committed bytes", b, err)
	}
	if err := c.CleanWorktree(context.Background(), wt, "nope"); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Errorf("CleanWorktree with a bad rev: %v, want EINVALID", err)
	}
}

// TestRepositoryHooksNeverRun installs hooks that would leave a marker and
// checks that neither creating nor re-using a worktree runs them.
func TestRepositoryHooksNeverRun(t *testing.T) {
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\necho ran >> '" + marker + "'\n"
	for _, name := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		p := filepath.Join(r.dir, ".git", "hooks", name)
		if err := os.WriteFile(p, []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The hook works when git is run plainly, so the test can fail.
	gitT(t, r.dir, "checkout", "-q", r.c1)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the hook did not run under plain git: %v", err)
	}
	gitT(t, r.dir, "checkout", "-q", "main")
	os.Remove(marker)

	c := &git.Client{Dir: r.dir}
	wt := filepath.Join(t.TempDir(), "wt")
	for _, rev := range []string{r.c1, r.c2} {
		if err := c.PrepareWorktree(context.Background(), wt, rev); err != nil {
			t.Fatal(err)
		}
		if err := c.CleanWorktree(context.Background(), wt, rev); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a repository hook ran under flakegate: %q", b)
	}
}

// TestPrepareWorktreeConcurrent prepares several worktrees of one
// repository at once, as a check with workers > 1 does.
func TestPrepareWorktreeConcurrent(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	base := t.TempDir()
	revs := []string{r.c1, r.c2, r.c1, r.c2, r.c1, r.c2, r.c1, r.c2}
	errs := make(chan error, len(revs))
	for i, rev := range revs {
		go func() {
			errs <- c.PrepareWorktree(context.Background(), filepath.Join(base, fmt.Sprint("wt", i)), rev)
		}()
	}
	for range revs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, rev := range revs {
		mustState(t, filepath.Join(base, fmt.Sprint("wt", i)), rev)
	}
}

// TestWorktreeIgnoresUserLineEnds checks that a user's core.autocrlf
// does not change the bytes of a checkout (and so a fixture digest).
func TestWorktreeIgnoresUserLineEnds(t *testing.T) {
	r := newRepo(t)
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, cfg, "[core]\n\tautocrlf = true\n\teol = crlf\n")
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	// The setting converts under plain git, so the test can fail.
	plain := filepath.Join(t.TempDir(), "plain")
	gitT(t, r.dir, "-c", "include.path="+cfg, "worktree", "add", "-q", "--detach", plain, r.c2)
	if b, _ := os.ReadFile(filepath.Join(plain, "a.txt")); string(b) != "a2\r\n" {
		t.Fatalf("control: plain git wrote %q, want CRLF", b)
	}

	c := &git.Client{Dir: r.dir}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(context.Background(), wt, r.c2); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "a.txt")); err != nil || string(b) != "a2\n" {
		t.Fatalf("a.txt = %q, %v; want the committed bytes", b, err)
	}
}

func TestResetClean(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(ctx, wt, r.c1); err != nil {
		t.Fatal(err)
	}
	gitDir, err := c.WorktreeGitDir(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pristine(ctx, gitDir, wt, r.c1); err != nil {
		t.Fatalf("a fresh worktree is not pristine: %v", err)
	}
	dirty(t, wt)
	if err := c.Pristine(ctx, gitDir, wt, r.c1); err == nil || !strings.Contains(err.Error(), "untracked.txt") {
		t.Fatalf("Pristine of a dirty tree = %v, want it to name untracked.txt", err)
	}
	if err := c.ResetClean(ctx, gitDir, wt, r.c2); err != nil {
		t.Fatal(err)
	}
	mustState(t, wt, r.c2)
	if err := c.Pristine(ctx, gitDir, wt, r.c1); err == nil {
		t.Fatal("Pristine accepted a tree at another commit")
	}
	if err := c.Pristine(ctx, gitDir, wt, r.c2); err != nil {
		t.Fatal(err)
	}
}

// TestGitHijack plants what attack 7 plants: a filter driver in the
// repository's config, attributes that use it in info/attributes and in
// the tree, and a .git file in the tree that points at a git folder of
// the attacker's. flakegate's own reset and checkout run none of it and
// write the committed bytes.
func TestGitHijack(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(ctx, wt, r.c1); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(t.TempDir(), "pwned")
	evil := "sh -c 'echo ran >> " + pwned + "; echo attacker bytes'"
	gitT(t, r.dir, "config", "filter.evil.smudge", evil)
	gitT(t, r.dir, "config", "filter.evil.process", evil)
	gitT(t, r.dir, "config", "filter.evil.required", "true")
	writeFile(t, filepath.Join(r.dir, ".git", "info", "attributes"), "* filter=evil\n")
	writeFile(t, filepath.Join(wt, ".gitattributes"), "* filter=evil\n")
	// A git folder of the attacker's, inside the tree, named by its .git file.
	fake := filepath.Join(wt, "fakegit")
	gitT(t, wt, "init", "-q", "--bare", fake)
	gitT(t, fake, "config", "core.worktree", r.dir)
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+fake+"\n")
	writeFile(t, filepath.Join(wt, "a.txt"), "changed\n")

	c = &git.Client{Dir: r.dir} // reads the repository's filters afresh
	if err := c.PrepareWorktree(ctx, wt, r.c2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("flakegate's git ran the planted filter")
	}
	if b, err := os.ReadFile(filepath.Join(wt, "a.txt")); err != nil || string(b) != "a2\n" {
		t.Fatalf("a.txt = %q, %v; want the committed bytes", b, err)
	}
	if _, err := os.Stat(fake); err == nil {
		t.Error("the planted git folder survived the clean")
	}
	gitDir, err := c.WorktreeGitDir(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pristine(ctx, gitDir, wt, r.c2); err != nil {
		t.Fatal(err)
	}
}

// TestPrepareWorktreeDotGitSymlink: code that ran in a worktree replaced
// its .git file by a symlink to a file of the host. Preparing the tree
// again must replace the link, never write through it.
func TestPrepareWorktreeDotGitSymlink(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(ctx, wt, r.c1); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the host's own file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dotGit := filepath.Join(wt, ".git")
	if err := os.Remove(dotGit); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, dotGit); err != nil {
		t.Fatal(err)
	}
	if err := c.PrepareWorktree(ctx, wt, r.c2); err != nil {
		t.Fatal(err)
	}
	mustState(t, wt, r.c2)
	if b, err := os.ReadFile(victim); err != nil || string(b) != "the host's own file\n" {
		t.Fatalf("the file behind the symlink was written: %q, %v", b, err)
	}
	if fi, err := os.Lstat(dotGit); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf(".git is still a symlink (%v)", err)
	}
}
