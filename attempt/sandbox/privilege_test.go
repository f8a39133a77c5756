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

// privilegeScript prints the attempt's status lines and tries what only a
// privileged process could do; each try that works prints "BROKE:".
const privilegeScript = `grep -E '^(Uid|Gid|CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
mount -t tmpfs none /tmp 2>/dev/null && echo BROKE: mount
mount -o remount,rw / 2>/dev/null && echo BROKE: remount
unshare -U true 2>/dev/null && echo BROKE: unshare -U
unshare -m true 2>/dev/null && echo BROKE: unshare -m
python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); l.syscall.restype=ctypes.c_long; k=l.syscall(248, b"user", b"fg", b"x", 1, -3); sys.exit(0 if k>0 else 1)' 2>/dev/null && echo BROKE: add_key
test -r /etc/shadow && echo BROKE: shadow
ls /root/.ssh 2>/dev/null && echo BROKE: root home
mkdir /made-at-root 2>/dev/null && echo ROOT-WRITABLE
ls -l /proc/$$/fd/ >/tmp/fds
out=$(readlink /proc/$$/fd/1)
grep -- '->' /tmp/fds | grep -v -E ' [012] -> |/dev/null$' | grep -v -F "$out" | sed 's/.* \([0-9]*\) -> /BROKE: descriptor \1 -> /'
echo done`

// TestSandboxHoldsNoPrivilege: inside every kind of attempt (bwrap alone,
// and as root through the helper, with and without an overlay) no
// capability is held, no new privilege can be gained, the seccomp filter
// is on, and mounts, namespaces and the keyring are refused.
func TestSandboxHoldsNoPrivilege(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	type testCase struct {
		name           string
		probe, overlay bool
	}
	run := func(t *testing.T, tc testCase) {
		sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
		if tc.probe {
			if err := sb.Probe(context.Background(), root, env, tc.overlay); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 && !sb.Level.Root {
				t.Fatalf("as root the probe did not reach the unprivileged identity: %v", sb.Level.Missing)
			}
			if sb.Overlay != tc.overlay && os.Geteuid() == 0 {
				t.Fatalf("overlay %v, want %v: %v", sb.Overlay, tc.overlay, sb.Level.Missing)
			}
		}
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", privilegeScript}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != attempt.Pass || !strings.Contains(o.Tail, "done") {
			t.Fatalf("%s (%s):\n%s", o.Result, o.Reason, o.Tail)
		}
		for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(o.Tail, want) {
				t.Errorf("no %q inside:\n%s", want, o.Tail)
			}
		}
		if strings.Contains(o.Tail, "BROKE") {
			t.Errorf("a privileged act worked:\n%s", o.Tail)
		}
		if tc.probe && sb.Level.Root && strings.Contains(o.Tail, "ROOT-WRITABLE") {
			t.Errorf("as root, the attempt can make folders at /:\n%s", o.Tail)
		}
		if tc.probe && sb.Level.Root && !strings.Contains(o.Tail, "Uid:\t65534") {
			t.Errorf("as root, the attempt does not run as nobody:\n%s", o.Tail)
		}
	}
	for _, tc := range []testCase{
		{name: "bwrap alone"},
		{name: "probed, reset", probe: true},
		{name: "probed, overlay", probe: true, overlay: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
