package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/internal/golden"
)

// TestReplayHoldsNoPrivilege: the command that `flakegate replay` runs
// holds no capability, gains no privilege, runs under the seccomp filter
// and, when flakegate is root, as nobody; it cannot mount, unshare or
// touch the keyring, and cannot read /etc/shadow.
func TestReplayHoldsNoPrivilege(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI=true")
		}
		t.Skip("bwrap not installed")
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "fixture"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("f"))
	script := `grep -E '^(Uid|CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
mount -t tmpfs none /tmp 2>/dev/null && echo BROKE mount
unshare -U true 2>/dev/null && echo BROKE unshare
test -e /etc/shadow && echo BROKE shadow
python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); l.syscall.restype=ctypes.c_long; sys.exit(0 if l.syscall(248, b"user", b"fg", b"x", 1, -3) > 0 else 1)' 2>/dev/null && echo BROKE add_key
true`
	out, errOut, code := runCLI(t, "", "replay", "--workdir", work, "--seed", "1", "--fixture", "fixture",
		"--expect-fixture-sha256", hex.EncodeToString(sum[:]), "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q inside the replay:\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(out, "Uid:\t65534") {
		t.Errorf("replay run by root does not run the command as nobody:\n%s", out)
	}
	if strings.Contains(out, outputPrefix+"BROKE") {
		t.Errorf("a privileged act worked inside the replay:\n%s", out)
	}
}

func TestReplayCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	work := t.TempDir()
	mustWrite := func(rel, content string) {
		t.Helper()
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("tests/fixtures/retry.json", `{"budget": 3}`)
	mustWrite("tests/fixtures/tree/a.txt", "a")
	mustWrite("tests/fixtures/tree/sub/b.txt", "b")
	mustWrite("tests/props/test_retry.py", "# property")
	fileSum := sha256.Sum256([]byte(`{"budget": 3}`))
	fileSHA := hex.EncodeToString(fileSum[:])
	treeSHA, err := digest.Path(context.Background(), filepath.Join(work, "tests/fixtures/tree"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	// replay returns the args of a replay of the fixture file in work.
	replay := func(extra ...string) []string {
		return append([]string{"replay", "--workdir", work, "--seed", "1402",
			"--expect-fixture-sha256", fileSHA, "--fixture", "tests/fixtures/retry.json"}, extra...)
	}
	sh := func(script string, args ...string) []string {
		return append([]string{"--", "sh", "-c", script, "sh"}, args...)
	}

	type testCase struct {
		name   string
		args   []string
		code   int
		out    string // substring of stdout
		errOut string // substring of stderr
		runs   int    // lines the command appended to counter; -1 to skip
	}
	run := func(t *testing.T, tc testCase) {
		out, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
		}
		if !strings.Contains(out, tc.out) {
			t.Errorf("stdout %q lacks %q", out, tc.out)
		}
		if !strings.Contains(errOut, tc.errOut) {
			t.Errorf("stderr %q lacks %q", errOut, tc.errOut)
		}
		if code != ExitUsage && strings.Count(errOut, "\n") != 1 {
			t.Errorf("stderr has %d lines, want one line saying what happened: %q", strings.Count(errOut, "\n"), errOut)
		}
		if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
			t.Errorf("stack trace on stderr: %s", errOut)
		}
		if tc.runs >= 0 {
			if n := strings.Count(out, outputPrefix+"flakegate-test-ran\n"); n != tc.runs {
				t.Errorf("the command ran %d times, want %d", n, tc.runs)
			}
		}
	}
	count := "echo flakegate-test-ran; " // counted in stdout
	for _, tc := range []testCase{
		{name: "pass", args: replay(sh(count+`echo "seed=$1"`, "{seed}")...), code: 0, out: "seed=1402\n", errOut: "replay: pass: sh exited 0", runs: 1},
		{name: "fail runs once, never retries", args: replay(sh(count + "exit 1")...), code: 1, errOut: "replay: fail: sh exited 1", runs: 1},
		{name: "runs in the workdir, seen at the sandbox's tree path", args: replay(sh("pwd; cat tests/fixtures/retry.json")...), code: 0, out: outputPrefix + sandbox.TreeMount + "\n" + outputPrefix + "{\"budget\": 3}"},
		{name: "never writes the workdir", args: replay(sh("echo x > written-by-the-test; rm tests/props/test_retry.py")...), code: 0, runs: -1},
		{name: "placeholders", args: replay(append([]string{"--property", "./tests/props//test_retry.py", "--samples", "200"},
			sh(`echo "$@"; test -f "$1" && test -f "$3"`, "{path}", "--hypothesis-seed={seed}", "{fixture}", "{samples}")...)...),
			code: 0, out: "tests/props/test_retry.py --hypothesis-seed=1402 tests/fixtures/retry.json 200\n"},
		{name: "string seed", args: []string{"replay", "--workdir", work, "--seed", "nightly-3", "--expect-fixture-sha256", fileSHA,
			"--fixture", "tests/fixtures/retry.json", "--", "echo", "{seed}"}, code: 0, out: "nightly-3\n"},
		{name: "integer seed kept exactly", args: []string{"replay", "--workdir", work, "--seed", "123456789012345678901234567890",
			"--expect-fixture-sha256", fileSHA, "--fixture", "tests/fixtures/retry.json", "--", "echo", "{seed}"}, code: 0, out: "123456789012345678901234567890\n"},
		{name: "no -- before the command", args: replay("echo", "-n", "x"), code: 0, out: "x"},
		{name: "folder fixture", args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", treeSHA,
			"--fixture", "tests/fixtures/tree", "--", "true"}, code: 0, errOut: "replay: pass"},
		{name: "fixture digest differs: the command does not run",
			args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", treeSHA, "--fixture", "tests/fixtures/retry.json", "--", "sh", "-c", count},
			code: 3, errOut: "replay: incomplete: fixture tests/fixtures/retry.json has digest " + fileSHA + ", expected " + treeSHA, runs: 0},
		{name: "fixture missing", args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", fileSHA,
			"--fixture", "tests/fixtures/gone.json", "--", "sh", "-c", count}, code: 3, errOut: "replay: incomplete: fixture tests/fixtures/gone.json not found in " + work, runs: 0},
		{name: "no fixture to check", args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", fileSHA,
			"--", "sh", "-c", count}, code: 3, errOut: "replay: incomplete: no --fixture given", runs: 0},
		{name: "other exit code", args: replay(sh("exit 2")...), code: 3, errOut: "replay: incomplete: sh after", runs: -1},
		{name: "other exit code reason", args: replay(sh("exit 4")...), code: 3, errOut: "exit code 4", runs: -1},
		{name: "crash", args: replay(sh("kill -ABRT $$")...), code: 3, errOut: "killed by SIGABRT", runs: -1},
		{name: "timeout", args: replay(append([]string{"--timeout", "200ms"}, sh("sleep 30")...)...), code: 3, errOut: "replay: incomplete: sh was killed after", runs: -1},
		{name: "timeout reason", args: replay(append([]string{"--timeout", "200ms"}, sh("sleep 30")...)...), code: 3, errOut: "wall budget 200ms exceeded", runs: -1},
		{name: "missing binary", args: replay("--", "flakegate-no-such-binary-x9"), code: 3, errOut: `flakegate-no-such-binary-x9': No such file or directory`, runs: -1},
		{name: "missing binary without the sandbox", args: replay("--sandbox", "none", "--", "flakegate-no-such-binary-x9"), code: 3, errOut: `cannot start "flakegate-no-such-binary-x9": not found in PATH`, runs: -1},
		{name: "the sandbox hides the host's files", args: replay(sh("test ! -e " + outside)...), code: 0, runs: -1},
		{name: "--sandbox none does not", args: replay(append([]string{"--sandbox", "none"}, sh("test -e "+outside)...)...), code: 0, runs: -1},
		{name: "bad --sandbox", args: replay("--sandbox", "docker", "--", "true"), code: 2, errOut: "--sandbox", runs: -1},
		{name: "secret --env", args: replay("--env", "PGPASSWORD", "--", "true"), code: 2, errOut: "secret", runs: -1},
		{name: "no test ran", args: replay(sh("echo 'no tests ran in 0.01s'")...), code: 3, errOut: "no test executed", runs: -1},

		{name: "no command", args: replay(), code: 2, errOut: "no command given", runs: -1},
		{name: "missing workdir flag", args: []string{"replay", "--seed", "1", "--expect-fixture-sha256", fileSHA, "--", "true"}, code: 2, errOut: "--workdir is required", runs: -1},
		{name: "missing seed", args: []string{"replay", "--workdir", work, "--expect-fixture-sha256", fileSHA, "--", "true"}, code: 2, errOut: "--seed is required", runs: -1},
		{name: "missing digest", args: []string{"replay", "--workdir", work, "--seed", "1", "--", "true"}, code: 2, errOut: "--expect-fixture-sha256 is required", runs: -1},
		{name: "bad seed", args: []string{"replay", "--workdir", work, "--seed", "a b", "--expect-fixture-sha256", fileSHA, "--", "true"}, code: 2, errOut: `seed "a b"`, runs: -1},
		{name: "workdir missing", args: []string{"replay", "--workdir", filepath.Join(work, "nope"), "--seed", "1", "--expect-fixture-sha256", fileSHA, "--", "true"}, code: 2, errOut: "--workdir: no such file or directory", runs: -1},
		{name: "workdir is a file", args: []string{"replay", "--workdir", filepath.Join(work, "tests/props/test_retry.py"), "--seed", "1", "--expect-fixture-sha256", fileSHA, "--", "true"}, code: 2, errOut: "--workdir: not a folder", runs: -1},
		{name: "absolute fixture", args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", fileSHA, "--fixture", filepath.Join(work, "tests/fixtures/retry.json"), "--", "true"}, code: 2, errOut: "want a path relative to --workdir", runs: -1},
		{name: "fixture outside the workdir", args: []string{"replay", "--workdir", work, "--seed", "1", "--expect-fixture-sha256", fileSHA, "--fixture", "../x", "--", "true"}, code: 2, errOut: `--fixture "../x"`, runs: -1},
		{name: "unknown placeholder", args: replay("--", "echo", "{sede}"), code: 2, errOut: "unknown placeholder {sede}", runs: -1},
		{name: "placeholder without its flag", args: replay("--", "echo", "{samples}"), code: 2, errOut: "Try: give the flag that fills it", runs: -1},
		{name: "negative timeout", args: replay("--timeout", "-1s", "--", "true"), code: 2, errOut: "--timeout -1s", runs: -1},
		{name: "bad timeout", args: replay("--timeout", "soon", "--", "true"), code: 2, errOut: "invalid argument", runs: -1},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// Whatever the command wrote went with its overlay (or, without one,
	// is reported here as the folder it changed).
	if _, err := os.Stat(filepath.Join(work, "written-by-the-test")); err == nil && os.Geteuid() == 0 {
		t.Errorf("replay as root wrote the workdir")
	}
	if _, err := os.Stat(filepath.Join(work, "tests/props/test_retry.py")); err != nil && os.Geteuid() == 0 {
		t.Errorf("replay as root removed a file of the workdir: %v", err)
	}
}

// TestReplayInterrupt runs the real binary and interrupts it mid-replay:
// the replay is incomplete (exit 3) and the command's process group goes
// with it.
func TestReplayInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the flakegate binary")
	}
	bin := filepath.Join(t.TempDir(), "flakegate")
	build := exec.Command("go", "build", "-o", bin, "github.com/flakegate/flakegate/cmd/flakegate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "fx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("x"))
	pidFile := filepath.Join(work, "pid")
	// Without the sandbox, so that the command's pid is the host's.
	cmd := exec.Command(bin, "replay", "--sandbox", "none", "--workdir", work, "--seed", "1", "--fixture", "fx",
		"--expect-fixture-sha256", hex.EncodeToString(sum[:]), "--", "sh", "-c", "echo $$ > pid.tmp; mv pid.tmp pid; sleep 60")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the replayed command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitInternal {
		t.Fatalf("exit %d (%v), want %d; stderr: %s", code, err, ExitInternal, errOut.String())
	}
	if !strings.Contains(errOut.String(), "replay: incomplete: sh was killed after") || !strings.Contains(errOut.String(), "cancelled") {
		t.Errorf("stderr = %q, want an incomplete replay cancelled", errOut.String())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The group was killed before flakegate exited; the shell is gone, or a
	// zombie of pid 1 in a container that does not reap.
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z' {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the replayed command outlived flakegate: %s", stat)
		}
	}
}

func TestReplayHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "replay", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "replay-help.golden", []byte(out))
}

func TestNewCmdReplayFlags(t *testing.T) {
	req := []string{"--workdir", "../base", "--seed", "1402", "--expect-fixture-sha256", "abc"}
	args := func(more ...string) []string { return append(append([]string{}, req...), more...) }
	testParse(t, NewCmdReplay, []parseCase[ReplayOptions]{
		{name: "required flags and a command", args: args("--", "pytest", "-q", "{path}"), want: func(t *testing.T, o *ReplayOptions) {
			same(t, "Workdir", o.Workdir, "../base")
			same(t, "Seed", o.Seed, "1402")
			same(t, "ExpectFixtureSHA256", o.ExpectFixtureSHA256, "abc")
			same(t, "Fixture", o.Fixture, "")
			same(t, "Property", o.Property, "")
			same(t, "Samples", o.Samples, 0)
			same(t, "Timeout", o.Timeout, time.Duration(0))
			same(t, "Argv", o.Argv, []string{"pytest", "-q", "{path}"})
		}},
		{name: "every flag", args: args("--fixture", "tests/fixtures/retry", "--property", "tests/props/p.py",
			"--samples", "200", "--timeout", "1m30s", "--", "sh", "-c", "exit 0"), want: func(t *testing.T, o *ReplayOptions) {
			same(t, "Fixture", o.Fixture, "tests/fixtures/retry")
			same(t, "Property", o.Property, "tests/props/p.py")
			same(t, "Samples", o.Samples, 200)
			same(t, "Timeout", o.Timeout, 90*time.Second)
			same(t, "Argv", o.Argv, []string{"sh", "-c", "exit 0"})
		}},
		{name: "flags after the command belong to it", args: args("pytest", "--seed=7", "--timeout", "1s"), want: func(t *testing.T, o *ReplayOptions) {
			same(t, "Seed", o.Seed, "1402")
			same(t, "Timeout", o.Timeout, time.Duration(0))
			same(t, "Argv", o.Argv, []string{"pytest", "--seed=7", "--timeout", "1s"})
		}},
		{name: "no workdir", args: []string{"--seed", "1", "--expect-fixture-sha256", "h", "--", "x"}, errText: "--workdir is required"},
		{name: "no seed", args: []string{"--workdir", "d", "--expect-fixture-sha256", "h", "--", "x"}, errText: "--seed is required"},
		{name: "no fixture digest", args: []string{"--workdir", "d", "--seed", "1", "--", "x"}, errText: "--expect-fixture-sha256 is required"},
		{name: "no command", args: args(), errText: "no command given"},
		{name: "negative samples", args: args("--samples", "-1", "--", "x"), errText: "--samples -1"},
		{name: "negative timeout", args: args("--timeout", "-5s", "--", "x"), errText: "--timeout -5s"},
		{name: "bad duration", args: args("--timeout", "soon", "--", "x"), errText: "invalid argument", errCode: "cobra"},
		{name: "a suite's test", args: []string{"--repo", ".", "--rev", "HEAD", "--suite", "./...", "--property", "a/a_test.go", "--name", "TestA", "--seed", "3"},
			want: func(t *testing.T, o *ReplayOptions) {
				same(t, "Suite", o.Suite, "./...")
				same(t, "Property", o.Property, "a/a_test.go")
				same(t, "Name", o.Name, "TestA")
			}},
		{name: "a suite without a name", args: []string{"--repo", ".", "--rev", "HEAD", "--suite", "./...", "--property", "a/a_test.go", "--seed", "3"}, errText: "--suite needs --name"},
		{name: "a suite without --repo", args: args("--suite", "tests", "--", "x"), errText: "--suite goes with --repo and --rev"},
	})
}
