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

// TestHelperCoverage: in a test binary built with coverage (go test
// -cover, which scripts/test.sh runs on this package), the helper the
// binary re-executes for each attempt adds nothing to the attempt's
// output (the runtime's "warning: GOCOVERDIR not set" once ended every
// attempt's), and writes its own counters where the binary's go, so that
// what runs only in the helper is counted. Two attempts: the first
// helper is started for it, the second is a standby.
func TestHelperCoverage(t *testing.T) {
	if testing.CoverMode() == "" {
		t.Skip("not a coverage build: scripts/test.sh runs go test -cover ./attempt/sandbox/")
	}
	dir := os.Getenv("GOCOVERDIR")
	if dir == "" {
		t.Fatal("go test -cover set no GOCOVERDIR for the test binary")
	}
	bwrap := needBwrap(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(root), root, tree} {
		if err := os.Chmod(d, 0o755); err != nil { // the unprivileged identity walks into the tree
			t.Fatal(err)
		}
	}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	if err := sb.Probe(context.Background(), root, env, true); err != nil {
		t.Skipf("the sandbox cannot run here: %v", err)
	}
	counters := func() map[string]bool {
		got := map[string]bool{}
		names, _ := filepath.Glob(filepath.Join(dir, "covcounters.*"))
		for _, n := range names {
			got[n] = true
		}
		return got
	}
	before := counters()
	for i := range 2 {
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "echo hi; env"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != attempt.Pass || strings.Contains(o.Tail, "GOCOVER") || !strings.HasPrefix(o.Tail, "hi\n") {
			t.Errorf("attempt %d: %s (%s), output %q: the helper's coverage reached the attempt", i, o.Result, o.Reason, o.Tail)
		}
	}
	var added []string
	for n := range counters() {
		if !before[n] {
			added = append(added, filepath.Base(n))
		}
	}
	// An idmap's namespace holder (root) may add one more of its own.
	if len(added) < 2 {
		t.Errorf("the helpers of 2 attempts wrote %d counter files to GOCOVERDIR (%v): what runs in the helper is not counted", len(added), added)
	}
}
