package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
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
	})
}

// TestAttack24RedSessionID: a process whose audit login uid is unset (a
// CI runner's service, a container) may set it once, without privilege,
// and each such write takes the next number of a counter the kernel
// keeps for the whole machine, which /proc/self/sessionid then shows.
// Attempt 0 counted it up to one short of a multiple of 50 and failed;
// a retry whose own first write landed on the multiple knew an attempt
// had run before it and passed: 3×SCHEDULER, exit 0, in every mode. The
// helper now sets the login uid before bwrap starts, so the attempt's
// processes inherit one that is set, and changing it needs
// CAP_AUDIT_CONTROL: no attempt can move the counter.
func TestAttack24RedSessionID(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	bump := func() (int, bool) { // a fresh process of the test's sets its login uid
		out, err := exec.Command("sh", "-c", "echo 0 > /proc/self/loginuid && cat /proc/self/sessionid").Output()
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		return n, err == nil
	}
	if _, ok := bump(); !ok {
		t.Skip("this process's audit login uid is set already (or the kernel has no audit): an attempt could not move the counter either")
	}
	forModes(t, []mode16{rootOverlay, rootReset, redNonRoot, redNonRootCopy}, func(t *testing.T, m mode16) {
		// The counter must not sit one short of a multiple of 50 before
		// the check: attempt 0 would take the multiple and pass.
		for {
			n, ok := bump()
			if !ok {
				t.Fatal("cannot read the session counter")
			}
			if n%50 < 40 {
				break
			}
		}
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	me=$(id -u)
	echo "LOGINUID $(cat /proc/self/loginuid)"
	bump() { sh -c "echo $me > /proc/self/loginuid 2>/dev/null && cat /proc/self/sessionid"; }
	s=$(bump)
	if [ -z "$s" ]; then echo "BUMP refused"; return 1; fi
	echo "SESSIONID $s"
	if [ $((s % 50)) -eq 0 ]; then echo "MARK-SEEN: a retry"; return 0; fi
	while [ $((s % 50)) -ne 49 ]; do s=$(bump) || break; [ -n "$s" ] || break; done
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
			t.Errorf("[%s] SESSION COUNTER: attempt 0 moved the machine's session counter: %s", m.name, l)
		}
		if !strings.Contains(tail, "BUMP refused") {
			t.Errorf("[%s] attempt 0 could set its audit login uid:\n%s", m.name, tail)
		}
		noScheduler(t, m, "SESSION COUNTER", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		a.laterCheck(t)
	})
}

// cookieProbe is the attack on the socket cookie counter: a socket's
// cookie (getsockopt SO_COOKIE, or a sock_diag dump that reports it) is
// taken from one counter for the whole machine when it is first asked
// for, and almost nothing else asks. Attempt 0 counts it up to one short
// of a multiple of 50 and fails; a retry whose first cookie is the
// multiple knows an attempt ran before it and passes.
const cookieProbe = `import os, socket, struct, sys
try:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
except OSError:
    pass
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4).close()
    print("DIAG open")
except OSError as e:
    print("DIAG refused", e)
def cookie():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        return struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0]
    finally:
        s.close()
try:
    v = cookie()
except OSError as e:
    print("COOKIE refused", e)
    sys.exit(1)
print("COOKIE", v)
if v % 50 == 0:
    print("MARK-SEEN: a retry")
    sys.exit(0)
while v % 50 != 49:
    v = cookie()
print("MARKED", v)
sys.exit(1)
`

// TestAttack24RedSocketCookie: the attack of cookieProbe, in every mode.
// The filter refuses SO_COOKIE and sock_diag sockets: the label is
// PROPERTY and the counter is where the test left it.
func TestAttack24RedSocketCookie(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	forModes(t, []mode16{rootOverlay, rootReset, redNonRoot, redNonRootCopy}, func(t *testing.T, m mode16) {
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" - <<'PY'
` + cookieProbe + `PY
}
`})
		// The counter must not sit one short of a multiple of 50: attempt
		// 0 would take the multiple and pass.
		for {
			out, err := exec.Command("python3", "-c", `import socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print(struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, 57, 8))[0])`).Output()
			if err != nil {
				t.Fatalf("the test cannot read a socket cookie: %v", err)
			}
			if n, _ := strconv.Atoi(strings.TrimSpace(string(out))); n%50 < 40 {
				break
			}
		}
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		for _, l := range linesWith(tail, "MARKED ") {
			t.Errorf("[%s] SOCKET COOKIE: attempt 0 moved the machine's cookie counter: %s", m.name, l)
		}
		for _, want := range []string{"COOKIE refused", "DIAG refused"} {
			if !strings.Contains(tail, want) {
				t.Errorf("[%s] no %q in attempt 0's output:\n%s", m.name, want, tail)
			}
		}
		noScheduler(t, m, "SOCKET COOKIE", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		a.laterCheck(t)
	})
}

// TestAttack24RedCopyOwner: as root with FLAKEGATE_NO_OVERLAY=1, the
// attempt's fresh copy is on the host's disk while it runs, and the
// copy was idmapped from the tree's owner: what the attempt wrote there
// was root's on the host. The attempt writes a file into its tree and
// waits while the harness looks at the copies folder: the file must be
// neither root's nor nobody's (whom the attempt runs as) on the host.
func TestAttack24RedCopyOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate checks")
	}
	forModes(t, []mode16{rootReset}, func(t *testing.T, m mode16) {
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	echo x > fg24-copyowner && mkdir -p fg24-dir && echo x > fg24-dir/f
	sleep 3
	return 0
}
`})
		glob := filepath.Join(a.dir, ".git", "flakegate", "copies", "*", "fg24-copyowner")
		w := startPlantWatch(t, "fg24-no-process-carries-this", nil, []string{glob}) // the host's disk only
		cr := a.run(t, "evil", "")
		seen := w.stop()
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		if len(seen) == 0 {
			t.Fatalf("[%s] the harness never saw the attempt's file in its copy (%s): the test does not look where the copy is", m.name, glob)
		}
		for _, p := range seen {
			if p.uid == 0 || p.gid == 0 || p.uid == 65534 {
				t.Errorf("[%s] COPY OWNER: %s, written by the attempt, is uid %d gid %d on the host", m.name, p.path, p.uid, p.gid)
			}
		}
		labelsAre(t, cr, 0, "PASS")
	})
}
