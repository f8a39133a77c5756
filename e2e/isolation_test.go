package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/storetest"
)

// TestCheckIsolationNone: with sandbox: {mode: none} every record and the
// summary say "isolation": "none", and --freeze-owner grants nothing: the
// SCHEDULER label stays, with the reason.
func TestCheckIsolationNone(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config(""), "sandbox:\n", "sandbox:\n  mode: none\n", 1)
	r := newRepo(t, files)
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	store := filepath.Join(r.dir, ".git", "flakegate")
	cr := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("%s", cr)
	}
	if cr.summary.Isolation != "none" {
		t.Errorf("summary isolation %q", cr.summary.Isolation)
	}
	for i, res := range cr.summary.Results {
		if res.Isolation != "none" || res.Owner != "" || !strings.Contains(res.Reason, "no freeze granted") {
			t.Errorf("result %d: isolation %q owner %q reason %q", i, res.Isolation, res.Owner, res.Reason)
		}
		// replay follows a config's mode: none only on its user's say.
		if !strings.HasSuffix(res.Reproduce, " --sandbox none") {
			t.Errorf("result %d: the reproduce line does not turn the sandbox off: %s", i, res.Reproduce)
		}
		raw, err := os.ReadFile(res.Record)
		if err != nil || !bytes.Contains(raw, []byte(`"isolation": "none"`)) {
			t.Errorf("record %d lacks \"isolation\": \"none\": %v", i, err)
		}
	}
	if !strings.Contains(cr.stderr, "isolation none") {
		t.Errorf("stderr does not say why no freeze was granted:\n%s", cr.stderr)
	}
	for name, data := range storetest.SnapshotDir(t, store) {
		if strings.HasSuffix(name, "ledger.json") && strings.Contains(data, "alice") {
			t.Errorf("a freeze was granted from an unsandboxed run: %s", data)
		}
		if strings.Contains(name, "/replay/") && strings.HasSuffix(name, ".json") {
			t.Errorf("an unsandboxed base result was cached: %s", name)
		}
	}

	// A sandboxed record says so.
	sb := newRepo(t, baseFiles(libOK))
	sb.candidate("docs", map[string]string{"README.md": "docs\n"})
	ok := sb.check("--base", "base", "--candidate", "docs")
	if ok.code != 0 || !strings.HasPrefix(ok.summary.Isolation, "bwrap+") || ok.summary.Results[0].Isolation != ok.summary.Isolation || ok.record(t, 0).Isolation != ok.summary.Isolation {
		t.Fatalf("sandboxed check: isolation %q\n%s", ok.summary.Isolation, ok)
	}
	if r := ok.summary.Results[0].Reproduce; strings.Contains(r, "--sandbox") {
		t.Errorf("a sandboxed check's reproduce line names --sandbox: %s", r)
	}
}

// TestCheckNoBwrap: without bwrap on PATH the check stops with exit 2,
// saying how to install it or opt out.
func TestCheckNoBwrap(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	bin := t.TempDir()
	for _, prog := range []string{"git", "sh"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr := r.checkEnv([]string{"PATH=" + bin}, "--base", "base", "--candidate", "docs")
	if cr.code != 2 || !strings.Contains(cr.stderr, "Error: ") || !strings.Contains(cr.stderr, "apt-get install bubblewrap") ||
		!strings.Contains(cr.stderr, "sandbox: {mode: none}") {
		t.Fatalf("want exit 2 naming the install line and the opt-out\n%s", cr)
	}
}

// TestCheckLockWait: a check that finds the store's lock held says who
// holds it, gives up with exit 3 at --lock-timeout, and ends promptly on
// SIGTERM; the store is unchanged either way.
func TestCheckLockWait(t *testing.T) {
	needBwrap(t)
	r := newRepo(t, baseFiles(libOK))
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 {
		t.Fatalf("%s", cr)
	}
	store := filepath.Join(r.dir, ".git", "flakegate")
	before := storetest.SnapshotDir(t, store)
	// Another process holds the ledger lock (flock(1) as a stand-in for a
	// stuck check).
	holder := exec.Command("flock", filepath.Join(store, "lock"), "sleep", "600")
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	waitFor(t, func() bool { return lockHeld(filepath.Join(store, "lock")) })

	start := time.Now()
	cr := r.check("--base", "base", "--candidate", "docs", "--lock-timeout", "2s")
	if cr.code != 3 || !strings.Contains(cr.stderr, "waiting for another check (pid ") || !strings.Contains(cr.stderr, "gave up after 2s") {
		t.Fatalf("want exit 3 after saying who holds the lock\n%s", cr)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the check took %s with a 2s lock timeout", d)
	}

	// SIGTERM while waiting ends the check at once.
	cmd := exec.Command(flakegateBin, "check", "--json", "--base", "base", "--candidate", "docs", "--lock-timeout", "10m")
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), "FG_STATE="+r.state)
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "waiting for another check") })
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGTERM did not end a check waiting for a lock")
	}
	if cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("exit %d after SIGTERM, want 3\n%s", cmd.ProcessState.ExitCode(), stderr.String())
	}
	after := storetest.SnapshotDir(t, store)
	for name, data := range before {
		if !strings.HasPrefix(name, "/records/") && after[name] != data {
			t.Errorf("%s changed while the check waited", name)
		}
	}
}

// lockHeld reports whether another open file holds a flock on path.
func lockHeld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for a condition")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuf is a bytes.Buffer written by a process and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCheckSharedPaths: sandbox.rw and sandbox.ro may not reach the
// repository or its git folder, and an rw folder must exist (exit 2).
func TestCheckSharedPaths(t *testing.T) {
	type testCase struct {
		name  string
		block func(r *repo) string
		err   string
	}
	run := func(t *testing.T, tc testCase) {
		r := newRepo(t, baseFiles(libOK))
		r.commit("config", map[string]string{"flakegate.yaml": strings.Replace(config(""), "sandbox:\n  rw: [\"@FG_STATE@\"]\n", tc.block(r), 1)})
		r.git("tag", "-f", "base")
		r.candidate("docs", map[string]string{"README.md": "docs\n"})
		cr := r.check("--base", "base", "--candidate", "docs")
		if cr.code != 2 || !strings.Contains(cr.stderr, tc.err) {
			t.Fatalf("want exit 2 with %q\n%s", tc.err, cr)
		}
	}
	for _, tc := range []testCase{
		{name: "rw inside .git", block: func(r *repo) string { return "sandbox:\n  rw: [\"" + r.dir + "/.git/flakegate\"]\n" }, err: "overlaps"},
		{name: "ro is the repository", block: func(r *repo) string { return "sandbox:\n  ro: [\"" + r.dir + "\"]\n" }, err: "overlaps"},
		{name: "rw missing", block: func(r *repo) string { return "sandbox:\n  rw: [\"" + r.state + "/nope\"]\n" }, err: "is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestCheckReplayLockDeadline: a check whose base replay waits for
// another holder of the replay lock (here flock(1) on the lock file of
// the key, in a ledger folder shared by two clones) gives up with exit 3
// after --lock-timeout plus the wall budget, saying what it waited for.
// A base attempt that timed out is never cached.
func TestCheckReplayLockDeadline(t *testing.T) {
	needBwrap(t)
	files := baseFiles(libOK)
	cfg := strings.Replace(config(""), "seeds: [11, 12]", "seeds: [11]", 1)
	files["flakegate.yaml"] = strings.Replace(cfg, "wall_budget: 1500ms", "wall_budget: 2s", 1)
	// The base attempt hangs until its wall budget; candidate attempts pass.
	// Every attempt sees its tree at one path: the base is told by its
	// README (each clone's candidate rewrites it).
	files["README.md"] = "base\n"
	files["props/prop.sh"] = "#!/bin/sh\ncase \"$(cat README.md)\" in base) sleep 60 ;; esac\n. ./src/lib.sh\nok \"$1\"\n"
	origin := newRepo(t, files)
	ledger := filepath.Join(t.TempDir(), "ledger")
	clone := func(name string) *repo {
		cl := &repo{t: t, dir: filepath.Join(t.TempDir(), name), state: origin.state}
		origin.git("clone", "-q", origin.dir, cl.dir)
		cl.git("checkout", "-q", "--detach", "base")
		cl.commit(name, map[string]string{"README.md": name + "\n"})
		return cl
	}
	first := clone("first").check("--base", "base", "--candidate", "HEAD", "--ledger", ledger)
	if first.code != 1 || first.record(t, 0).BaseSeedResult != "timeout" {
		t.Fatalf("first check: want a base timeout\n%s", first)
	}
	locks, _ := filepath.Glob(filepath.Join(ledger, "replay", "*.lock"))
	cached, _ := filepath.Glob(filepath.Join(ledger, "replay", "*.json"))
	if len(locks) != 1 || len(cached) != 0 {
		t.Fatalf("replay folder: locks %v, cached %v; want one lock and no cached timeout", locks, cached)
	}
	holder := exec.Command("flock", locks[0], "sleep", "600")
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	waitFor(t, func() bool { return lockHeld(locks[0]) })

	start := time.Now()
	cr := clone("second").check("--base", "base", "--candidate", "HEAD", "--ledger", ledger, "--lock-timeout", "1s")
	if cr.code != 3 || !strings.Contains(cr.stderr, "waiting for another check replaying") || !strings.Contains(cr.stderr, "gave up after 3s") {
		t.Errorf("want exit 3 giving up on the replay lock after 1s + 2s\n%s", cr)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("took %s", d)
	}
}
