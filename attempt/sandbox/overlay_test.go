package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// testLimits are small limits for the sandbox's tests.
var testLimits = Limits{Memory: 512 << 20, Pids: 256, Tmp: 64 << 20, Disk: 64 << 20}

// TestMain makes this test binary its own sandbox helper, as main does.
func TestMain(m *testing.M) {
	MaybeOverlayExec()
	os.Exit(m.Run())
}

// open is the sandbox s describes, made by New as the check makes its
// own, and closed when the test ends.
func open(t testing.TB, s Sandbox) *Sandbox {
	sb := New(s)
	t.Cleanup(sb.Close)
	return sb
}

// needOverlay probes sb for a tree beside dir and skips (fails under
// CI=true) when attempts cannot run on overlays as an unprivileged
// identity (flakegate not root, or the kernel lacks a feature).
func needOverlay(t *testing.T, sb *Sandbox, dir string, env []string) {
	t.Helper()
	err := sb.Probe(context.Background(), dir, env, true)
	if err == nil && (!sb.Overlay || !sb.Level.Root) {
		err = fmt.Errorf("overlay %v, root %v: %v", sb.Overlay, sb.Level.Root, sb.Level.Missing)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("overlay unavailable under CI=true: %v", err)
		}
		t.Skipf("overlay unavailable: %v", err)
	}
}

// hostMounts returns the lines of this process's mountinfo naming path.
func hostMounts(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, path) {
			out = append(out, l)
		}
	}
	return out
}

// signalWriter calls fn once, when the output first contains word.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	word string
	fn   func()
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.word)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.word) {
		w.fn()
	}
	return len(p), nil
}

// TestOverlayAttempt: an attempt on an overlay sees the tree, writes,
// deletes and modifies files in it, and none of it reaches the tree or
// the next attempt; the overlay is never mounted in flakegate's own mount
// namespace, and its layer folder is gone after the attempt.
func TestOverlayAttempt(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	gate := filepath.Join(root, "gate")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{filepath.Join(tree, "sub"), gate, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp) // the layer folders go here
	for _, d := range []string{filepath.Dir(root), root, tmp} {
		if err := os.Chmod(d, 0o755); err != nil { // the unprivileged identity walks into the layers
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"keep.txt": "keep\n", "mod.txt": "old\n", "sub/x.txt": "x\n"} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, RW: []string{gate}, Home: "/root", Limits: testLimits})
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	needOverlay(t, sb, root, env)

	// The first attempt changes the tree, says so, then waits for the
	// test to look at the host's mounts while it still runs.
	var during []string
	var layers []os.DirEntry
	w := &signalWriter{word: "changed", fn: func() {
		during = hostMounts(t, tree)
		layers, _ = os.ReadDir(tmp)
		os.WriteFile(filepath.Join(gate, "go"), nil, 0o644) //nolint:errcheck // the attempt times out without it
	}}
	script := `set -e; echo new > new.txt; rm keep.txt; echo new > mod.txt; rm -r sub; mkdir -p d/e; echo y > d/e/y
echo changed; while [ ! -e ` + gate + `/go ]; do sleep 0.05; done; cat mod.txt; ls`
	o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: sb, Output: w, WallBudget: time.Minute})
	if o.Result != attempt.Pass || !strings.Contains(o.Tail, "new\n") {
		t.Fatalf("first attempt: %s (%s), output:\n%s", o.Result, o.Reason, o.Tail)
	}
	if len(during) != 0 {
		t.Errorf("the overlay is mounted in flakegate's mount namespace: %q", during)
	}
	if len(layers) == 0 {
		t.Errorf("no layer folder during the attempt")
	}
	for _, l := range layers {
		if !strings.HasPrefix(l.Name(), layerPrefix) && !strings.HasPrefix(l.Name(), "flakegate-etc-") && !strings.HasPrefix(l.Name(), "flakegate-root-") {
			t.Errorf("layer folders during the attempt: %v", layers)
		}
	}
	if got := hostMounts(t, tree); len(got) != 0 {
		t.Errorf("mounted after the attempt: %q", got)
	}
	// The attempt's layer folder is gone; the next attempt's standby and
	// the staged /etc stay until the sandbox is closed.
	sb.Close()
	left, _ := os.ReadDir(tmp)
	for _, l := range left {
		if !strings.HasPrefix(l.Name(), "flakegate-etc-") && !strings.HasPrefix(l.Name(), "flakegate-root-") { // the staged /etc and the (empty) folder of the roots are kept for the next run
			t.Errorf("layer folder left after the attempt: %v", l.Name())
		}
	}
	want := "keep.txt\nmod.txt: old\nsub/x.txt\n"
	if got := listTree(t, tree); got != want {
		t.Errorf("the tree after the attempt:\n%s\nwant:\n%s", got, want)
	}

	// The next attempt sees the tree as it was.
	o = attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "cat mod.txt keep.txt sub/x.txt; test ! -e new.txt && test ! -e d"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
	if o.Result != attempt.Pass || o.Tail != "old\nkeep\nx\n" {
		t.Errorf("second attempt: %s (%s), output %q", o.Result, o.Reason, o.Tail)
	}
}

// listTree lists the files of dir, with the content of mod.txt.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if rel == "mod.txt" {
			body, _ := os.ReadFile(p)
			b.WriteString(": " + string(body))
		} else {
			b.WriteString("\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestOverlayHelperRefusesHostNamespace: the helper run without a new
// mount namespace mounts nothing.
func TestOverlayHelperRefusesHostNamespace(t *testing.T) {
	tree := t.TempDir()
	layer, err := newLayer()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(layer)
	cmd, err := helperCommand(&helperSpec{Layer: layer, Tree: tree, Overlay: true, UID: -1, GID: -1, Disk: 1 << 20, Tmp: 1 << 20}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr.Unshareflags = 0
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in a private mount namespace") {
		t.Errorf("helper in the host namespace: %v, %s", err, out)
	}
	if got := hostMounts(t, tree); len(got) != 0 {
		t.Errorf("mounted: %q", got)
	}
}

// SweepLayers removes the layer folders of flakegates that are gone, and
// only those: not this process's, not a live process's, not a folder
// whose name holds no pid.
func TestSweepLayers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		live.Process.Kill()
		live.Wait()
	}()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(d, "upper", "deep"), 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	keep := []string{
		mk(fmt.Sprintf("flakegate-overlay-%d-1", os.Getpid())),
		mk(fmt.Sprintf("flakegate-overlay-%d-2", live.Process.Pid)),
		mk("flakegate-overlay-nopid-3"),
		mk("other-4"),
	}
	gone := mk(fmt.Sprintf("flakegate-overlay-%d-5", dead.Process.Pid))
	// At least the one here: it also sweeps /tmp, where other tests of
	// a busy machine may have left a dead flakegate's folders.
	if n := SweepLayers(); n < 1 {
		t.Errorf("SweepLayers removed %d folders, want at least 1", n)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("%s (a dead flakegate's) is still there", gone)
	}
	for _, d := range keep {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// TestOverlayAttemptLongArgv: an attempt whose command line is longer
// than one argument may be (128 KiB: a pytest batch of a few thousand
// long node ids) runs, every argument intact, with /dev/null as its
// standard input. Before the helper took a long spec on its standard
// input, starting it failed with "argument list too long", and every test
// of such a batch was INCOMPLETE.
func TestOverlayAttemptLongArgv(t *testing.T) {
	bwrap := needBwrap(t)
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{tree, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	for _, d := range []string{filepath.Dir(root), root, tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	needOverlay(t, sb, root, env)
	argv := []string{"sh", "-c", `n=0; sum=0; for a in "$@"; do n=$((n+1)); sum=$((sum+${#a})); done; echo "args $n bytes $sum stdin $(readlink /proc/self/fd/0)"`, "sh"}
	for i := range 3000 {
		argv = append(argv, fmt.Sprintf("tests/test_version.py::TestVersion::test_valid_versions[%04d-%s]", i, strings.Repeat("x", 40)))
	}
	total := 0
	for _, a := range argv[4:] {
		total += len(a)
	}
	if total < 128<<10 {
		t.Fatalf("the command line is only %d bytes", total)
	}
	want := fmt.Sprintf("args 3000 bytes %d stdin /dev/null", total)
	// As a standby's exec line, and as the argv of a helper started for
	// the attempt (an attempt with tree files, the known answers of a
	// batch, has no standby).
	for _, files := range [][]TreeFile{nil, {{Rel: "known.txt", Data: []byte("k\n")}}} {
		one := *sb
		one.TreeFiles = files
		o := attempt.Run(context.Background(), attempt.Command{Argv: argv, Dir: tree, Env: env, Sandbox: &one, WallBudget: time.Minute})
		if o.Result != attempt.Pass || !strings.Contains(o.Tail, want) {
			t.Fatalf("tree files %d: %s (%s), want %q in the output:\n%s", len(files), o.Result, o.Reason, want, o.Tail)
		}
	}
}
