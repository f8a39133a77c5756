package git_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/git"
)

// TestRepositoryConfigRunsNothing: every setting of a repository's own
// .git/config that names a program git may start (the fsmonitor, a hooks
// folder of the checkout, a filter driver on every path, an external
// diff and a textconv, signing, the pager, the editor, a credential
// helper, ssh) points at a script of the work tree that leaves a
// marker. A control shows plain git starting it; flakegate's client,
// through everything a check, doctor and init ask of git (revisions,
// files, the diff, worktrees made, moved, reset, proven and removed,
// init's trial commit of the work tree), starts none of them.
func TestRepositoryConfigRunsNothing(t *testing.T) {
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := filepath.Join(r.dir, "evil.sh")
	writeFile(t, evil, "#!/bin/sh\necho \"$0 $*\" >> '"+marker+"'\ncat\n")
	if err := os.Chmod(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(r.dir, "hooks")
	for _, h := range []string{"post-checkout", "pre-commit", "post-index-change", "reference-transaction", "pre-auto-gc"} {
		writeFile(t, filepath.Join(hooks, h), "#!/bin/sh\necho hook "+h+" >> '"+marker+"'\n")
		if err := os.Chmod(filepath.Join(hooks, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(r.dir, ".git", "info", "attributes"), "* filter=evil diff=evil\n")
	for _, kv := range [][2]string{
		{"core.fsmonitor", evil}, {"core.hooksPath", hooks},
		{"filter.evil.clean", evil}, {"filter.evil.smudge", evil}, {"filter.evil.process", evil}, {"filter.evil.required", "true"},
		{"diff.external", evil}, {"diff.evil.textconv", evil}, {"diff.evil.command", evil},
		{"commit.gpgSign", "true"}, {"gpg.program", evil}, {"core.pager", evil}, {"core.editor", evil},
		{"sequence.editor", evil}, {"credential.helper", "!" + evil}, {"core.sshCommand", evil}, {"core.askPass", evil},
	} {
		gitT(t, r.dir, "config", kv[0], kv[1])
	}
	// The control: plain git starts the repository's programs.
	gitT(t, r.dir, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "status")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: plain git started nothing: %v", err)
	}
	os.Remove(marker)

	ctx := context.Background()
	c := &git.Client{Dir: r.dir}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := c.RevParse(ctx, "HEAD")
	must("RevParse", err)
	_, err = c.Show(ctx, r.c2, "a.txt")
	must("Show", err)
	_, err = c.ListFiles(ctx, r.c2)
	must("ListFiles", err)
	_, err = c.DiffNames(ctx, r.c1, r.c2)
	must("DiffNames", err)
	wt := filepath.Join(t.TempDir(), "wt")
	must("PrepareWorktree", c.PrepareWorktree(ctx, wt, r.c1))
	_, err = c.OpenWorktree(ctx, wt, r.c2)
	must("OpenWorktree", err)
	writeFile(t, filepath.Join(wt, "a.txt"), "changed by an attempt\n")
	writeFile(t, filepath.Join(wt, "untracked.txt"), "u\n")
	must("CleanWorktree", c.CleanWorktree(ctx, wt, r.c2))
	gitDir, err := c.WorktreeGitDir(ctx, wt)
	must("WorktreeGitDir", err)
	must("Pristine", c.Pristine(ctx, gitDir, wt, r.c2))
	_, err = c.CommitWorkTree(ctx, "flakegate.yaml", []byte("version: 1\n"), "trial")
	must("CommitWorkTree", err)
	must("RemoveWorktree", c.RemoveWorktree(ctx, wt))
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("flakegate's git started a program the repository's config names:\n%s", b)
	}
}
