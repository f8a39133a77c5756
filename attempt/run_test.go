package attempt

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testMarkers are the markers the attempt's tests look for: those of go
// test and pytest (evidence.NoTestMarkers, which this package cannot
// import).
var testMarkers = []string{"testing: warning: no tests to run", "[no tests to run]", "no tests ran"}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prop.sh"), []byte("#!/bin/sh\necho relative to Dir\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name    string
		cmd     Command
		result  string
		exit    int
		signal  string
		reason  string // substring of Outcome.Reason; "" means Reason must be empty
		tail    string // substring of Outcome.Tail
		notTail string // must not be in Outcome.Tail
	}
	run := func(t *testing.T, tc testCase) {
		o := Run(context.Background(), tc.cmd)
		if o.Result != tc.result || o.ExitCode != tc.exit || o.Signal != tc.signal {
			t.Errorf("Run(%q) = result %q exit %d signal %q, want %q %d %q (reason %q, tail %q)",
				tc.cmd.Argv, o.Result, o.ExitCode, o.Signal, tc.result, tc.exit, tc.signal, o.Reason, o.Tail)
		}
		if tc.reason == "" && o.Reason != "" || !strings.Contains(o.Reason, tc.reason) {
			t.Errorf("Reason = %q, want %q", o.Reason, tc.reason)
		}
		if !strings.Contains(o.Tail, tc.tail) {
			t.Errorf("Tail = %q, want it to contain %q", o.Tail, tc.tail)
		}
		if tc.notTail != "" && strings.Contains(o.Tail, tc.notTail) {
			t.Errorf("Tail = %q, want no %q", o.Tail, tc.notTail)
		}
		if o.Started.IsZero() || o.Wall < 0 {
			t.Errorf("Started = %v, Wall = %v", o.Started, o.Wall)
		}
	}
	sh := func(script string) []string { return []string{"sh", "-c", script} }
	for _, tc := range []testCase{
		{name: "pass", cmd: Command{Argv: sh("echo hello")}, result: Pass, exit: 0, tail: "hello\n"},
		{name: "fail", cmd: Command{Argv: sh("echo boom; exit 1")}, result: Fail, exit: 1, tail: "boom"},
		{name: "exit 2 is an error", cmd: Command{Argv: sh("exit 2")}, result: Errored, exit: 2, reason: "exit code 2"},
		{name: "exit 5 is an error", cmd: Command{Argv: sh("exit 5")}, result: Errored, exit: 5, reason: "exit code 5"},
		{name: "signal is an error", cmd: Command{Argv: sh("kill -SEGV $$")}, result: Errored, exit: -1, signal: "SIGSEGV", reason: "killed by SIGSEGV"},
		{name: "missing binary", cmd: Command{Argv: []string{"flakegate-no-such-binary-x9", "a"}}, result: Errored, exit: -1, reason: "not found in PATH"},
		{name: "relative binary is relative to Dir", cmd: Command{Argv: []string{"./prop.sh"}, Dir: dir}, result: Pass, tail: "relative to Dir"},
		{name: "missing relative binary", cmd: Command{Argv: []string{"./no-such-script"}, Dir: dir}, result: Errored, exit: -1, reason: "no such file"},
		{name: "missing directory", cmd: Command{Argv: sh("true"), Dir: filepath.Join(dir, "nope")}, result: Errored, exit: -1, reason: "cannot start"},
		{name: "empty argv", cmd: Command{}, result: Errored, exit: -1, reason: "empty"},
		{name: "stdout and stderr both captured", cmd: Command{Argv: sh("echo out; echo err >&2")}, result: Pass, tail: "out\nerr\n"},
		{name: "stdin is empty", cmd: Command{Argv: sh("if read x; then exit 3; fi")}, result: Pass},
		{name: "runs in Dir", cmd: Command{Argv: sh("pwd"), Dir: dir}, result: Pass, tail: dir},
		{name: "uses Env", cmd: Command{Argv: sh("echo seed=$FG_SEED"), Env: []string{"FG_SEED=1402"}}, result: Pass, tail: "seed=1402"},
		{name: "go test no-test marker", cmd: Command{Argv: sh("echo 'testing: warning: no tests to run'; echo PASS"), NoTestMarkers: testMarkers},
			result: Errored, exit: 0, reason: "no test executed", tail: "PASS"},
		{name: "pytest no-test marker", cmd: Command{Argv: sh("echo '== no tests ran in 0.01s =='"), NoTestMarkers: testMarkers},
			result: Errored, exit: 0, reason: "no test executed"},
		{name: "marker split across writes", cmd: Command{Argv: sh("printf 'no tes'; sleep 0.1; printf 'ts ran\\n'"), NoTestMarkers: testMarkers},
			result: Errored, exit: 0, reason: "no test executed"},
		{name: "marker early then much output", cmd: Command{Argv: sh("echo 'no tests ran'; head -c 100000 /dev/zero | tr '\\0' x"), NoTestMarkers: testMarkers, TailBytes: 64},
			result: Errored, exit: 0, reason: "no test executed", notTail: "no tests ran"},
		{name: "marker with a failing exit stays a fail", cmd: Command{Argv: sh("echo 'no tests ran'; exit 1"), NoTestMarkers: testMarkers}, result: Fail, exit: 1},
		{name: "custom markers", cmd: Command{Argv: sh("echo 'collected 0 items'"), NoTestMarkers: []string{"collected 0 items"}},
			result: Errored, exit: 0, reason: "no test executed"},
		{name: "empty marker list disables the check", cmd: Command{Argv: sh("echo 'no tests ran'"), NoTestMarkers: []string{}}, result: Pass},
		{name: "no markers: the attempt knows no framework", cmd: Command{Argv: sh("echo 'no tests ran'")}, result: Pass},
		{name: "timeout", cmd: Command{Argv: sh("echo started; sleep 30"), WallBudget: 200 * time.Millisecond},
			result: Timeout, exit: -1, signal: "SIGKILL", reason: "wall budget 200ms exceeded", tail: "started"},
		{name: "within budget", cmd: Command{Argv: sh("exit 1"), WallBudget: time.Minute}, result: Fail, exit: 1},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestRunContextCancel(t *testing.T) {
	type testCase struct {
		name   string
		cancel time.Duration // -1: cancelled before Run
		reason string
	}
	run := func(t *testing.T, tc testCase) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if tc.cancel < 0 {
			cancel()
		} else {
			time.AfterFunc(tc.cancel, cancel)
		}
		o := Run(ctx, Command{Argv: []string{"sleep", "30"}})
		if o.Result != Timeout || !strings.Contains(o.Reason, tc.reason) {
			t.Errorf("Run = %q (%q), want %q with %q", o.Result, o.Reason, Timeout, tc.reason)
		}
		if o.Wall > 20*time.Second {
			t.Errorf("Wall = %v: the cancel did not end the command", o.Wall)
		}
	}
	for _, tc := range []testCase{
		{name: "while running", cancel: 100 * time.Millisecond, reason: "cancelled: context canceled"},
		{name: "before start", cancel: -1, reason: "cancelled before start"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRunKillsTheGroup checks that nothing a command spawned outlives the
// attempt: a background grandchild, a double-forked one (reparented to
// init but still in the group), after a timeout and after a normal exit.
func TestRunKillsTheGroup(t *testing.T) {
	type testCase struct {
		name   string
		script string // writes the pids to kill to files p1, p2
		budget time.Duration
		result string
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		o := Run(context.Background(), Command{Argv: []string{"sh", "-c", tc.script}, Dir: dir, WallBudget: tc.budget})
		if o.Result != tc.result {
			t.Fatalf("Run = %q (%q), want %q", o.Result, o.Reason, tc.result)
		}
		for _, name := range []string{"p1", "p2"} {
			pid := readPid(t, filepath.Join(dir, name))
			waitGone(t, pid)
		}
	}
	for _, tc := range []testCase{
		{name: "timeout", budget: 300 * time.Millisecond, result: Timeout,
			script: "sleep 300 & echo $! > p1; (sleep 300 & echo $! > p2); sleep 300"},
		{name: "leader exits, children stay", result: Pass,
			script: "sleep 300 & echo $! > p1; (sleep 300 & echo $! > p2); exit 0"},
		{name: "leader fails, children stay", result: Fail,
			script: "sleep 300 & echo $! > p1; (sleep 300 & echo $! > p2); exit 1"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRunEscapedProcess: a process that leaves the group (setsid) cannot be
// killed with it, and it keeps the output pipe open; Run must still return.
func TestRunEscapedProcess(t *testing.T) {
	dir := t.TempDir()
	done := make(chan Outcome, 1)
	go func() {
		done <- Run(context.Background(), Command{Argv: []string{"sh", "-c", "setsid sleep 300 & echo $! > p1; echo bye"}, Dir: dir})
	}()
	var o Outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return while an escaped process held its output pipe")
	}
	pid := readPid(t, filepath.Join(dir, "p1"))
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if o.Result != Pass || !strings.Contains(o.Tail, "bye") {
		t.Errorf("Run = %q tail %q, want pass with \"bye\"", o.Result, o.Tail)
	}
}

func TestRunBoundedTail(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 50 MB")
	}
	const size = 50 << 20
	type testCase struct {
		name      string
		tailBytes int
		wantLen   int
	}
	run := func(t *testing.T, tc testCase) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		o := Run(context.Background(), Command{Argv: []string{"sh", "-c", "head -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' a; echo; echo END"}, TailBytes: tc.tailBytes})
		runtime.ReadMemStats(&after)
		if o.Result != Pass {
			t.Fatalf("Run = %q (%q)", o.Result, o.Reason)
		}
		if len(o.Tail) != tc.wantLen || !strings.HasSuffix(o.Tail, "a\nEND\n") {
			t.Errorf("Tail has %d bytes ending %q, want %d ending \"a\\nEND\\n\"", len(o.Tail), o.Tail[max(0, len(o.Tail)-10):], tc.wantLen)
		}
		if o.OutputBytes != size+5 {
			t.Errorf("OutputBytes = %d, want %d", o.OutputBytes, size+5)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("Run allocated %d bytes for 50 MB of output; the tail must stay bounded", alloc)
		}
	}
	for _, tc := range []testCase{
		{name: "default", tailBytes: 0, wantLen: DefaultTailBytes},
		{name: "100 bytes", tailBytes: 100, wantLen: 100},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestRunStreamsOutput(t *testing.T) {
	var buf bytes.Buffer
	o := Run(context.Background(), Command{Argv: []string{"sh", "-c", "seq 1 5000"}, TailBytes: 16, Output: &buf})
	var want []byte
	for i := 1; i <= 5000; i++ {
		want = strconv.AppendInt(want, int64(i), 10)
		want = append(want, '\n')
	}
	if o.Result != Pass || !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("streamed %d bytes (result %q), want the whole output of %d bytes", buf.Len(), o.Result, len(want))
	}
	if o.Tail != string(want[len(want)-16:]) {
		t.Errorf("Tail = %q, want %q", o.Tail, want[len(want)-16:])
	}
}

func TestRunLeaksNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	for _, c := range []Command{
		{Argv: []string{"true"}},
		{Argv: []string{"false"}},
		{Argv: []string{"flakegate-no-such-binary-x9"}},
		{Argv: []string{"sleep", "30"}, WallBudget: 50 * time.Millisecond},
	} {
		Run(context.Background(), c)
	}
	Run(ctx, Command{Argv: []string{"sleep", "30"}})
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

// waitGone waits until pid no longer runs (gone, or a zombie that nobody
// has reaped yet: in a container, pid 1 may not reap orphans).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived the attempt: %s", pid, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
