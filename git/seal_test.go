package git_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/git"
)

// shapes is a repository whose two commits differ in every way a path can:
// x and y are its full hashes.
type shapes struct {
	dir  string
	x, y string
}

// newShapes commits x, then y with: a changed file, a new file in a new
// nested folder, a deleted file whose folder is left empty, a file that
// becomes a folder and a folder that becomes a file, an executable bit
// set, a symlink added and one retargeted, and names that are pathspec
// magic, globs, or hold spaces and newlines.
func newShapes(t *testing.T) shapes {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{
		"changed.txt":      "one\n",
		"only/in/x.txt":    "x\n",
		"becomes-dir":      "a file in x\n",
		"becomes-file/in":  "a folder in x\n",
		"run.sh":           "#!/bin/sh\n",
		":(top)magic":      "magic\n",
		"glob*name":        "glob\n",
		"glob-other":       "must not be touched by the glob\n",
		"sp ace/new\nline": "odd names\n",
		"target-a":         "a\n",
		"target-b":         "b\n",
		"same/kept.txt":    "kept\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	if err := os.Symlink("target-a", filepath.Join(dir, "link-moves")); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "x")
	x := gitT(t, dir, "rev-parse", "HEAD")

	writeFile(t, filepath.Join(dir, "changed.txt"), "two\n")
	writeFile(t, filepath.Join(dir, "deep/new/folder/y.txt"), "y\n")
	must(t, os.RemoveAll(filepath.Join(dir, "only")))
	must(t, os.Remove(filepath.Join(dir, "becomes-dir")))
	writeFile(t, filepath.Join(dir, "becomes-dir", "inside"), "a folder in y\n")
	must(t, os.RemoveAll(filepath.Join(dir, "becomes-file")))
	writeFile(t, filepath.Join(dir, "becomes-file"), "a file in y\n")
	must(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))
	writeFile(t, filepath.Join(dir, ":(top)magic"), "magic changed\n")
	writeFile(t, filepath.Join(dir, "glob*name"), "glob changed\n")
	writeFile(t, filepath.Join(dir, "sp ace/new\nline"), "odd names changed\n")
	must(t, os.Symlink("target-b", filepath.Join(dir, "link-new")))
	must(t, os.Remove(filepath.Join(dir, "link-moves")))
	must(t, os.Symlink("target-b", filepath.Join(dir, "link-moves")))
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "y")
	return shapes{dir: dir, x: x, y: gitT(t, dir, "rev-parse", "HEAD")}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot lists every path under root except .git: its type, executable
// bit and content or link target.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			got[rel] = "link " + target
		case info.IsDir():
			got[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[rel] = "file " + info.Mode().Perm().String()[3:4] + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%q: got %q, want %q", p, got[p], w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%q: left over (%q)", p, g)
		}
	}
}

// sealedAt opens a flakegate-style worktree of s at rev and seals it.
func sealedAt(t *testing.T, c *git.Client, wt, rev string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := c.OpenWorktree(ctx, wt, rev); err != nil {
		t.Fatal(err)
	}
	gitDir, err := c.WorktreeGitDir(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Seal(gitDir, rev); err != nil {
		t.Fatal(err)
	}
	return gitDir
}

// A sealed worktree moved to another commit is, file for file, a fresh
// checkout of that commit, in both directions.
func TestOpenWorktreeMoves(t *testing.T) {
	s := newShapes(t)
	c := &git.Client{Dir: s.dir}
	ctx := context.Background()
	want := map[string]map[string]string{}
	for _, rev := range []string{s.x, s.y} {
		fresh := filepath.Join(t.TempDir(), "fresh")
		if err := c.PrepareWorktree(ctx, fresh, rev); err != nil {
			t.Fatal(err)
		}
		want[rev] = snapshot(t, fresh)
	}
	if want[s.x]["becomes-dir"] == want[s.y]["becomes-dir"] {
		t.Fatal("the two commits do not differ")
	}
	for _, dir := range [][2]string{{s.x, s.y}, {s.y, s.x}} {
		from, to := dir[0], dir[1]
		wt := filepath.Join(t.TempDir(), "wt")
		gitDir := sealedAt(t, c, wt, from)
		how, err := c.OpenWorktree(ctx, wt, to)
		if err != nil {
			t.Fatal(err)
		}
		if how != git.Moved {
			t.Fatalf("OpenWorktree of a worktree sealed at the other commit: %v, want moved", how)
		}
		sameTree(t, snapshot(t, wt), want[to])
		if err := c.Pristine(ctx, gitDir, wt, to); err != nil {
			t.Fatalf("moved worktree: %v", err)
		}
		mustState(t, wt, to)
	}
}

func TestOpenWorktreeSeal(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	ctx := context.Background()
	type testCase struct {
		name string
		// setup leaves wt (a worktree at r.c1, or nothing) for the open at
		// r.c2, or at r.c1 when stay is set.
		setup func(t *testing.T, c *git.Client, r repo, wt string)
		stay  bool
		want  git.How
	}
	run := func(t *testing.T, tc testCase) {
		r := newRepo(t)
		c := &git.Client{Dir: r.dir}
		wt := filepath.Join(t.TempDir(), "wt")
		tc.setup(t, c, r, wt)
		rev := r.c2
		if tc.stay {
			rev = r.c1
		}
		how, err := c.OpenWorktree(ctx, wt, rev)
		if err != nil {
			t.Fatal(err)
		}
		if how != tc.want {
			t.Fatalf("OpenWorktree: %v, want %v", how, tc.want)
		}
		mustState(t, wt, rev)
		gitDir, err := c.WorktreeGitDir(ctx, wt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(gitDir, "flakegate-sealed")); err == nil {
			t.Fatal("the seal outlived the open: a check killed now would leave it behind")
		}
		// A second open finds no seal: the full reset.
		if how, err := c.OpenWorktree(ctx, wt, rev); err != nil || how != git.Reset {
			t.Fatalf("second open: %v, %v; want reset", how, err)
		}
	}
	unsealed := func(t *testing.T, c *git.Client, r repo, wt string) {
		if err := c.PrepareWorktree(ctx, wt, r.c1); err != nil {
			t.Fatal(err)
		}
	}
	sealed := func(t *testing.T, c *git.Client, r repo, wt string) { sealedAt(t, c, wt, r.c1) }
	writeSeal := func(content string) func(*testing.T, *git.Client, repo, string) {
		return func(t *testing.T, c *git.Client, r repo, wt string) {
			gitDir := sealedAt(t, c, wt, r.c1)
			writeFile(t, filepath.Join(gitDir, "flakegate-sealed"), content)
		}
	}
	for _, tc := range []testCase{
		{name: "missing folder", setup: func(*testing.T, *git.Client, repo, string) {}, want: git.Added},
		{name: "unsealed, dirty", setup: func(t *testing.T, c *git.Client, r repo, wt string) {
			unsealed(t, c, r, wt)
			dirty(t, wt)
		}, want: git.Reset},
		{name: "sealed at the revision", setup: sealed, stay: true, want: git.Kept},
		{name: "sealed at the other revision", setup: sealed, want: git.Moved},
		{name: "seal names another commit than HEAD", setup: func(t *testing.T, c *git.Client, r repo, wt string) {
			writeSeal(r.c2+"\n")(t, c, r, wt)
		}, want: git.Reset},
		{name: "garbled seal", setup: writeSeal("not a commit\n"), stay: true, want: git.Reset},
		{name: "short seal", setup: writeSeal("abc\n"), stay: true, want: git.Reset},
		{name: "PrepareWorktree drops the seal", setup: func(t *testing.T, c *git.Client, r repo, wt string) {
			sealed(t, c, r, wt)
			if err := c.PrepareWorktree(ctx, wt, r.c1); err != nil {
				t.Fatal(err)
			}
		}, stay: true, want: git.Reset},
		{name: "sealed, a path of the move tampered with", setup: func(t *testing.T, c *git.Client, r repo, wt string) {
			sealed(t, c, r, wt)
			// gone.txt is deleted by the move; a folder in its place
			// makes `git rm` fail, so the open resets in full.
			must(t, os.Remove(filepath.Join(wt, "gone.txt")))
			writeFile(t, filepath.Join(wt, "gone.txt", "planted"), "x\n")
		}, want: git.Reset},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// A seal is trusted, not proven: a file the move does not touch, changed
// behind flakegate's back, survives the open, and Pristine is what finds
// it (the check proves the base tree before its base replay).
func TestOpenWorktreeSealNeedsProof(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	gitDir := sealedAt(t, c, wt, r.c1)
	writeFile(t, filepath.Join(wt, "dir", "b.txt"), "tampered\n")
	writeFile(t, filepath.Join(wt, "planted.log"), "ignored and untracked\n")
	how, err := c.OpenWorktree(ctx, wt, r.c2)
	if err != nil || how != git.Moved {
		t.Fatalf("OpenWorktree: %v, %v; want moved", how, err)
	}
	err = c.Pristine(ctx, gitDir, wt, r.c2)
	if err == nil || !strings.Contains(err.Error(), "dir/b.txt") || !strings.Contains(err.Error(), "planted.log") {
		t.Fatalf("Pristine after a tampered seal: %v, want both planted paths named", err)
	}
}

// A .gitattributes difference can change how other files check out, so a
// sealed worktree is reset in full rather than moved path by path.
func TestOpenWorktreeAttributesReset(t *testing.T) {
	r := newRepo(t)
	writeFile(t, filepath.Join(r.dir, ".gitattributes"), "*.txt eol=crlf\n")
	gitT(t, r.dir, "add", ".gitattributes")
	gitT(t, r.dir, "commit", "-q", "-m", "c3")
	c3 := gitT(t, r.dir, "rev-parse", "HEAD")
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	wt := filepath.Join(t.TempDir(), "wt")
	sealedAt(t, c, wt, r.c2)
	how, err := c.OpenWorktree(ctx, wt, c3)
	if err != nil || how != git.Reset {
		t.Fatalf("OpenWorktree across a .gitattributes change: %v, %v; want reset", how, err)
	}
	mustState(t, wt, c3)
	if b, _ := os.ReadFile(filepath.Join(wt, "a.txt")); string(b) != "a2\r\n" {
		t.Fatalf("a.txt = %q, want the CRLF checkout", b)
	}
}
