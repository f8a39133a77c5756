package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The attempt trees: a throwaway overlay per attempt where the kernel
// allows it (as root here and in CI, and without root in the helper's
// user namespace), else a fresh copy per attempt (FLAKEGATE_NO_OVERLAY=1
// forces it); a reset and clean after each attempt only with sandbox mode
// none.

const overlayLine = "attempt trees: a throwaway overlay per attempt"
const resetLine = "attempt trees: reset and cleaned after each attempt"
const copyLine = "attempt trees: a fresh copy per attempt"

// dirtyProp checks that its tree is pristine (else it exits 3: an error),
// then writes, deletes and modifies files in it; it passes on base and
// fails on the candidate, whose code under test sets FAIL.
const dirtyProp = `. ./src/lib.sh
if [ ! -f keep.txt ] || [ "$(cat mod.txt)" != old ] || [ -e new.txt ] || [ -e junk ] || [ ! -f sub/x.txt ]; then
	echo "DIRTY TREE"; ls -la; exit 3
fi
echo new > new.txt; rm keep.txt; echo changed > mod.txt; rm -r sub; mkdir junk; echo x > junk/x
[ -n "$FG_READY" ] && touch "$FG_READY/ready" && while [ ! -e "$FG_READY/go" ]; do sleep 0.1; done
exit "${FAIL:-0}"
`

func dirtyRepo(t *testing.T, extra string) *repo {
	files := map[string]string{
		"flakegate.yaml":    "version: 1\nretry_cap: 2\nworkers: 1\nproperties:\n  - path: props/prop.sh\n    fixture: fixtures/data.txt\n    seeds: [7]\n    run: [sh, \"{path}\", \"{seed}\"]\n    wall_budget: 60s\n" + extra,
		"props/prop.sh":     dirtyProp,
		"fixtures/data.txt": "data\n",
		"src/lib.sh":        "FAIL=0\n",
		"keep.txt":          "keep\n",
		"mod.txt":           "old\n",
		"sub/x.txt":         "x\n",
	}
	r := newRepo(t, files)
	r.candidate("bad", map[string]string{"src/lib.sh": "FAIL=1\n"})
	return r
}

// treesPristine fails unless every worktree of the check is clean and
// there are want of them (2 in overlay mode, 3 in reset mode).
func treesPristine(t *testing.T, r *repo, want int) {
	t.Helper()
	root := treesDir(t, r.dir)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		out, err := exec.Command("git", "-C", filepath.Join(root, e.Name()), "status", "--porcelain", "--ignored", "--untracked-files=all").CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("worktree %s is not pristine after the check: %v\n%s", e.Name(), err, out)
		}
	}
	if n != want {
		t.Errorf("%d worktrees, want %d", n, want)
	}
}

// overlayMounts returns the mountinfo lines of every process naming dir.
func overlayMounts(dir string) []string {
	var out []string
	paths, _ := filepath.Glob("/proc/[0-9]*/mountinfo")
	for _, p := range append(paths, "/proc/self/mountinfo") {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.Contains(l, dir) {
				out = append(out, p+": "+l)
			}
		}
	}
	return out
}

// checkDirty runs the dirtying property with env and asserts that every
// attempt found its tree pristine: candidate fail, two failed retries on
// the reused candidate trees, base pass; and that the trees are pristine
// and no overlay or layer folder is left after the check.
func checkDirty(t *testing.T, env []string, wantLine string, trees int) {
	r := dirtyRepo(t, "")
	tmp := walkableTemp(t)
	env = append(env, "TMPDIR="+tmp)
	for round := 0; round < 2; round++ { // the second check reuses the trees
		cr := r.checkEnv(env, "--base", "base", "--candidate", "bad", "--no-replay-cache")
		if cr.code != 1 || cr.summary == nil || !strings.Contains(cr.stderr, wantLine) {
			t.Fatalf("round %d: want a reject and %q on stderr\n%s", round, wantLine, cr)
		}
		rec := cr.record(t, 0)
		var got []string
		for _, a := range rec.Attempts {
			got = append(got, fmt.Sprintf("%s%d:%s", a.Side, a.Index, a.Result))
			if strings.Contains(a.OutputTail, "DIRTY") {
				t.Errorf("round %d: %s attempt %d saw an earlier attempt's writes:\n%s", round, a.Side, a.Index, a.OutputTail)
			}
		}
		want := "candidate0:fail base0:pass candidate1:fail candidate2:fail"
		if strings.Join(got, " ") != want {
			t.Errorf("round %d: attempts %s, want %s", round, strings.Join(got, " "), want)
		}
		treesPristine(t, r, trees)
		if m := overlayMounts(tmp); len(m) != 0 {
			t.Errorf("round %d: overlays still mounted after the check: %q", round, m)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "flakegate-overlay-*")); len(left) != 0 {
			t.Errorf("round %d: layer folders left after the check: %v", round, left)
		}
	}
}

// TestCheckOverlayAttempts: with overlays, a file written, deleted or
// modified by an attempt is seen neither by the next attempt (the
// retries, on the same trees) nor by the base attempt; the worktrees are
// pristine after the check, nothing stays mounted and no layer folder is
// left.
func TestCheckOverlayAttempts(t *testing.T) {
	checkDirty(t, nil, overlayLine, 2)
}

// TestCheckCopyAttempts: the same with the overlay turned off: a fresh
// copy of the tree per attempt, removed after it.
func TestCheckCopyAttempts(t *testing.T) {
	checkDirty(t, []string{"FLAKEGATE_NO_OVERLAY=1"}, copyLine, 2)
}

// TestCheckOverlayKilled: flakegate killed with SIGKILL in the middle of
// an attempt leaves no overlay mounted anywhere: never in the host's
// mount namespace while the attempt runs, and gone with the attempt's
// namespace once the sandbox dies with flakegate.
func TestCheckOverlayKilled(t *testing.T) {
	ready := t.TempDir()
	r := dirtyRepo(t, fmt.Sprintf("sandbox:\n  rw: [%q]\n  env: [FG_READY]\n", ready))
	tmp := walkableTemp(t)
	cmd := exec.Command(flakegateBin, "check", "--json", "--base", "base", "--candidate", "bad", "--no-replay-cache")
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), "FG_STATE="+r.state, "TMPDIR="+tmp, "FG_READY="+ready)
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	waitFor(t, func() bool {
		_, err := os.Stat(filepath.Join(ready, "ready"))
		return err == nil
	})
	if !strings.Contains(stderr.String(), overlayLine) {
		t.Fatalf("not on an overlay:\n%s", stderr.String())
	}
	if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), "overlay") && strings.Contains(string(m), tmp) {
		t.Errorf("the attempt's overlay is in the host's mount namespace:\n%s", m)
	}
	if len(overlayMounts(tmp)) == 0 {
		t.Fatal("no process has the attempt's overlay mounted while it runs: the test would prove nothing")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for len(overlayMounts(tmp)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("overlay still mounted 30s after flakegate was killed: %q", overlayMounts(tmp))
		}
		time.Sleep(50 * time.Millisecond)
	}
	treesPristine(t, r, 2)
	// The killed check's layer folder stays; the next check removes it.
	if left, _ := filepath.Glob(filepath.Join(tmp, "flakegate-overlay-*")); len(left) == 0 {
		t.Fatal("the killed check left no layer folder: the sweep below would prove nothing")
	}
	cr := r.checkEnv([]string{"TMPDIR=" + tmp, "FG_READY="}, "--base", "base", "--candidate", "bad", "--no-replay-cache")
	if cr.code != 1 || !strings.Contains(cr.stderr, "overlay folders that a killed check left") {
		t.Fatalf("the check after the kill: want a reject that removes the layer folder\n%s", cr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "flakegate-overlay-*")); len(left) != 0 {
		t.Errorf("layer folders left after the next check: %v", left)
	}
}

// walkableTemp is a temporary folder every user may walk through, as
// the attempts' layer folders need (the sandbox runs as nobody).
func walkableTemp(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{filepath.Dir(tmp), tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// treesLine returns the stderr line that says how the trees were opened.
func treesLine(cr *checkRun) string {
	for _, l := range strings.Split(cr.stderr, "\n") {
		if strings.Contains(l, overlayLine) {
			return l
		}
	}
	return ""
}

// TestCheckSealedTrees: in overlay mode a check seals its trees, and the
// next check keeps them, or moves the candidate tree to the new candidate
// path by path, instead of resetting and cleaning them. A tree left
// unsealed (its check was killed) is reset and cleaned in full, whatever
// it holds. A sealed base tree changed behind flakegate's back fails the
// proof before the first base attempt: exit 3, nothing enters the replay
// cache, the tree is not sealed again, and the next check resets it and
// labels as before.
func TestCheckSealedTrees(t *testing.T) {
	r := dirtyRepo(t, "")
	r.candidate("bad2", map[string]string{"src/lib.sh": "FAIL=1\n# another candidate\n"})
	root := treesDir(t, r.dir)
	replay := filepath.Join(r.dir, ".git", "flakegate", "replay")
	seal := func(tree string) string { return filepath.Join(r.dir, ".git", "worktrees", tree, "flakegate-sealed") }
	cached := func() int {
		entries, _ := filepath.Glob(filepath.Join(replay, "*.json"))
		return len(entries)
	}
	want := "candidate0:fail base0:pass candidate1:fail candidate2:fail"
	check := func(step, tag, wantTrees string, args ...string) {
		t.Helper()
		cr := r.check(append([]string{"--base", "base", "--candidate", tag}, args...)...)
		if cr.code != 1 || cr.summary == nil {
			t.Fatalf("%s: want a reject\n%s", step, cr)
		}
		if line := treesLine(cr); !strings.Contains(line, wantTrees) {
			t.Errorf("%s: trees line %q, want %q", step, line, wantTrees)
		}
		var got []string
		for _, a := range cr.record(t, 0).Attempts {
			got = append(got, fmt.Sprintf("%s%d:%s", a.Side, a.Index, a.Result))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: attempts %s, want %s", step, strings.Join(got, " "), want)
		}
		treesPristine(t, r, 2)
		for _, tree := range []string{"base-0", "candidate-0"} {
			if _, err := os.Stat(seal(tree)); err != nil {
				t.Errorf("%s: %s not sealed after the check: %v", step, tree, err)
			}
		}
	}
	check("first check", "bad", "base-0 added, candidate-0 added", "--no-replay-cache")
	check("same revisions", "bad", "base-0 kept, candidate-0 kept", "--no-replay-cache")
	check("another candidate", "bad2", "base-0 kept, candidate-0 moved", "--no-replay-cache")

	// A check killed in the middle of writing the candidate tree leaves
	// it unsealed: the next check resets and cleans it.
	if err := os.Remove(seal("candidate-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "candidate-0", "mod.txt"), []byte("half written\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "candidate-0", "junk"), []byte("left over\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("unsealed candidate tree", "bad", "base-0 kept, candidate-0 reset", "--no-replay-cache")

	if err := os.WriteFile(filepath.Join(root, "base-0", "mod.txt"), []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cr := r.check("--base", "base", "--candidate", "bad")
	if cr.code != 3 || !strings.Contains(cr.stderr, "the base worktree is not a pristine checkout") || !strings.Contains(cr.stderr, "mod.txt") {
		t.Fatalf("changed base tree: want exit 3 naming the base worktree and mod.txt\n%s", cr)
	}
	if n := cached(); n != 0 {
		t.Errorf("changed base tree: the replay cache holds %d entries", n)
	}
	if _, err := os.Stat(seal("base-0")); err == nil {
		t.Error("changed base tree: sealed again")
	}
	check("after the base tree was changed", "bad", "base-0 reset, candidate-0 kept")
	if cached() == 0 {
		t.Error("the replay cache is empty after a check that replayed the base: the test would prove nothing")
	}
}
