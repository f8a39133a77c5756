package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// needBwrap returns the bwrap binary; without it the test is skipped,
// or fails under CI=true.
func needBwrap(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI=true: apt-get install bubblewrap")
		}
		t.Skip("bwrap not installed")
	}
	return p
}

func TestSandbox(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	secret := filepath.Join(root, "secret")
	shared := filepath.Join(root, "shared")
	for _, d := range []string{tree, secret, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "ledger.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(shared, "store")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "ledger.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Hide: []string{secret, inner}, RO: []string{shared}, Home: "/root"})
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	type testCase struct {
		name   string
		script string
		result string
		tail   string
	}
	run := func(t *testing.T, tc testCase) {
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", tc.script}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != tc.result || !strings.Contains(o.Tail, tc.tail) {
			t.Errorf("result %q (reason %q) tail %q; want %q with %q", o.Result, o.Reason, o.Tail, tc.result, tc.tail)
		}
	}
	for _, tc := range []testCase{
		{name: "tree is writable", script: "echo x > f && cat f", result: attempt.Pass, tail: "x"},
		{name: "exit 1 is a failure", script: "exit 1", result: attempt.Fail},
		{name: "hidden folder is empty", script: "ls -A " + secret + " | wc -l", result: attempt.Pass, tail: "0"},
		{name: "hidden folder inside a shared one is empty", script: "test -d " + shared + " && ls -A " + inner + " | wc -l", result: attempt.Pass, tail: "0"},
		{name: "system is read-only", script: "touch /usr/flakegate-probe", result: attempt.Fail, tail: "Read-only"},
		{name: "shared folder is read-only", script: "touch " + shared + "/x", result: attempt.Fail, tail: "Read-only"},
		{name: "parent is the sandbox's init", script: "cat /proc/$PPID/cmdline | tr '\\0' ' '; echo; test $PPID = 1", result: attempt.Pass, tail: "bwrap"},
		{name: "no network", script: "test $(ls /sys/class/net | wc -l) -le 1 || cat /proc/net/dev; ! grep -q eth /proc/net/dev", result: attempt.Pass},
		{name: "environment is exactly Env", script: "env | sort", result: attempt.Pass, tail: "HOME=/root\nPATH=/usr/bin:/bin\nPWD="},
		{name: "home is private", script: "ls -A ~ | wc -l", result: attempt.Pass, tail: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	t.Run("bwrap's own failure is an error, not a failing test", func(t *testing.T) {
		bad := *sb
		bad.RW = []string{filepath.Join(root, "no-such-folder")}
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"true"}, Dir: tree, Env: env, Sandbox: &bad})
		if o.Result != attempt.Errored || !strings.Contains(o.Reason, "sandbox") {
			t.Errorf("result %q reason %q, want an error naming the sandbox", o.Result, o.Reason)
		}
	})

	t.Run("a daemon dies with the attempt", func(t *testing.T) {
		marker := filepath.Join(tree, "alive")
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "(sh -c 'while :; do date > alive; sleep 0.05; done' </dev/null >/dev/null 2>&1 &); sleep 0.3; exit 0"},
			Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != attempt.Pass {
			t.Fatalf("result %q reason %q", o.Result, o.Reason)
		}
		before, err := os.ReadFile(marker)
		if err != nil {
			t.Fatalf("the daemon never ran: %v", err)
		}
		// The daemon rewrote the file every 50 ms; a second later it must
		// still hold the same bytes, with no process left writing it.
		time.Sleep(time.Second)
		after, _ := os.ReadFile(marker)
		if string(before) != string(after) {
			t.Errorf("the daemon outlived the sandbox: %q then %q", before, after)
		}
	})
}

// TestToolchainPaths: the PATH entries outside the system folders are
// shared with the toolchain above their bin or shims folder, never a
// home folder or a system folder as a whole, and a home's tool manager
// only.
func TestToolchainPaths(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opt := mk(filepath.Join(root, "opt", "node", "bin"))
	got := toolchainPaths([]string{"PATH=/usr/bin:/bin:relative:" + opt + ":/no/such/dir"})
	want := []string{opt, filepath.Dir(opt)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("toolchainPaths = %v, want %v", got, want)
	}
	if got := nested([]string{"/a/b/c", "/a/b", "/a/bc", "/x"}); strings.Join(got, ",") != "/a/b,/a/bc,/x" {
		t.Errorf("nested = %v", got)
	}
}

// TestStagedEtc: the attempts' /etc is made once and found again by its
// fingerprint; a folder of that name that someone else may write is not
// used.
func TestStagedEtc(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	if layerBase() != tmp {
		t.Skipf("the temporary folder %s cannot be walked by others", tmp)
	}
	first, err := stagedEtc()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(first, "passwd")); err != nil {
		t.Errorf("no passwd in the staged /etc: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(first, "shadow")); err == nil {
		t.Errorf("shadow in the staged /etc")
	}
	again, err := stagedEtc()
	if err != nil || again != first {
		t.Errorf("second stagedEtc = %q, %v; want %q again", again, err, first)
	}
	if err := os.Chmod(first, 0o777); err != nil {
		t.Fatal(err)
	}
	if ownedAndClosed(first) {
		t.Errorf("a world-writable staged /etc is trusted")
	}
	// The process remembers the folder, but not past a change of its
	// owner or mode, nor past its removal.
	if got, err := stagedEtc(); err == nil && got == first {
		t.Errorf("stagedEtc still gives the world-writable %s", first)
	}
	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}
	made, err := stagedEtc()
	if err != nil || made != first {
		t.Fatalf("after its removal stagedEtc = %q, %v; want %q made again", made, err, first)
	}
	if _, err := os.Stat(filepath.Join(made, "passwd")); err != nil {
		t.Errorf("no passwd in the staged /etc made again: %v", err)
	}
}
