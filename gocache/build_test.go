package gocache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

// TestBuildArgv: a batch's command as a build that runs no test code,
// keyed without the flags only the test binary reads; a command with its
// own -exec or -toolexec has no build step.
func TestBuildArgv(t *testing.T) {
	a, ok := BuildArgv([]string{"go", "test", "-json", "-shuffle=1", "-count=1", "-timeout=0", "-race", "-run", "^(TestA|FuzzX)$", "./p", "-tags", "x", "-seed=1"})
	want := []string{"go", "test", "-exec", keeperExec, "-count=1", "-json", "-race", "./p", "-tags", "x"}
	if !ok || !slices.Equal(a, want) {
		t.Fatalf("got %q %v, want %q", a, ok, want)
	}
	b, _ := BuildArgv([]string{"go", "test", "-json", "-shuffle=2", "-count", "3", "-timeout=0", "-v", "-race", "-run", "^(TestB)$", "./p", "-tags", "x", "-seed=2"})
	if !slices.Equal(a, b) {
		t.Errorf("two seeds' batches have different builds: %q, %q", a, b)
	}
	if c, _ := BuildArgv([]string{"go", "test", "-json", "-run", "^(TestB)$", "./p"}); slices.Equal(a, c) {
		t.Errorf("another build (no -race, no tags) is the same")
	}
	for _, f := range []string{"-exec=x", "-toolexec", "-c", "-o=bin", "-args"} {
		if _, ok := BuildArgv([]string{"go", "test", f, "./p"}); ok {
			t.Errorf("%s: a build step", f)
		}
	}
}

// TestBuildKey: a build step's key holds the tree, so the base's attempts
// never read a layer built from the candidate's tree; an attempt that is
// not root on an overlay, or that is a fill or a prepare, has none.
func TestBuildKey(t *testing.T) {
	root := sandbox.Level{Root: true}
	cmd := func(sb *sandbox.Sandbox) *attempt.Command {
		return &attempt.Command{Argv: []string{"go", "test", "-json", "-run", "^(TestA)$", "./p"}, Dir: "/t/w0", Sandbox: sb}
	}
	ok := &sandbox.Sandbox{Level: root, Overlay: true, GoCache: "/c", Tree: "/t/w0"}
	cand, base := BuildKey(cmd(ok), "candidate "+strings.Repeat("a", 40)), BuildKey(cmd(ok), "base "+strings.Repeat("b", 40))
	if cand == "" || base == "" || cand == base {
		t.Fatalf("the candidate's and the base's keys: %q, %q", cand, base)
	}
	if k := BuildKey(cmd(ok), ""); k != "" {
		t.Errorf("no tree, a key: %q", k)
	}
	for name, sb := range map[string]*sandbox.Sandbox{
		"not root":  {Level: sandbox.Level{Userns: true}, Overlay: true, GoCache: "/c"},
		"copy mode": {Level: sandbox.Level{Root: true, Copy: true}, GoCache: "/c"},
		"no cache":  {Level: root, Overlay: true},
		"the fill":  {Level: root, Overlay: true, GoCache: "/c", FillGoCache: true},
		"a prepare": {Level: root, Overlay: true, GoCache: "/c", Persist: "/p"},
	} {
		if k := BuildKey(cmd(sb), "candidate x"); k != "" {
			t.Errorf("%s: a build step", name)
		}
	}
	if k := BuildKey(&attempt.Command{Argv: []string{"go", "test", "-exec", "x", "./p"}, Sandbox: ok}, "candidate x"); k != "" {
		t.Errorf("a command with its own -exec: a build step")
	}
}

// TestRemoveUnheld: a check's build folder is removed once no check
// holds it and it is older than the folder's making; a held folder and
// a folder just made are kept.
func TestRemoveUnheld(t *testing.T) {
	root := t.TempDir()
	b := &Builds{Root: root}
	held, err := b.checkDir()
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, "check-stale")
	fresh := filepath.Join(root, "check-fresh")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "b1", "gocache"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{stale, held} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	removeUnheld(root, time.Now().Add(-time.Minute))
	for d, want := range map[string]bool{held: true, fresh: true, stale: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
	b.Close()
	if _, err := os.Stat(held); err == nil {
		t.Errorf("Close kept the check's folder")
	}
}
