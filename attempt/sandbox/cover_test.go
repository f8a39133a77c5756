package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
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
	root, tree := walkableTree(t)
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

// TestBuiltHelperCoverage: flakegate built with go build -cover, whose
// Go runtime reads GOCOVERDIR as it starts (a test binary reads it as it
// exits), re-executes itself as the helper. Its attempts' output holds
// nothing of the runtime's, with GOCOVERDIR set (the helpers' counters
// are written there, beside the binary's) or not (the runtime's warning
// as each helper starts goes nowhere); no attempt sees the runtime's
// GOCOVERDIR, and one that has its own keeps it. testdata/coverhelper
// runs attempts as flakegate does.
func TestBuiltHelperCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary with go build -cover")
	}
	bwrap := needBwrap(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "coverhelper")
	build := exec.Command(goBin, "build", "-cover", "-o", bin, "./testdata/coverhelper")
	build.Env = withoutCoverDir(os.Environ())
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -cover: %v\n%s", err, out)
	}
	root, tree := walkableTree(t)
	for _, dir := range []string{t.TempDir(), ""} {
		cmd := exec.Command(bin, bwrap, root, tree)
		cmd.Env = withoutCoverDir(os.Environ())
		if dir != "" {
			cmd.Env = append(cmd.Env, "GOCOVERDIR="+dir)
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			if cmd.ProcessState.ExitCode() == 3 {
				t.Skip(stderr.String())
			}
			t.Fatalf("GOCOVERDIR=%q: %v\n%s", dir, err, stderr.String())
		}
		builtHelperOutcomes(t, dir, stdout.String())
		if dir == "" {
			continue
		}
		// The binary's own, then the helpers' (the probe's, the first
		// attempt's and the standbys'); an idmap's namespace holder (root)
		// may add one more.
		if names, _ := filepath.Glob(filepath.Join(dir, "covcounters.*")); len(names) < 4 {
			t.Errorf("GOCOVERDIR holds %d counter files (%v): the helpers' were not written", len(names), names)
		}
	}
}

// builtHelperOutcomes checks coverhelper's outcomes, run with GOCOVERDIR
// dir ("" for none).
func builtHelperOutcomes(t *testing.T, dir, stdout string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("GOCOVERDIR=%q: %d outcomes, want 3:\n%s", dir, len(lines), stdout)
	}
	for i, line := range lines {
		var o attempt.Outcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		own := i == 2 && strings.Contains(o.Tail, "\nGOCOVERDIR=/attempt/own\n") && strings.Count(o.Tail, "GOCOVER") == 1
		if o.Result != attempt.Pass || !strings.HasPrefix(o.Tail, "hi\n") || strings.Contains(o.Tail, "GOCOVER") != (i == 2) || i == 2 && !own {
			t.Errorf("GOCOVERDIR=%q, attempt %d: %s (%s), output %q: the helper's coverage reached the attempt", dir, i, o.Result, o.Reason, o.Tail)
		}
	}
}

// withoutCoverDir is env without GOCOVERDIR.
func withoutCoverDir(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOCOVERDIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// walkableTree makes an empty attempt tree (root/tree) that the
// sandbox's unprivileged identity can walk into, and returns both.
func walkableTree(t *testing.T) (root, tree string) {
	t.Helper()
	root = t.TempDir()
	tree = filepath.Join(root, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(root), root, tree} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, tree
}
