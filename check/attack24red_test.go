package check_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The red team's attacks on issue 24's sandbox, run after the four
// branches merged. Non-root runs use uid 61540, a user of their own.

var (
	redNonRoot     = mode16{name: "nonroot", uid: 61540}
	redNonRootCopy = mode16{name: "nonroot-copy", env: []string{"FLAKEGATE_NO_OVERLAY=1"}, uid: 61540}
)

// TestAttack24RedDevNodesNonRoot: without root, the attempt's device
// nodes were the host's, bound writable by bwrap's --dev: `touch
// /dev/null` (which needs only write permission, and every user may
// write /dev/null) set the host node's times to now, and a retry that
// found them fresh passed: 3×SCHEDULER for a deterministic regression,
// exit 0. The helper now makes the nodes read-only in its own mount
// namespace before bwrap binds them: the touch fails, the host's nodes
// keep their times, the devices still work, and the label is PROPERTY.
func TestAttack24RedDevNodesNonRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	forModes(t, []mode16{redNonRoot, redNonRootCopy}, func(t *testing.T, m mode16) {
		original := readNodes(t)
		t.Cleanup(func() { restoreNodes(original) })
		for n, st := range original { // a node touched lately would pass attempt 0
			if time.Since(time.Unix(st.mtime.Unix())) < 10*time.Minute {
				old := unix.NsecToTimespec(time.Now().Add(-time.Hour).UnixNano())
				if err := unix.UtimesNanoAt(unix.AT_FDCWD, "/dev/"+n, []unix.Timespec{st.atime, old}, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := readNodes(t)
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	now=$(date +%s)
	grep -E ' /dev/(null|tty) ' /proc/self/mountinfo | sed 's/^/MOUNT /'
	echo x > /dev/null && echo "WRITE-NULL ok"
	echo "READ-URANDOM $(head -c 4 /dev/urandom | wc -c)"
	for n in ` + strings.Join(devNodes24, " ") + `; do
		if [ $((now - $(stat -c %Y /dev/$n))) -lt 300 ]; then echo "MARK-SEEN $n: a retry"; return 0; fi
	done
	for n in ` + strings.Join(devNodes24, " ") + `; do
		touch /dev/$n 2>/dev/null && echo "MARKED touch $n"
	done
	return 1
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		after := readNodes(t)
		for _, n := range devNodes24 {
			if b, f := before[n], after[n]; b.mtime != f.mtime || b.atime != f.atime {
				t.Errorf("[%s] DEVICE NODE: the host's /dev/%s changed during the check: mtime %d -> %d", m.name, n, b.mtime.Sec, f.mtime.Sec)
			}
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		for _, want := range []string{"WRITE-NULL ok", "READ-URANDOM 4", "/dev/null ro,"} {
			if !strings.Contains(tail, want) {
				t.Errorf("[%s] no %q in attempt 0's output:\n%s", m.name, want, tail)
			}
		}
		for _, l := range linesWith(tail, "MARKED ") {
			t.Errorf("[%s] DEVICE NODE: attempt 0 changed a host node: %s", m.name, l)
		}
		noScheduler(t, m, "DEVICE NODE", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		restoreNodes(before)
		a.laterCheck(t)
		_ = fmt.Sprint()
	})
}
