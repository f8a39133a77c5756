package postgres

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// A consumer process is this test binary run again: TestMain runs
// ConsumerMains[$envMode] instead of the tests when envConsumer holds a
// DSN.
const (
	envConsumer = "FLAKEGATE_PG_CONSUMER_DSN"
	envMode     = "FLAKEGATE_PG_CONSUMER_MODE"
	envTries    = "FLAKEGATE_PG_CONSUMER_TRIES"
	envSeed     = "FLAKEGATE_PG_CONSUMER_SEED"
)

// ConsumerMains are the consumer loops by mode; cli_test.go adds "cli",
// which runs 'flakegate freeze consume'. A consumer prints "ready", waits
// for its standard input to close, then tries to skip the triple
// $envTries times, printing the runs left after every skip counted. It
// exits 3 on any error other than "no freeze left to skip".
var ConsumerMains = map[string]func(dsn string, tries int) int{"store": storeConsumer}

// ConsumerTries is how many skips a consumer process tries.
func ConsumerTries() int {
	n, _ := strconv.Atoi(os.Getenv(envTries))
	return n
}

func consumerMain(dsn string) int {
	// A consumer that hangs (a lost lock) must not hang the test run.
	time.AfterFunc(5*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "consumer: still running after 5 minutes")
		os.Exit(3)
	})
	fn, ok := ConsumerMains[os.Getenv(envMode)]
	if !ok {
		fmt.Fprintln(os.Stderr, "consumer: unknown mode", os.Getenv(envMode))
		return 3
	}
	return fn(dsn, ConsumerTries())
}

// WaitForStart prints "ready" and waits until the test closes standard
// input, so that every consumer starts at once.
func WaitForStart() {
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // the start signal is EOF
}

// storeConsumer skips storetest.Freeze($envSeed) through the store API.
func storeConsumer(dsn string, tries int) int {
	f := storetest.Freeze(flakegate.Seed(os.Getenv(envSeed)), 1)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := s.UseKey([]byte(pgtest.LedgerKey)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer s.Close()
	WaitForStart()
	by := "pid-" + strconv.Itoa(os.Getpid())
	for range tries {
		n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, by)
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println(n)
	}
	return 0
}

// RunConsumers starts procs consumer processes of the given mode on dsn,
// each trying tries skips, lets them go at once, and returns the runs left
// that the successful skips were told, sorted.
func RunConsumers(t *testing.T, dsn, mode string, procs, tries int) []int {
	t.Helper()
	type proc struct {
		cmd   *osexec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
		errb  *strings.Builder
	}
	ps := make([]*proc, procs)
	for i := range ps {
		cmd := osexec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envConsumer+"="+dsn, envMode+"="+mode,
			envTries+"="+strconv.Itoa(tries), envSeed+"=1402")
		p := &proc{cmd: cmd, errb: &strings.Builder{}}
		cmd.Stderr = p.errb
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // gone already when it passed
		p.out = bufio.NewScanner(stdout)
		ps[i] = p
	}
	for i, p := range ps {
		if !p.out.Scan() || p.out.Text() != "ready" {
			p.cmd.Wait() //nolint:errcheck
			t.Fatalf("process %d did not get ready: %q %s", i, p.out.Text(), p.errb)
		}
	}
	for _, p := range ps {
		p.stdin.Close()
	}
	var told []int
	for i, p := range ps {
		for p.out.Scan() {
			n, err := strconv.Atoi(p.out.Text())
			if err != nil {
				t.Fatalf("process %d printed %q", i, p.out.Text())
			}
			told = append(told, n)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, p.errb)
		}
	}
	sort.Ints(told)
	return told
}

// WantEachOnce fails t unless told is 0, 1, ..., runs-1.
func WantEachOnce(t *testing.T, told []int, runs int) {
	t.Helper()
	if len(told) != runs {
		t.Fatalf("%d skips succeeded, want exactly %d", len(told), runs)
	}
	for i, n := range told {
		if n != i {
			t.Fatalf("the runs left the skips were told are not 0..%d once each: %v", runs-1, told)
		}
	}
}

// TestConsumeProcesses has 8 OS processes consume one freeze of 300 runs
// through the store API, 100 times each, all starting at once: exactly 300
// skips succeed, each told a different count, and the audit log holds 300
// skips and an expiry. (TestFreezeConsumeProcesses does the same with
// 'flakegate freeze consume'.)
func TestConsumeProcesses(t *testing.T) {
	const procs, tries, runs = 8, 100, 300
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	f := storetest.Freeze("1402", runs)
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	WantEachOnce(t, RunConsumers(t, dsn, "store", procs, tries), runs)
	_, err := s.GetFreeze(ctx, f.Triple())
	wantCode(t, "GetFreeze after the last skip", err, flakegate.ENOTFOUND)
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	m, err := flakegate.ReplayAudit(lines)
	if err != nil || len(m) != 0 {
		t.Fatalf("ReplayAudit: %d freezes, %v; want none", len(m), err)
	}
	if len(lines) != 1+runs+1 {
		t.Fatalf("audit log has %d lines, want grant, %d skips, expire", len(lines), runs)
	}
}
