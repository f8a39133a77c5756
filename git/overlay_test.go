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

// TestOverlayWritesFiles: a written file's bytes are the overlay's (a
// new blob in the repository, stored byte for byte: no line-ending or
// other filter), it keeps the candidate's mode, a file the candidate
// lacks is added, the picked files are still the base's, and a written
// file equal to the candidate's changes nothing (the candidate itself
// when nothing else differs). A path that is not clean is refused.
func TestOverlayWritesFiles(t *testing.T) {
	r := newRepo(t) // c1 -> c2: a.txt changed, gone.txt deleted, old.txt -> new.txt, "sp ace.txt" added
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	gitT(t, r.dir, "config", "core.autocrlf", "true")
	mod := "module m\r\n\ngo 1.22\n"
	sha, err := c.Overlay(ctx, r.c1, r.c2, func(p string) bool { return p == "a.txt" },
		[]git.OverlayFile{{Path: "dir/b.txt", Data: []byte("written\n")}, {Path: "sub/go.mod", Data: []byte(mod)}})
	if err != nil {
		t.Fatal(err)
	}
	if sha == r.c2 {
		t.Fatal("got the candidate, want a new commit")
	}
	if got := gitT(t, r.dir, "show", sha+":a.txt"); got != "a1" {
		t.Errorf("a.txt is %q, want the base's a1", got)
	}
	if got := gitT(t, r.dir, "show", sha+":dir/b.txt"); got != "written" {
		t.Errorf("dir/b.txt is %q, want the written bytes", got)
	}
	if got := gitT(t, r.dir, "cat-file", "-p", sha+":sub/go.mod"); got+"\n" != mod {
		t.Errorf("sub/go.mod is %q, want %q byte for byte", got, mod)
	}
	if got := gitT(t, r.dir, "ls-tree", sha, "--", "sub/go.mod"); !strings.HasPrefix(got, "100644 blob ") {
		t.Errorf("sub/go.mod's entry %q, want a regular file", got)
	}
	files := strings.Split(gitT(t, r.dir, "ls-tree", "-r", "--name-only", sha), "\n")
	if want := []string{".gitignore", "a.txt", "dir/b.txt", "new.txt", "sp ace.txt", "sub/go.mod"}; !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}

	same, err := c.Overlay(ctx, r.c1, r.c2, func(string) bool { return false }, []git.OverlayFile{{Path: "dir/b.txt", Data: []byte("b\n")}})
	if err != nil || same != r.c2 {
		t.Errorf("a written file equal to the candidate's: got %s, %v; want the candidate", same, err)
	}
	for _, bad := range []string{"", "../x", "/abs", "a//b", ".git/config", "./a"} {
		if _, err := c.Overlay(ctx, r.c1, r.c2, func(string) bool { return false }, []git.OverlayFile{{Path: bad, Data: []byte("x")}}); err == nil {
			t.Errorf("the written path %q was taken", bad)
		}
	}
}
