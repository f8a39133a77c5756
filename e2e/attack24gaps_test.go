package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 24's last gaps: the autogroup counter, the page cache without a
// memory cgroup. Non-root runs use uids 61536 (overlays) and 61537 (fresh
// copies), users of their own (RLIMIT_NPROC counts a user's processes on
// the whole machine).

var (
	gapNonRoot     = mode16{name: "nonroot", uid: 61536}
	gapNonRootCopy = mode16{name: "nonroot-copy", env: []string{"FLAKEGATE_NO_OVERLAY=1"}, uid: 61537}
	gapModes       = []mode16{rootOverlay, rootReset, gapNonRoot, gapNonRootCopy}
)

// autogroupOf is the number N of a process's "/autogroup-N nice 0".
func autogroupOf(line string) (int, bool) {
	_, rest, ok := strings.Cut(line, "/autogroup-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.Fields(rest)[0])
	return n, err == nil
}

// TestAttack24Autogroup: every setsid() on the machine takes the next
// number of one counter, the autogroup id a process reads in
// /proc/self/autogroup. Attempt 0 counts it up with setsid(1) to one
// short of a multiple of 300 and fails; a retry whose own first setsid
// lands less than 80 past the multiple (the sessions the machine makes
// meanwhile) knows an attempt ran before it and passes: 3×SCHEDULER
// for a deterministic regression, exit 0, in every mode. The attacker
// picks the modulus, so no bounded random bump of the counter hides it.
// The filter now refuses setsid inside the attempt (bwrap's own
// --new-session happens before the filter is applied): no attempt can
// move the counter, and the label is PROPERTY.
func TestAttack24Autogroup(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	bump := func() (int, bool) { // a session of the test's own takes the next number
		out, err := exec.Command("setsid", "cat", "/proc/self/autogroup").Output()
		if err != nil {
			return 0, false
		}
		return autogroupOf(string(out))
	}
	if _, ok := bump(); !ok {
		t.Skip("this kernel shows no autogroup (CONFIG_SCHED_AUTOGROUP off): there is no counter to move")
	}
	forModes(t, gapModes, func(t *testing.T, m mode16) {
		// The counter must not sit just short of a multiple of 300: the
		// check's own sessions could carry attempt 0 past it, and it
		// would pass.
		for {
			n, ok := bump()
			if !ok {
				t.Fatal("cannot read the autogroup counter")
			}
			if r := n % 300; r >= 100 && r < 200 {
				break
			}
		}
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	echo "OWN $(cat /proc/self/autogroup)"
	bump() { g=$(setsid cat /proc/self/autogroup 2>/dev/null) || return 0; g=${g#/autogroup-}; echo "${g%% *}"; }
	s=$(bump)
	if [ -z "$s" ]; then echo "BUMP refused: $(setsid true 2>&1)"; return 1; fi
	echo "AUTOGROUP $s"
	if [ $((s % 300)) -lt 80 ]; then echo "MARK-SEEN: a retry"; return 0; fi
	while [ $((s % 300)) -ne 299 ]; do s=$(bump); [ -n "$s" ] || break; done
	echo "MARKED $s"
	return 1
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		for _, l := range linesWith(tail, "MARKED ") {
			t.Errorf("[%s] AUTOGROUP: attempt 0 moved the machine's autogroup counter: %s", m.name, l)
		}
		if !strings.Contains(tail, "BUMP refused") {
			t.Errorf("[%s] attempt 0 could start a session of its own:\n%s", m.name, tail)
		}
		if !strings.Contains(tail, "OWN /autogroup-") {
			t.Errorf("[%s] the attempt is in no autogroup of its own (bwrap's --new-session):\n%s", m.name, tail)
		}
		noScheduler(t, m, "AUTOGROUP", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		a.laterCheck(t)
	})
}

// TestAttack24PageCacheLoadTree: TestAttack24PageCacheLoad with a file of
// the tree, on overlays (a fresh copy is new inodes, written just before
// the attempt). A committed 1 MiB file is cold when the check starts (the
// harness evicted it from the worktrees after a first check made them);
// attempt 0 finds it cold by its page faults, loads it and fails; a retry
// that finds it warm passes. With a memory cgroup the failed attempt's
// cgroup is reclaimed; without one (non-root here) flakegate drops the
// tree's files from the page cache before every attempt and after a
// failed one: every attempt finds it cold, PROPERTY (before the sweep:
// 3×SCHEDULER, exit 0).
func TestAttack24PageCacheLoadTree(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	// Without root only: as root the check's own git may read the file
	// before attempt 0 (an index entry git must hash again), and what it
	// reads is charged to no attempt's cgroup, so attempt 0 may find it
	// warm and pass; TestAttack24PageCacheLoad covers the cgroup's
	// reclaim with a file no git reads.
	forModes(t, []mode16{gapNonRoot}, func(t *testing.T, m mode16) {
		files := baseFiles(libOK)
		files["flakegate.yaml"] = config16("", "")
		files["data/cold.bin"] = strings.Repeat("fg24 cold tree\n\x00", 1<<16)
		a := newA16Files(t, m, files)
		a.candidate("first", map[string]string{"README.md": "a first, harmless patch\n"})
		if cr := a.run(t, "first", ""); cr.code != 0 { // makes the worktrees
			t.Fatalf("[%s] the first check is not a pass\n%s", m.name, cr)
		}
		blobs, _ := filepath.Glob(filepath.Join(treesDir(t, a.dir), "*", "data", "cold.bin"))
		if len(blobs) == 0 {
			t.Fatalf("[%s] no worktree holds data/cold.bin", m.name)
		}
		// Where the check keeps its worktrees on a tmpfs without swap
		// (no memory cgroup: not root here), the file is resident for
		// good: no attempt can evict it or find it evicted, so every
		// attempt sees the same and the patch passes in each.
		onTmpfs := strings.HasPrefix(blobs[0], "/dev/shm/")
		for _, b := range blobs {
			if onTmpfs {
				break
			}
			evictHost(t, b)
			if frac := residentFraction(t, b); frac > 0.1 {
				t.Skipf("the harness cannot evict %s from the page cache (%.0f%% cached)", b, 100*frac)
			}
		}
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" - <<'PY'
` + residencyProbe + `
fd, addr, size, how, frac = observe("data/cold.bin")
print("RESIDENT", how, "%.2f" % frac)
if frac > 0.5:
    print("WARM-SEEN: a retry")
    sys.exit(0)
os.pread(fd, size, 0)
sys.exit(1)
PY
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		noScheduler(t, m, "PAGE CACHE (tree load)", cr)
		if onTmpfs {
			labelsAre(t, cr, 0, "PASS")
			for _, at := range cr.record(t, 0).Attempts {
				if at.Side == "candidate" && !strings.Contains(at.OutputTail, "WARM-SEEN") {
					t.Errorf("[%s] PAGE CACHE: candidate attempt %d did not find data/cold.bin resident on the tmpfs:\n%s", m.name, at.Index, at.OutputTail)
				}
			}
			a.laterCheck(t)
			return
		}
		labelsAre(t, cr, 1, "PROPERTY")
		// Every candidate attempt found the file cold. (What flakegate's
		// own git reads of the worktrees after the last attempt leaves
		// cached, the next check's first attempt does not find: the
		// check drops it before every attempt.)
		for _, at := range cr.record(t, 0).Attempts {
			if at.Side == "candidate" && !strings.Contains(at.OutputTail, "RESIDENT majflt 0.00") {
				t.Errorf("[%s] PAGE CACHE: candidate attempt %d did not find data/cold.bin cold:\n%s", m.name, at.Index, at.OutputTail)
			}
		}
		a.laterCheck(t)
	})
}
