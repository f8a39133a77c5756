package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// TestShareOwnedBySandbox: as root, what an attempt writes to a
// sandbox.rw folder is owned on the host by the share identity, neither
// root nor nobody; a file the tree's owner had there is still writable
// by the attempt (it was handed over), and a symbolic link in the
// folder that points outside it is not followed by the hand-over.
func TestShareOwnedBySandbox(t *testing.T) {
	bwrap := needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("the share identity is used when flakegate runs as root")
	}
	root := t.TempDir()
	tree, share, outside := filepath.Join(root, "tree"), filepath.Join(root, "share"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Dir(root), root, tree, share, filepath.Join(share, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(share, "sub", "old.txt"), filepath.Join(outside, "victim")} {
		if err := os.WriteFile(f, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(share, "link")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, RW: []string{share}, Home: "/root", Limits: testLimits})
	if err := sb.Probe(context.Background(), root, env, true); err != nil {
		t.Fatal(err)
	}
	if !sb.Level.Root || !sb.Level.Idmap {
		t.Fatalf("as root the probe did not reach idmapped mounts: %+v", sb.Level)
	}
	script := `set -e; echo new > ` + share + `/new.txt; mkdir ` + share + `/made; echo more >> ` + share + `/sub/old.txt; id -u; stat -c '%u' ` + share + `/new.txt; echo done`
	o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
	if o.Result != attempt.Pass || !strings.Contains(o.Tail, "done") {
		t.Fatalf("%s (%s):\n%s", o.Result, o.Reason, o.Tail)
	}
	uid, gid := shareIdentity()
	if uid == 0 || uid == 65534 || uid == os.Geteuid() {
		t.Fatalf("the share identity is uid %d", uid)
	}
	for _, p := range []string{"new.txt", "made", "sub", "sub/old.txt", "."} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(share, p), &st); err != nil {
			t.Fatal(err)
		}
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s in the share is %d:%d on the host, want the share identity %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(outside, "victim"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 {
		t.Errorf("the hand-over followed a link out of the share: %s is uid %d", filepath.Join(outside, "victim"), st.Uid)
	}
	sb.Close()
}
