package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// TestTreeFilesInAttempt: a file added to an attempt's tree is there
// for that attempt, as a plain file of the tree with its neighbour's
// mode and times, and never on the worktree nor in the next attempt: on
// an overlay (the helper writes it into the upper layer), on a fresh
// copy, and where bwrap binds the worktree itself (written before,
// removed after).
func TestTreeFilesInAttempt(t *testing.T) {
	bwrap := needBwrap(t)
	for _, mode := range []string{"overlay", "copy", "worktree"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			tree := filepath.Join(root, "tree")
			tmp := filepath.Join(root, "tmp")
			for _, d := range []string{filepath.Join(tree, "p"), tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("TMPDIR", tmp)
			for _, d := range []string{filepath.Dir(root), root, tmp} {
				os.Chmod(d, 0o755) //nolint:errcheck // the identity walks in
			}
			old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
			if err := os.WriteFile(filepath.Join(tree, "p", "a_test.go"), []byte("package p\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(filepath.Join(tree, "p", "a_test.go"), old, old) //nolint:errcheck // checked below
			if mode == "copy" {
				t.Setenv(NoOverlayEnv, "1")
			}
			sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
			env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
			if mode != "worktree" {
				if err := sb.Probe(context.Background(), root, env, mode == "overlay"); err != nil || !(sb.Level.Root || sb.Level.Userns) {
					t.Skipf("no helper here: %v %v", err, sb.Level.Missing)
				}
				if mode == "overlay" && !sb.Overlay || mode == "copy" && !sb.Level.Copy {
					t.Skipf("no %s here: %v", mode, sb.Level.Missing)
				}
			} else {
				sb.Level, sb.Overlay = Level{}, false // bwrap alone, on the worktree (as a setuid bwrap without user namespaces)
			}
			one := *sb
			one.TreeFiles = []TreeFile{{Rel: "p/b_test.go", Data: []byte("package p_test\n"), Like: "p/a_test.go"}}
			o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "cat p/b_test.go; stat -c '%a %Y' p/b_test.go; grep -c b_test.go /proc/self/mountinfo || true"},
				Dir: tree, Env: env, Sandbox: &one, WallBudget: time.Minute, NoTestMarkers: []string{}})
			want := "package p_test\n640 " + strings.TrimSpace(formatUnix(old)) + "\n0\n"
			if o.Result != attempt.Pass || o.Tail != want {
				t.Fatalf("the attempt with the file: %s (%s) %q, want %q", o.Result, o.Reason, o.Tail, want)
			}
			if _, err := os.Lstat(filepath.Join(tree, "p", "b_test.go")); !os.IsNotExist(err) {
				t.Errorf("the file is on the worktree after the attempt: %v", err)
			}
			o = attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "test ! -e p/b_test.go"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute, NoTestMarkers: []string{}})
			if o.Result != attempt.Pass {
				t.Errorf("the next attempt sees the file: %s %s", o.Result, o.Tail)
			}
		})
	}
}

func formatUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// TestWriteTreeFilesNoLink: a folder of the tree that is a symbolic
// link, or a file that exists, is never written through: the tree is
// the code under test's.
func TestWriteTreeFilesNoLink(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.Mkdir(filepath.Join(root, "p"), 0o755)                       //nolint:errcheck // checked by the writes
	os.Symlink(outside, filepath.Join(root, "link"))                //nolint:errcheck
	os.WriteFile(filepath.Join(root, "p", "x_test.go"), nil, 0o644) //nolint:errcheck
	for _, rel := range []string{"link/a_test.go", "p/x_test.go", "../a_test.go", "/etc/x", "p/../link/b"} {
		if _, err := WriteTreeFiles(root, []TreeFile{{Rel: rel, Data: []byte("x")}}); err == nil {
			t.Errorf("%s was written", rel)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("a write went through the link: %v", ents)
	}
	undo, err := WriteTreeFiles(root, []TreeFile{{Rel: "p/y_test.go", Data: []byte("y")}, {Rel: "z.py", Data: []byte("z")}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "p", "y_test.go")); string(b) != "y" {
		t.Errorf("p/y_test.go holds %q", b)
	}
	undo()
	for _, rel := range []string{"p/y_test.go", "z.py"} {
		if _, err := os.Lstat(filepath.Join(root, rel)); !os.IsNotExist(err) {
			t.Errorf("%s is left: %v", rel, err)
		}
	}
}
