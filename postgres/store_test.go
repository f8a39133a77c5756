package postgres

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
	"github.com/jackc/pgx/v5"
)

var ctx = context.Background()

// exec runs sql on dsn's database outside the store.
func exec(t testing.TB, dsn, sql string, args ...any) error {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

func queryInt(t testing.TB, dsn, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// withParam returns dsn with the URL parameter k set to v.
func withParam(t testing.TB, dsn, k, v string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := flakegate.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func TestMigrationsNumbered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Fatalf("migration %s has version %d, want %d (no gaps, no repeats)", m.name, m.version, i+1)
		}
	}
	if SchemaVersion() != len(migrations) {
		t.Fatalf("SchemaVersion %d, want %d", SchemaVersion(), len(migrations))
	}
}

func TestMigrate(t *testing.T) {
	dsn := pgtest.DSN(t)
	type testCase struct {
		name          string
		before, after int
	}
	run := func(t *testing.T, tc testCase) {
		before, after, err := MigrateVersions(ctx, dsn)
		if err != nil {
			t.Fatalf("MigrateVersions: %v", err)
		}
		if before != tc.before || after != tc.after {
			t.Fatalf("MigrateVersions: %d -> %d, want %d -> %d", before, after, tc.before, tc.after)
		}
		if n := queryInt(t, dsn, `SELECT count(*) FROM flakegate.schema_version`); n != SchemaVersion() {
			t.Fatalf("schema_version has %d rows, want %d", n, SchemaVersion())
		}
	}
	// In order: the first run creates the schema, the second finds it.
	for _, tc := range []testCase{
		{"fresh database", 0, SchemaVersion()},
		{"again", SchemaVersion(), SchemaVersion()},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestOpenMigratesOnce opens one fresh database from many goroutines at
// once: every Open succeeds and each migration is applied exactly once.
func TestOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := Open(ctx, dsn)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
	}
	if got := queryInt(t, dsn, `SELECT count(*) FROM flakegate.schema_version`); got != SchemaVersion() {
		t.Fatalf("schema_version has %d rows, want %d", got, SchemaVersion())
	}
}

func TestSchemaTooNew(t *testing.T) {
	dsn := pgtest.DSN(t)
	if err := Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	newer := SchemaVersion() + 1
	if err := exec(t, dsn, `INSERT INTO flakegate.schema_version (version, name, flakegate_version) VALUES ($1, 'future', '9.9.9')`, newer); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("schema version %d is newer than this flakegate (knows %d)", newer, SchemaVersion())
	_, openErr := Open(ctx, dsn)
	for what, err := range map[string]error{"Open": openErr, "Migrate": Migrate(ctx, dsn)} {
		wantCode(t, what, err, flakegate.EINTERNAL)
		if !strings.Contains(err.Error(), want) || flakegate.ErrorHint(err) == "" {
			t.Fatalf("%s: %q (hint %q), want %q and a hint", what, err, flakegate.ErrorHint(err), want)
		}
	}
}

func TestAuditAppendOnly(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	if err := s.Grant(ctx, storetest.Freeze("1402", 2), false); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`UPDATE flakegate.audit SET line = '\x7b7d'`,
		`DELETE FROM flakegate.audit`,
		`TRUNCATE flakegate.audit`,
	} {
		t.Run(strings.Fields(sql)[0], func(t *testing.T) {
			err := exec(t, dsn, sql)
			if err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Fatalf("%s: %v, want the append-only refusal", sql, err)
			}
		})
	}
	lines, err := s.AuditLines(ctx)
	if err != nil || len(lines) != 1 {
		t.Fatalf("AuditLines: %d lines, %v; want the one grant", len(lines), err)
	}
}

// TestExactTimes checks that times keep their nanoseconds, so the ledger
// and the log it replays from agree exactly.
func TestExactTimes(t *testing.T) {
	s := openStore(t)
	at := time.Date(2026, 11, 30, 4, 5, 6, 123456789, time.FixedZone("CET", 3600))
	f := storetest.Freeze("7", 3)
	f.GrantedAt = at
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetFreeze(ctx, f.Triple())
	if err != nil || !got.GrantedAt.Equal(at) || got.GrantedAt.Location() != time.UTC {
		t.Fatalf("GetFreeze: granted_at %v, %v; want %v in UTC", got.GrantedAt, err, at)
	}
	r, err := s.PutReplay(ctx, "k", flakegate.BaseReplay{Result: "pass", WallSeconds: 0.1 + 0.2, RunID: "r", At: at})
	if err != nil || !r.At.Equal(at) || r.WallSeconds != 0.1+0.2 {
		t.Fatalf("PutReplay: %+v, %v", r, err)
	}
}

// TestEachRecordPages stores more records than one page and checks every
// one comes back once, in sha order, while fn itself uses the store.
func TestEachRecordPages(t *testing.T) {
	s := openStore(t)
	want := map[string][]byte{}
	for i := range recordPage*2 + 5 {
		raw := []byte(fmt.Sprintf("{\"n\": %d}\n", i))
		sha := flakegate.AuditLineSHA256(raw)
		want[sha] = raw
		if err := s.PutRecord(ctx, sha, raw); err != nil {
			t.Fatal(err)
		}
	}
	prev := ""
	seen := 0
	err := s.EachRecord(ctx, func(sha string, raw []byte) error {
		if sha <= prev {
			return fmt.Errorf("%s came after %s", sha, prev)
		}
		prev = sha
		again, err := s.GetRecord(ctx, sha)
		if err != nil {
			return err
		}
		if !bytes.Equal(raw, want[sha]) || !bytes.Equal(again, raw) {
			return fmt.Errorf("record %s: %q, want %q", sha, raw, want[sha])
		}
		seen++
		return nil
	})
	if err != nil || seen != len(want) {
		t.Fatalf("EachRecord: saw %d of %d, %v", seen, len(want), err)
	}
}

func TestTextWithNUL(t *testing.T) {
	s := openStore(t)
	f := storetest.Freeze("1", 1)
	f.PropertyPath = "tests/a\x00b.py"
	wantCode(t, "Grant with a NUL in the path", s.Grant(ctx, f, false), flakegate.EINVALID)
	lines, err := s.AuditLines(ctx)
	if err != nil || len(lines) != 0 {
		t.Fatalf("AuditLines: %d lines, %v; want none", len(lines), err)
	}
}

// TestOpenSchemes opens the same database by both URL schemes.
func TestOpenSchemes(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		t.Run(scheme, func(t *testing.T) {
			s := openDSN(t, scheme+strings.TrimPrefix(dsn, "postgres://"))
			if _, err := s.ListFreezes(ctx); err != nil {
				t.Fatal(err)
			}
			if !IsDSN(scheme + "db/x") {
				t.Fatalf("IsDSN(%q) is false", scheme)
			}
		})
	}
	if IsDSN("/var/lib/flakegate") || IsDSN("postgres:/x") {
		t.Fatal("IsDSN takes a folder for a DSN")
	}
}

func TestOpenErrors(t *testing.T) {
	const pw = "s3cret-Passw0rd"
	live := pgtest.WithPassword(t, pgtest.DSN(t), pw)
	down := withParam(t, live, "host", t.TempDir()) // a folder with no server socket in it
	u, _ := url.Parse(live)
	u.Path = "/no_such_database"
	missing := u.String()

	type testCase struct {
		name string
		dsn  string
		code string
		msg  string // part of the message
	}
	run := func(t *testing.T, tc testCase) {
		s, err := Open(ctx, tc.dsn)
		if err == nil {
			s.Close()
		}
		wantCode(t, "Open", err, tc.code)
		text := err.Error() + "\n" + flakegate.ErrorHint(err)
		if !strings.Contains(text, tc.msg) {
			t.Fatalf("Open: %q, want it to say %q", text, tc.msg)
		}
		if strings.Contains(text, pw) {
			t.Fatalf("Open's error shows the password: %q", text)
		}
		if flakegate.ErrorHint(err) == "" {
			t.Fatalf("Open: %q has no hint", err)
		}
	}
	for _, tc := range []testCase{
		{"server down", down, flakegate.EINTERNAL, "cannot connect to PostgreSQL"},
		{"no database", missing, flakegate.EINTERNAL, "no_such_database"},
		{"not a URL", "postgres://u:" + pw + "@host:port:bad/db", flakegate.EINVALID, "not a valid URL"},
		{"bad parameter", "postgres://u:" + pw + "@localhost/db?sslmode=sometimes", flakegate.EINVALID, "invalid DSN"},
		{"not postgres", "mysql://u:" + pw + "@localhost/db", flakegate.EINVALID, "not a PostgreSQL DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestRedact(t *testing.T) {
	type testCase struct{ dsn, want string }
	run := func(t *testing.T, tc testCase) {
		if got := Redact(tc.dsn); got != tc.want {
			t.Fatalf("Redact(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"postgres://gate:hunter2@db:5432/ci", "postgres://gate:xxxxx@db:5432/ci"},
		{"postgresql://gate@db/ci?sslmode=require", "postgresql://gate@db/ci?sslmode=require"},
		{"postgres://db/ci?user=gate&password=hunter2", "postgres://db/ci?password=xxxxx&user=gate"},
		{"postgres://gate:hunter2@db:port:x/ci", "postgres://(unparseable DSN)"},
	} {
		t.Run(tc.dsn, func(t *testing.T) { run(t, tc) })
	}
}

// TestStuckRunner holds the audit chain's lock the way a runner that
// stopped answering mid-change does: others time out with a clear error
// (lock_timeout), and the server ends the stuck session
// (idle_in_transaction_session_timeout), after which changes go through.
func TestStuckRunner(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, withParam(t, dsn, "lock_timeout", "300ms"))
	f := storetest.Freeze("1402", 5)
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	stuck, err := pgx.Connect(ctx, withParam(t, dsn, "idle_in_transaction_session_timeout", "2s"))
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close(ctx)
	if _, err := stuck.Exec(ctx, `BEGIN; SELECT * FROM flakegate.audit_head FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Consume(ctx, f.Triple(), f.RecordSHA256, "run")
	wantCode(t, "Consume while another session holds the lock", err, flakegate.EINTERNAL)
	if !strings.Contains(err.Error(), "timed out waiting for another runner") || flakegate.ErrorHint(err) == "" {
		t.Fatalf("Consume: %v, want the lock timeout explained, with a hint", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run")
		if err == nil {
			if n != 4 {
				t.Fatalf("Consume after the stuck session ended: %d runs left, want 4", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stuck session still blocks changes: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkConsume measures one counted skip (a transaction that locks the
// chain head, decrements and appends an audit line) on a local server.
func BenchmarkConsume(b *testing.B) {
	s := openStore(b)
	f := storetest.Freeze("1402", 1<<30)
	if err := s.Grant(ctx, f, false); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
