package git_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/git"
)

// TestOverlayCommit: the picked files are the base's (an edited one back
// to the base's bytes, an added one gone, a deleted one back), the others
// the candidate's; the repository's index, HEAD and work tree are
// untouched; nothing picked that differs gives the candidate itself.
func TestOverlayCommit(t *testing.T) {
	r := newRepo(t) // c1 -> c2: a.txt changed, gone.txt deleted, old.txt -> new.txt, "sp ace.txt" added
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	head := gitT(t, r.dir, "rev-parse", "HEAD")
	status := gitT(t, r.dir, "status", "--porcelain")
	pick := func(p string) bool { return p != "new.txt" && p != "old.txt" }
	sha, err := c.OverlayCommit(ctx, r.c1, r.c2, pick)
	if err != nil {
		t.Fatal(err)
	}
	if sha == r.c2 || sha == r.c1 {
		t.Fatalf("got %s, want a new commit", sha)
	}
	files := strings.Split(gitT(t, r.dir, "ls-tree", "-r", "--name-only", sha), "\n")
	if want := []string{".gitignore", "a.txt", "dir/b.txt", "gone.txt", "new.txt"}; !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	if got := gitT(t, r.dir, "show", sha+":a.txt"); got != "a1" {
		t.Errorf("a.txt is %q, want the base's a1", got)
	}
	if got := gitT(t, r.dir, "rev-parse", sha+"^"); got != r.c2 {
		t.Errorf("parent %s, want the candidate %s", got, r.c2)
	}
	if gitT(t, r.dir, "rev-parse", "HEAD") != head || gitT(t, r.dir, "status", "--porcelain") != status {
		t.Error("the repository's HEAD, index or work tree changed")
	}
	same, err := c.OverlayCommit(ctx, r.c1, r.c2, func(p string) bool { return p == "dir/b.txt" })
	if err != nil || same != r.c2 {
		t.Errorf("nothing picked differs: got %s, %v; want the candidate", same, err)
	}
	if _, err := c.OverlayCommit(ctx, "-x", r.c2, pick); err == nil {
		t.Error("a revision starting with '-' was taken")
	}
}
