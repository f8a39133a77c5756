package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
	"github.com/jackc/pgx/v5"
)

// TestDBMigrateCommand runs `flakegate db migrate` as a user does and
// checks the exit codes and what is printed: the schema version on
// success, "Error:" and "Try:" lines (never the password) and exit 3 when
// the database is down or newer, exit 2 for usage errors.
func TestDBMigrateCommand(t *testing.T) {
	const pw = "Cli-pw-7788"
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	live := u.String()
	q := u.Query()
	q.Set("host", t.TempDir()) // no server there
	u.RawQuery = q.Encode()
	down := u.String()
	newer, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(context.Background(), newer.String()); err != nil {
		t.Fatal(err)
	}
	bumpVersion(t, newer.String())

	type testCase struct {
		name   string
		args   []string
		env    string // FLAKEGATE_LEDGER
		code   int
		stdout string // part of stdout
		stderr string // part of stderr
	}
	run := func(t *testing.T, tc testCase) {
		t.Setenv("FLAKEGATE_LEDGER", tc.env)
		var out, errOut bytes.Buffer
		code := Main(tc.args, strings.NewReader(""), &out, &errOut)
		if code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Fatalf("stdout %q, stderr %q; want %q and %q", out.String(), errOut.String(), tc.stdout, tc.stderr)
		}
		if strings.Contains(out.String()+errOut.String(), pw) {
			t.Fatalf("the password is printed:\n%s%s", out.String(), errOut.String())
		}
		if tc.code != 0 && !strings.Contains(errOut.String(), "\nTry: ") {
			t.Fatalf("no hint: %s", errOut.String())
		}
	}
	// In order: the first migration creates the schema.
	for _, tc := range []testCase{
		{"first", []string{"db", "migrate", "--ledger", live}, "", 0,
			fmt.Sprintf("schema version %d (migrated from 0)", postgres.SchemaVersion()), ""},
		{"again from the environment", []string{"db", "migrate"}, live, 0,
			fmt.Sprintf("schema version %d (up to date)", postgres.SchemaVersion()), ""},
		{"database down", []string{"db", "migrate", "--ledger", down}, "", 3,
			"", "cannot connect to PostgreSQL"},
		{"schema newer", []string{"db", "migrate", "--ledger", newer.String()}, "", 3,
			"", fmt.Sprintf("schema version %d is newer than this flakegate (knows %d)", postgres.SchemaVersion()+1, postgres.SchemaVersion())},
		{"no database", []string{"db", "migrate"}, "", 2, "", "no database named"},
		{"a folder", []string{"db", "migrate", "--ledger", t.TempDir()}, "", 2, "", "not a PostgreSQL DSN"},
		{"a stray argument", []string{"db", "migrate", "now"}, "", 2, "", "Error:"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func bumpVersion(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO flakegate.schema_version (version, name, flakegate_version)
		VALUES ($1, 'future', '9.9.9')`, postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
}

// schedulerRecordFile is a run record that classifies SCHEDULER: the
// candidate failed, the base seed passed, a retry within the cap passed.
func schedulerRecordFile(t *testing.T) (path string, raw []byte) {
	t.Helper()
	raw = []byte(`{"run_id": "run-1", "seed": 1402, "property_path": "tests/props/test_retry_budget.py",
 "property_sha256": "` + strings.Repeat("b", 64) + `", "fixture_sha256": "` + strings.Repeat("f", 64) + `",
 "base_fixture_sha256": "` + strings.Repeat("f", 64) + `", "diff_paths": ["src/scheduler.py"],
 "candidate_result": "fail", "base_seed_result": "pass", "retry_results": ["pass"], "retry_cap": 2,
 "budget_ok": true, "transcript_complete": true}`)
	path = filepath.Join(t.TempDir(), "record.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestFreezeCommandsServerStopped runs the freeze commands against a
// PostgreSQL ledger whose server stops between two of them: while it is
// down every command exits 3 with a clear message and never says "skip";
// after the restart the ledger is as it was and the next skip is counted.
func TestFreezeCommandsServerStopped(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("starts its own PostgreSQL cluster")
	}
	const pw = "Freeze-pw-31337"
	c := pgtest.NewCluster(t)
	u, err := url.Parse(c.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	dsn := u.String()
	record, _ := schedulerRecordFile(t)
	triple := []string{"--property", "tests/props/test_retry_budget.py", "--seed", "1402",
		"--fixture-sha256", strings.Repeat("f", 64), "--property-sha256", strings.Repeat("b", 64)}

	type testCase struct {
		name   string
		args   []string
		code   int
		stdout string // part of stdout
		stderr string // part of stderr
	}
	run := func(t *testing.T, tc testCase) {
		var out, errOut bytes.Buffer
		args := append(append([]string{}, tc.args...), "--ledger", dsn)
		code := Main(args, strings.NewReader(""), &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Fatalf("flakegate %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant stdout with %q, stderr with %q",
				strings.Join(tc.args, " "), code, tc.code, out.String(), errOut.String(), tc.stdout, tc.stderr)
		}
		if strings.Contains(out.String()+errOut.String(), pw) {
			t.Fatalf("the password is printed:\n%s%s", out.String(), errOut.String())
		}
		if tc.code == 3 && (out.Len() != 0 || !strings.Contains(errOut.String(), "\nTry: ")) {
			t.Fatalf("exit 3 with stdout %q, stderr %q; want nothing on stdout and a hint", out.String(), errOut.String())
		}
	}
	consume := append([]string{"freeze", "consume", "--json"}, triple...)
	steps := []testCase{
		{"grant", []string{"freeze", "grant", "--record", record, "--owner", "alice", "--runs", "3"}, 0, "froze", ""},
		{"grant again", []string{"freeze", "grant", "--record", record, "--owner", "bob", "--runs", "5"}, 2, "", "--replace"},
		{"consume", consume, 0, `"runs_left": 2`, ""},
		{"stop", nil, 0, "", ""},
		{"consume while down", consume, 3, "", "cannot connect to PostgreSQL"},
		{"grant --replace while down", []string{"freeze", "grant", "--record", record, "--owner", "bob", "--runs", "5", "--replace"}, 3, "", "PostgreSQL"},
		{"list while down", []string{"freeze", "list"}, 3, "", "PostgreSQL"},
		{"start", nil, 0, "", ""},
		{"list after restart", []string{"freeze", "list", "--json"}, 0, `"expires_after_runs": 2`, ""},
		{"consume after restart", consume, 0, `"runs_left": 1`, ""},
		{"consume the last run", consume, 0, `"runs_left": 0`, ""},
		{"consume an expired freeze", consume, 1, `"skipped": false`, ""},
		{"verify", []string{"freeze", "verify"}, 0, "", ""},
	}
	for _, tc := range steps {
		switch tc.name {
		case "stop":
			c.Stop(t)
		case "start":
			c.Start(t)
		default:
			t.Run(tc.name, func(t *testing.T) { run(t, tc) })
		}
	}
}

// consumeArgs are the arguments of 'flakegate freeze consume' for the
// triple of schedulerRecordFile.
func consumeArgs(dsn string) []string {
	return []string{"freeze", "consume", "--json", "--ledger", dsn, "--by", "consumer",
		"--property", "tests/props/test_retry_budget.py", "--seed", "1402",
		"--fixture-sha256", strings.Repeat("f", 64), "--property-sha256", strings.Repeat("b", 64)}
}

// cliConsumer runs 'flakegate freeze consume' tries times: exit 0 is a
// skip (its runs left printed), exit 1 is "run the triple".
func cliConsumer(dsn string, tries int) int {
	pgtest.WaitForStart()
	for range tries {
		var out, errOut bytes.Buffer
		switch code := Main(consumeArgs(dsn), strings.NewReader(""), &out, &errOut); code {
		case 0:
			var d struct {
				Skipped  bool `json:"skipped"`
				RunsLeft int  `json:"runs_left"`
			}
			if err := json.Unmarshal(out.Bytes(), &d); err != nil || !d.Skipped {
				fmt.Fprintf(os.Stderr, "exit 0 with %q: %v\n", out.String(), err)
				return 3
			}
			fmt.Println(d.RunsLeft)
		case 1:
		default:
			fmt.Fprintf(os.Stderr, "exit %d: %s%s", code, out.String(), errOut.String())
			return 3
		}
	}
	return 0
}

// TestFreezeConsumeProcesses has 8 processes run 'flakegate freeze
// consume' 100 times each on one freeze of 300 runs: exactly 300 exit 0,
// each told a different count; the other 500 exit 1 (run the triple).
func TestFreezeConsumeProcesses(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("800 command runs")
	}
	const procs, tries, runs = 8, 100, 300
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.UseKey([]byte(pgtest.LedgerKey)); err != nil {
		t.Fatal(err)
	}
	_, raw := schedulerRecordFile(t)
	sha, err := flakegate.RecordSHA256(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRecord(ctx, sha, raw); err != nil {
		t.Fatal(err)
	}
	// The CLI grants at most MaxFreezeRuns runs; the store takes more.
	f := flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: "tests/props/test_retry_budget.py",
		Seed: "1402", FixtureSHA256: strings.Repeat("f", 64), ExpiresAfterRuns: runs, Owner: "alice",
		RecordSHA256: sha, PropertySHA256: strings.Repeat("b", 64), GrantedAt: time.Now(), GrantedBy: "alice"}
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	pgtest.WantEachOnce(t, pgtest.RunConsumers(t, dsn, "cli", procs, tries), runs)
	if fs, err := s.ListFreezes(ctx); err != nil || len(fs) != 0 {
		t.Fatalf("ledger after the last skip: %+v, %v; want empty", fs, err)
	}
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil || len(lines) != runs+2 {
		t.Fatalf("audit log: %d lines (%v), want a chain of grant, %d skips, expire", len(lines), err, runs)
	}
}
