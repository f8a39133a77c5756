package postgres

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// TestServerStopped stops the server in the middle of a ledger change
// (inside the transaction, just before COMMIT), checks the change fails
// with a clear EINTERNAL error that does not show the password, and that
// every call fails the same way while the server is down; then restarts
// the server and checks the ledger and the audit log are exactly as before
// the change, and the same store works again.
func TestServerStopped(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("starts its own PostgreSQL cluster")
	}
	const pw = "Fault-pw-0451"
	c := pgtest.NewCluster(t)
	f := storetest.Freeze("1402", 3)

	type testCase struct {
		name string
		down func(testing.TB) // how the server goes away
		op   func(s *Store) error
	}
	run := func(t *testing.T, tc testCase) {
		dsn := pgtest.WithPassword(t, c.DSN(t), pw)
		s := openDSN(t, dsn)
		s.Now = func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) }
		if err := s.Grant(ctx, f, false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run-1"); err != nil {
			t.Fatal(err)
		}
		linesBefore, freezesBefore := snapshot(t, s)

		var once sync.Once
		s.beforeCommit = func() { once.Do(func() { tc.down(t) }) }
		err := tc.op(s)
		s.beforeCommit = nil
		wantDown(t, "the change cut short", err, pw)

		// While the server is down every call fails clearly.
		_, err = s.Consume(ctx, f.Triple(), f.RecordSHA256, "run-3")
		wantDown(t, "Consume while down", err, pw)
		_, err = s.ListFreezes(ctx)
		wantDown(t, "ListFreezes while down", err, pw)
		_, err = Open(ctx, dsn)
		wantDown(t, "Open while down", err, pw)

		c.Start(t)
		linesAfter, freezesAfter := snapshot(t, s)
		if len(linesAfter) != len(linesBefore) {
			t.Fatalf("the audit log has %d lines after the restart, %d before the cut-short change", len(linesAfter), len(linesBefore))
		}
		for i := range linesBefore {
			if !bytes.Equal(linesBefore[i], linesAfter[i]) {
				t.Fatalf("audit line %d changed:\n%s\n%s", i+1, linesBefore[i], linesAfter[i])
			}
		}
		if len(freezesAfter) != 1 || !flakegate.SameFreeze(freezesAfter[0], freezesBefore[0]) {
			t.Fatalf("ledger after the restart: %+v, before: %+v", freezesAfter, freezesBefore)
		}
		// The same store, and a new one, work again.
		if n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run-4"); err != nil || n != 1 {
			t.Fatalf("Consume after the restart: %d, %v; want 1 run left", n, err)
		}
		s2 := openDSN(t, dsn)
		if n, err := s2.Consume(ctx, f.Triple(), f.RecordSHA256, "run-5"); err != nil || n != 0 {
			t.Fatalf("Consume by a new store: %d, %v; want 0 runs left", n, err)
		}
		lines, _ := snapshot(t, s2)
		if len(lines) != len(linesBefore)+3 {
			t.Fatalf("audit log: %d lines, want %d", len(lines), len(linesBefore)+3)
		}
	}
	for _, tc := range []testCase{
		{"stop during consume", c.Stop, func(s *Store) error {
			_, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run-2")
			return err
		}},
		{"crash during consume", c.Crash, func(s *Store) error {
			_, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run-2")
			return err
		}},
		{"stop during replacing grant", c.Stop, func(s *Store) error {
			g := f
			g.Owner, g.ExpiresAfterRuns = "reviewer-b", 9
			return s.Grant(ctx, g, true)
		}},
		{"crash during revoke", c.Crash, func(s *Store) error {
			return s.Remove(ctx, f.Triple(), flakegate.ActionRevoke, "lead", "why")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// snapshot reads the audit log, checks it chains and replays to the
// ledger, and returns both.
func snapshot(t *testing.T, s *Store) ([][]byte, []flakegate.Freeze) {
	t.Helper()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatalf("AuditLines: %v", err)
	}
	freezes, err := s.ListFreezes(ctx)
	if err != nil {
		t.Fatalf("ListFreezes: %v", err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	m, err := flakegate.ReplayAudit(lines)
	if err != nil {
		t.Fatalf("ReplayAudit: %v", err)
	}
	if len(m) != len(freezes) {
		t.Fatalf("the log replays to %d freezes, the ledger has %d", len(m), len(freezes))
	}
	for _, f := range freezes {
		if !flakegate.SameFreeze(m[f.Triple().Key()], f) {
			t.Fatalf("the log replays %s to %+v, the ledger has %+v", f.Triple(), m[f.Triple().Key()], f)
		}
	}
	return lines, freezes
}

// wantDown checks err is what a user sees when the server went away: an
// EINTERNAL error (exit 3) with a hint, naming the store, without the
// password.
func wantDown(t *testing.T, what string, err error, pw string) {
	t.Helper()
	if flakegate.ErrorCode(err) != flakegate.EINTERNAL {
		t.Fatalf("%s: %v (code %q), want code %q", what, err, flakegate.ErrorCode(err), flakegate.EINTERNAL)
	}
	text := err.Error() + "\n" + flakegate.ErrorHint(err)
	t.Logf("%s:\nError: %s\nTry: %s", what, err, flakegate.ErrorHint(err))
	if strings.Contains(text, pw) {
		t.Fatalf("%s: the error shows the password: %s", what, text)
	}
	if !strings.Contains(text, "xxxxx@") || !strings.Contains(text, "PostgreSQL") || flakegate.ErrorHint(err) == "" {
		t.Fatalf("%s: %q, want the redacted DSN, PostgreSQL named and a hint", what, text)
	}
}
