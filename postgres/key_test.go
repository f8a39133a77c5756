package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// TestKeyRefusesForgedRows: with the ledger key, every row that decides
// a label and was written or edited by a client that can only write the
// database is refused when read, and the error names it; the store's own
// rows read back. A store without the key vouches for nothing.
func TestKeyRefusesForgedRows(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	f := storetest.Freeze("1402", 3)
	if err := s.PutRecord(ctx, f.RecordSHA256, []byte(`{"seed":1402}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutReplay(ctx, "k", flakegate.BaseReplay{Result: "fail", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFreeze(ctx, f.Triple()); err != nil {
		t.Fatalf("the store's own freeze: %v", err)
	}
	if _, err := s.AuditLines(ctx); err != nil {
		t.Fatalf("the store's own audit lines: %v", err)
	}
	if got, ok, err := s.GetReplay(ctx, "k"); err != nil || !ok || got.Result != "fail" {
		t.Fatalf("the store's own replay: %+v %v %v", got, ok, err)
	}
	if s.Unvouched() != "" || openUnkeyed(t, dsn).Unvouched() == "" {
		t.Fatal("Unvouched: want \"\" with the key, a reason without")
	}

	refused := func(what string, err error, row string) {
		t.Helper()
		if !errors.Is(err, flakegate.ErrUnauthenticated) || !strings.Contains(err.Error(), row) {
			t.Errorf("%s: %v, want a refusal naming %q", what, err, row)
		}
	}
	for _, sql := range []string{
		`UPDATE flakegate.freezes SET runs_left = 50`,
		`UPDATE flakegate.records SET raw = '{"seed":1403}'`,
		`UPDATE flakegate.replays SET result = 'pass'`,
		`INSERT INTO flakegate.replays (replay_key, result, wall_seconds, run_id, at) VALUES ('forged', 'pass', 1, 'r', '2026-01-01T00:00:00Z')`,
	} {
		if err := exec(t, dsn, sql); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.GetFreeze(ctx, f.Triple())
	refused("an edited freeze", err, "flakegate.freezes row of "+f.Triple().String())
	_, err = s.Consume(ctx, f.Triple(), f.RecordSHA256, "run")
	refused("consuming an edited freeze", err, "flakegate.freezes row")
	_, err = s.GetRecord(ctx, f.RecordSHA256)
	refused("an edited record", err, "flakegate.records row "+f.RecordSHA256)
	n := 0
	if err := s.EachRecord(ctx, func(string, []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("EachRecord gave %d forged records (%v)", n, err)
	}
	for _, key := range []string{"k", "forged"} {
		if got, ok, err := s.GetReplay(ctx, key); err != nil || ok {
			t.Errorf("a forged replay %q read as %+v %v %v", key, got, ok, err)
		}
		// The base runs again; its result replaces the forged row.
		got, err := s.PutReplay(ctx, key, flakegate.BaseReplay{Result: "fail", At: time.Now()})
		if err != nil || got.Result != "fail" {
			t.Errorf("PutReplay over a forged %q: %+v %v", key, got, err)
		}
	}
	if err := exec(t, dsn, `INSERT INTO flakegate.audit (seq, line, sha256, prev_sha256)
		SELECT seq + 1, line, sha256, sha256 FROM flakegate.audit ORDER BY seq DESC LIMIT 1;
		UPDATE flakegate.audit_head SET seq = seq + 1`); err != nil {
		t.Fatal(err)
	}
	_, err = s.AuditLines(ctx)
	refused("an inserted audit line", err, "flakegate.audit row seq 2")
	// freeze verify: the log vouches for nothing, every freeze is voided.
	rep, err := flakegate.VerifyLedger(ctx, s, "lead")
	if err != nil || rep.OK() || len(rep.Problems) != 2 || !strings.Contains(rep.Problems[0].Reason, "seq 2") || !rep.Problems[1].Voided {
		t.Errorf("VerifyLedger with a refused audit line: %+v, %v", rep, err)
	}
	if _, err := s.GetFreeze(ctx, f.Triple()); flakegate.ErrorCode(err) != flakegate.ENOTFOUND {
		t.Errorf("the freeze after verify: %v", err)
	}

	// The key keeps the seed secret out of the database.
	if _, err := s.SeedSecret(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, dsn, `SELECT count(*) FROM flakegate.seed_secret`); n != 0 {
		t.Errorf("a keyed store wrote %d seed secrets into the database", n)
	}
	if err := s.UseKey([]byte("short")); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Errorf("a 5-byte key: %v", err)
	}
}

// TestScrubWeakPassword: a weak password (a word, or under 8 bytes) is
// scrubbed only as a token of a DSN; a strong one wherever it appears.
func TestScrubWeakPassword(t *testing.T) {
	for _, tc := range []struct{ in, pw, want string }{
		{`database "flakegate" does not exist (postgres://u:flakegate@h/flakegate?password=flakegate)`, "flakegate",
			`database "flakegate" does not exist (postgres://u:xxxxx@h/flakegate?password=xxxxx)`},
		{"user ab1 failed: ab1", "ab1", "user ab1 failed: ab1"},
		{"auth Zk9-long-pw failed for postgres://u:Zk9-long-pw@h", "Zk9-long-pw", "auth xxxxx failed for postgres://u:xxxxx@h"},
	} {
		if got := scrub(tc.in, tc.pw); got != tc.want {
			t.Errorf("scrub(%q, %q) = %q, want %q", tc.in, tc.pw, got, tc.want)
		}
	}
}

// TestKeyRefusesForgedLabel: a client that can only write the database
// labels a queued triple of a shared check PASS; with the key, reading
// the check's state refuses the row by name.
func TestKeyRefusesForgedLabel(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	c, ts := queuedCheck("forged", 2)
	if _, err := s.Enqueue(ctx, c, ts); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CheckState(ctx, "forged"); err != nil {
		t.Fatalf("the store's own queue: %v", err)
	}
	if err := exec(t, dsn, `UPDATE flakegate.check_triples SET state = 'done', label = 'PASS', record_sha256 = '', result = '{"label":"PASS"}'
		WHERE check_id = 'forged' AND position = 0`); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.CheckState(ctx, "forged")
	if !errors.Is(err, flakegate.ErrUnauthenticated) || !strings.Contains(err.Error(), "flakegate.check_triples row of check forged") {
		t.Fatalf("a forged label: %v", err)
	}
}
