package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/storetest"
)

// The crash tests cut changes short at every step of a write: by hand, for
// the bytes a torn append leaves (TestTornAppend), and by killing a
// process at each step (TestCrashPoints). After either, the next call must
// leave ledger and log agreeing: with the change dropped if its lines were
// torn, finished if they were whole.

const (
	crashDirEnv  = "FILESTORE_CRASH_DIR"
	crashOpEnv   = "FILESTORE_CRASH_OP"
	crashStepEnv = "FILESTORE_CRASH_STEP"
)

// TestMain runs a crash child when the environment names one: it runs one
// change and kills itself with SIGKILL at the named step.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(crashChild(dir, os.Getenv(crashOpEnv), os.Getenv(crashStepEnv)))
	}
	os.Exit(m.Run())
}

func crashChild(dir, op, step string) int {
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	crashHook = func(at string) {
		if at == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute) // the signal lands before the next step
		}
	}
	change, ok := changes[op]
	if !ok {
		fmt.Fprintf(os.Stderr, "no change %q\n", op)
		return 2
	}
	if err := change.run(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0 // the step was never reached; the parent reports it
}

// frozen is the freeze every crash test starts from, with the runs its
// change needs.
func frozen(runs int) flakegate.Freeze { return storetest.Freeze("1402", runs) }

// changes are the ledger changes the crash tests cut short, each with the
// runs left of the freeze it starts from.
var changes = map[string]struct {
	runs int
	run  func(s *Store) error
}{
	"grant": {3, func(s *Store) error {
		return s.Grant(context.Background(), storetest.Freeze("7", 4), false)
	}},
	"grant replace": {3, func(s *Store) error {
		f := frozen(9)
		f.Owner = "someone else"
		return s.Grant(context.Background(), f, true)
	}},
	"consume": {3, func(s *Store) error {
		f := frozen(3)
		_, err := s.Consume(context.Background(), f.Triple(), f.RecordSHA256, "ci")
		return err
	}},
	"consume to zero": {1, func(s *Store) error {
		f := frozen(1)
		_, err := s.Consume(context.Background(), f.Triple(), f.RecordSHA256, "ci")
		return err
	}},
	"revoke": {3, func(s *Store) error {
		return s.Remove(context.Background(), frozen(3).Triple(), flakegate.ActionRevoke, "alice", "done")
	}},
	// list changes nothing itself; a repair it makes can be cut short.
	"list": {3, func(s *Store) error {
		_, err := s.ListFreezes(context.Background())
		return err
	}},
}

// snapshot is what a store holds on disk.
type snapshot struct {
	ledger, audit []byte
	freezes       []flakegate.Freeze
}

func takeSnapshot(t *testing.T, dir string) snapshot {
	t.Helper()
	var sn snapshot
	var err error
	if sn.ledger, err = os.ReadFile(filepath.Join(dir, LedgerFile)); err != nil {
		t.Fatal(err)
	}
	if sn.audit, err = os.ReadFile(filepath.Join(dir, AuditFile)); err != nil {
		t.Fatal(err)
	}
	doc, err := (&Store{dir: dir}).readLedger()
	if err != nil {
		t.Fatal(err)
	}
	sn.freezes = doc.Freezes
	return sn
}

// startStore writes a store in a new folder holding the freeze a change
// starts from, and returns the folder and what the change leaves.
func startStore(t *testing.T, name string) (dir string, before, after snapshot) {
	t.Helper()
	c := changes[name]
	dir = t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Grant(context.Background(), frozen(c.runs), false); err != nil {
		t.Fatal(err)
	}
	before = takeSnapshot(t, dir)
	done := copyStore(t, dir)
	s2, err := Open(done)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.run(s2); err != nil {
		t.Fatal(err)
	}
	return dir, before, takeSnapshot(t, done)
}

// copyStore copies a store's ledger and log to a new folder.
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	for _, name := range []string{LedgerFile, AuditFile} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// checkAgree checks that dir's ledger and log agree, after one more call:
// the chain verifies, replays to the ledger, and audit_head names the last
// line; then it checks a further change still chains.
func checkAgree(t *testing.T, dir string) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("chain: %v", err)
	}
	replayed, err := flakegate.ReplayAudit(lines)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	fs, err := s.ListFreezes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(replayed) {
		t.Fatalf("ledger has %d freezes, the log replays to %d", len(fs), len(replayed))
	}
	for _, f := range fs {
		if want, ok := replayed[f.Triple().Key()]; !ok || !flakegate.SameFreeze(f, want) {
			t.Fatalf("ledger entry %+v, log replays to %+v", f, want)
		}
		if f.ExpiresAfterRuns < 1 {
			t.Fatalf("a spent entry stayed: %+v", f)
		}
	}
	doc, err := s.readLedger()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) > 0 && doc.AuditHead != flakegate.AuditLineSHA256(lines[len(lines)-1]) {
		t.Fatal("audit_head is not the last line")
	}
	if err := s.Grant(ctx, storetest.Freeze("99", 2), true); err != nil {
		t.Fatal(err)
	}
	lines, err = s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("chain after a further grant: %v", err)
	}
}

func sameFreezes(t *testing.T, got, want []flakegate.Freeze) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d freezes, want %d:\n%+v\n%+v", len(got), len(want), got, want)
	}
	for i := range got {
		if !flakegate.SameFreeze(got[i], want[i]) {
			t.Fatalf("freeze %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestTornAppend writes a prefix of a change's real appended bytes, as a
// kill inside the write leaves it, and lets the next call repair it: any
// proper prefix is cut off to the bytes before the change, the whole
// append is rolled forward.
func TestTornAppend(t *testing.T) {
	type testCase struct {
		name   string
		change string
		cut    int // bytes of the append that reached the file; -1 all
		// via names the call that finds the torn log.
		via string
	}
	reads := map[string]func(s *Store) error{
		"ListFreezes": changes["list"].run,
		"AuditLines":  func(s *Store) error { _, err := s.AuditLines(context.Background()); return err },
		"Grant":       func(s *Store) error { return s.Grant(context.Background(), storetest.Freeze("8", 1), false) },
	}
	run := func(t *testing.T, tc testCase) {
		dir, before, after := startStore(t, tc.change)
		appended := after.audit[len(before.audit):]
		cut := tc.cut
		if cut < 0 || cut > len(appended) {
			cut = len(appended)
		}
		path := filepath.Join(dir, AuditFile)
		if err := os.WriteFile(path, append(before.audit, appended[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		viaGrant := tc.via == "Grant"
		if err := reads[tc.via](s); err != nil {
			t.Fatal(err)
		}
		got := takeSnapshot(t, dir)
		want := before
		if cut == len(appended) {
			want = after
		}
		if !viaGrant {
			if string(got.audit) != string(want.audit) {
				t.Fatalf("audit.jsonl after repair:\n%s\nwant:\n%s", got.audit, want.audit)
			}
			sameFreezes(t, got.freezes, want.freezes)
		} else if !strings.HasPrefix(string(got.audit), string(want.audit)) {
			t.Fatalf("audit.jsonl after repair and a grant:\n%s\nwant it to start with:\n%s", got.audit, want.audit)
		}
		checkAgree(t, dir)
	}
	var cases []testCase
	for _, change := range []string{"grant", "grant replace", "consume", "consume to zero", "revoke"} {
		dir, before, after := startStore(t, change)
		os.RemoveAll(dir)
		appended := after.audit[len(before.audit):]
		first := strings.IndexByte(string(appended), '\n')
		cuts := map[string]int{
			"one byte":                    1,
			"half the first line":         first / 2,
			"first line without newline":  first,
			"all but the newline":         len(appended) - 1,
			"whole append":                -1,
			"first line of two, complete": first + 1,
		}
		if first+1 == len(appended) {
			delete(cuts, "first line of two, complete") // one line
		}
		for cutName, cut := range cuts {
			for via := range reads {
				if testing.Short() && via != "ListFreezes" {
					continue // -short: every cut, found by one call (each case syncs a store)
				}
				cases = append(cases, testCase{fmt.Sprintf("%s/%s/via %s", change, cutName, via), change, cut, via})
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestCrashPoints kills a process running a change at each step after
// its append: the lines are whole, so the next call finishes the change.
// A second kill, inside the repair's own ledger write, changes nothing.
func TestCrashPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per case")
	}
	type kill struct{ op, step string }
	type testCase struct {
		name   string
		change string
		kills  []kill
	}
	run := func(t *testing.T, tc testCase) {
		dir, _, after := startStore(t, tc.change)
		for _, k := range tc.kills {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashOpEnv+"="+k.op, crashStepEnv+"="+k.step)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("%s at %q: %v, want a kill at the step\n%s", k.op, k.step, err, out)
			}
		}
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := s.ListFreezes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sameFreezes(t, fs, after.freezes)
		got := takeSnapshot(t, dir)
		if n, want := strings.Count(string(got.audit), "\n"), strings.Count(string(after.audit), "\n"); n != want {
			t.Fatalf("%d audit lines, want %d:\n%s", n, want, got.audit)
		}
		checkAgree(t, dir)
	}
	steps := []string{AuditFile + " appended", AuditFile + " synced", LedgerFile + " written", LedgerFile + " renamed"}
	var cases []testCase
	for _, change := range []string{"grant", "consume", "consume to zero", "revoke"} {
		for _, step := range steps {
			cases = append(cases, testCase{change + "/" + step, change, []kill{{change, step}}})
		}
		cases = append(cases, testCase{change + "/repair cut short", change, []kill{
			{change, AuditFile + " synced"},
			{"list", LedgerFile + " written"},
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
