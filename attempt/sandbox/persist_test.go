package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// TestPrepareLayerKept: a prepare (Persist) writes, deletes and replaces
// files and folders of its tree on its tmpfs; the helper keeps that
// upper layer, whiteouts and opaque folders included, so an attempt with
// the layer under it (Prepared) sees the prepare's view, while the tree
// itself is untouched. A prepare past its disk bound keeps nothing.
func TestPrepareLayerKept(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	tmp := filepath.Join(root, "tmp")
	layer := filepath.Join(root, "layer")
	for _, d := range []string{filepath.Join(tree, "sub"), filepath.Join(tree, "gone"), tmp, filepath.Join(layer, "tree"), filepath.Join(layer, "gocache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	for _, d := range []string{filepath.Dir(root), root, tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"keep.txt": "keep\n", "del.txt": "del\n", "sub/old.txt": "old\n", "gone/x.txt": "x\n"} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	needOverlay(t, sb, root, env)

	prep := *sb
	prep.Persist = layer
	script := `set -e; echo built > gen.txt; rm del.txt; rm -r sub; mkdir sub; echo new > sub/new.txt; rm -r gone; ln -s keep.txt link`
	o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: &prep, WallBudget: time.Minute})
	if o.Result != attempt.Pass || o.KeepErr != nil {
		t.Fatalf("prepare: %s (%s) %v\n%s", o.Result, o.Reason, o.KeepErr, o.Tail)
	}
	if _, err := os.Stat(filepath.Join(tree, "gen.txt")); err == nil {
		t.Errorf("the prepare wrote the tree itself")
	}
	att := *sb
	att.Prepared = layer
	o = attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "cat gen.txt; ls -A . sub; readlink link"}, Dir: tree, Env: env, Sandbox: &att, WallBudget: time.Minute})
	want := "built\n.:\ngen.txt\nkeep.txt\nlink\nsub\n\nsub:\nnew.txt\nkeep.txt\n"
	if o.Result != attempt.Pass || o.Tail != want {
		t.Errorf("the attempt over the kept layer sees:\n%s\nwant:\n%s", o.Tail, want)
	}

	// Past the bound: the prepare is killed at its limit and keeps nothing.
	big := t.TempDir()
	for _, d := range []string{filepath.Join(big, "tree"), filepath.Join(big, "gocache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prep.Persist = big
	prep.Limits.Disk = 2 << 20
	o = attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "dd if=/dev/zero of=big bs=1M count=8 2>/dev/null; exit 0"}, Dir: tree, Env: env, Sandbox: &prep, WallBudget: time.Minute})
	if !strings.HasPrefix(o.Limit, "disk limit 2MiB") {
		t.Errorf("a prepare past its disk bound: %s, limit %q", o.Result, o.Limit)
	}
	if entries, _ := os.ReadDir(filepath.Join(big, "tree")); len(entries) != 0 {
		t.Errorf("a prepare past its bound kept %d entries", len(entries))
	}
}
