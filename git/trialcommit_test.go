package git_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/git"
)

// TestCommitWorkTree: the commit holds the work tree as git add -A would
// stage it (a change, an untracked file, a deletion; not an ignored
// file) and the file given, on top of HEAD; the repository's index,
// status and branches do not change. A repository without a commit gets
// a root commit.
func TestCommitWorkTree(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	writeFile(t, filepath.Join(r.dir, "a.txt"), "a3, not committed\n")
	writeFile(t, filepath.Join(r.dir, "setup.js"), "untracked\n")
	writeFile(t, filepath.Join(r.dir, "debug.log"), "ignored\n")
	if err := os.Remove(filepath.Join(r.dir, "new.txt")); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.dir, "add", "a.txt") // staged in the real index: must stay so
	before := gitT(t, r.dir, "status", "--porcelain")
	c := &git.Client{Dir: filepath.Join(r.dir, "dir")}
	sha, err := c.CommitWorkTree(ctx, "flakegate.yaml", []byte("version: 1\n"), "trial")
	if err != nil {
		t.Fatal(err)
	}
	if after := gitT(t, r.dir, "status", "--porcelain"); after != before {
		t.Errorf("status changed:\n%s\nwas\n%s", after, before)
	}
	if head := gitT(t, r.dir, "rev-parse", "HEAD"); head != r.c2 {
		t.Errorf("HEAD moved to %s", head)
	}
	if p := gitT(t, r.dir, "rev-parse", sha+"^"); p != r.c2 {
		t.Errorf("parent %s, want HEAD %s", p, r.c2)
	}
	files := gitT(t, r.dir, "ls-tree", "-r", "--name-only", sha)
	if files != ".gitignore\na.txt\ndir/b.txt\nflakegate.yaml\nsetup.js\nsp ace.txt" {
		t.Errorf("files of the commit:\n%s", files)
	}
	for f, want := range map[string]string{"a.txt": "a3, not committed", "flakegate.yaml": "version: 1", "setup.js": "untracked"} {
		if got := gitT(t, r.dir, "show", sha+":"+f); got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}

	empty := t.TempDir()
	gitT(t, empty, "init", "-q")
	writeFile(t, filepath.Join(empty, "x.py"), "x\n")
	sha, err = (&git.Client{Dir: empty}).CommitWorkTree(ctx, "flakegate.yaml", []byte("version: 1\n"), "trial")
	if err != nil {
		t.Fatal(err)
	}
	if files := gitT(t, empty, "ls-tree", "-r", "--name-only", sha); files != "flakegate.yaml\nx.py" {
		t.Errorf("files of the root commit:\n%s", files)
	}
	if st := gitT(t, empty, "status", "--porcelain"); st != "?? x.py" {
		t.Errorf("status: %q", st)
	}
}
