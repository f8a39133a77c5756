package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
	"github.com/flakegate/flakegate/storetest"
	"github.com/jackc/pgx/v5"
)

// loggedProp is a property that appends "<side> <seed>" to $FG_LOG,
// outside every worktree, so a test can tell base runs from candidate
// runs: every attempt sees its tree at the same path, so the side is read
// from the file "side", "base" on the base commit and "candidate" on the
// candidates. The base run takes a second, so
// a second check reaches the base while the first one still replays it.
const loggedProp = `#!/bin/sh
# Property: the library accepts every seed on the fixture; logs its runs.
side=$(cat side)
echo "$side $1" >> "$FG_LOG"
case "$side" in
base) sleep 1 ;;
*) sleep 0.2 ;;
esac
. ./src/lib.sh
grep -q alpha fixtures/data.txt || exit 1
ok "$1"
`

// TestCheckPostgresParallelChecks: two runners (two clones of one
// repository) check different candidates of the same base at the same
// time against one PostgreSQL ledger: every seed runs on the base once in
// all, and each check labels its own candidate.
func TestCheckPostgresParallelChecks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and two flakegate processes")
	}
	dsn := pgtest.NewCluster(t).DSN(t)
	runLog := filepath.Join(t.TempDir(), "runs.log")

	files := baseFiles(libOK)
	cfg := strings.Replace(config(""), "seeds: [11, 12]", "seeds: [11, 12, 13]", 1)
	cfg = strings.Replace(cfg, "workers: 1", "workers: 2", 1)
	cfg = strings.Replace(cfg, "wall_budget: 1500ms", "wall_budget: 20s", 1)
	// The run log is shared with the sandbox, read-write.
	files["flakegate.yaml"] = strings.NewReplacer(`rw: ["@FG_STATE@"]`, `rw: ["`+filepath.Dir(runLog)+`"]`, "env: [FG_STATE]", "env: [FG_LOG]").Replace(cfg)
	files["props/prop.sh"] = loggedProp
	files["side"] = "base\n"
	origin := newRepo(t, files)

	type testCase struct {
		name      string
		candidate map[string]string
		exit      int
		label     flakegate.Label
	}
	runners := []testCase{
		{name: "green", candidate: map[string]string{"README.md": "runner one\n"}, exit: 0, label: flakegate.Pass},
		{name: "red", candidate: map[string]string{"src/lib.sh": libRed}, exit: 1, label: flakegate.Property},
	}
	clones := make([]*repo, len(runners))
	for i, tc := range runners {
		cl := &repo{t: t, dir: filepath.Join(t.TempDir(), "clone-"+tc.name), state: t.TempDir()}
		origin.git("clone", "-q", origin.dir, cl.dir)
		cl.git("checkout", "-q", "--detach", "base")
		cand := map[string]string{"side": "candidate\n"}
		for k, v := range tc.candidate {
			cand[k] = v
		}
		cl.commit(tc.name, cand)
		clones[i] = cl
	}

	// Both checks start at once, each in a goroutine of this test: as
	// parallel subtests they waited for free slots of -parallel behind the
	// package's other tests, and in a full run one ran after the other.
	runs := make([]*checkRun, len(runners))
	var wg sync.WaitGroup
	for i := range runners {
		wg.Go(func() {
			runs[i] = clones[i].checkEnv([]string{"FG_LOG=" + runLog}, "--base", "base", "--candidate", "HEAD", "--ledger", dsn)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// They ran at the same time: each started before the other ended.
	for i := range runs {
		o := runs[1-i]
		if !runs[i].started.Before(o.ended) {
			t.Fatalf("the %s check started at %s, after the %s check ended at %s", runners[i].name, runs[i].started, runners[1-i].name, o.ended)
		}
	}

	raw, err := os.ReadFile(runLog)
	if err != nil {
		t.Fatal(err)
	}
	baseRuns := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		dir, seed, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("log line %q", line)
		}
		if dir == "base" {
			baseRuns[seed]++
		}
	}
	for _, seed := range []string{"11", "12", "13"} {
		if baseRuns[seed] != 1 {
			t.Errorf("seed %s ran on the base %d times across both checks, want 1\nlog:\n%s", seed, baseRuns[seed], raw)
		}
	}

	// Per seed, exactly one record says it ran the base; the other read
	// the first one's result from the cache.
	fresh := map[flakegate.Seed]int{}
	for i, tc := range runners {
		cr := runs[i]
		if cr.code != tc.exit {
			t.Fatalf("%s runner: exit %d, want %d\n%s", tc.name, cr.code, tc.exit, cr)
		}
		want := strings.Repeat(string(tc.label)+",", 3)
		if got := strings.Join(cr.labels(), ",") + ","; got != want {
			t.Errorf("%s runner: labels %s, want %s\n%s", tc.name, got, want, cr)
		}
		for j, res := range cr.summary.Results {
			rec := cr.record(t, j)
			verifyTranscript(t, res.Record, rec)
			if rec.BaseSeedResult != "pass" {
				t.Errorf("%s runner, seed %s: base result %s, want pass", tc.name, res.Seed, rec.BaseSeedResult)
			}
			if !rec.BaseFromCache {
				fresh[res.Seed]++
			}
		}
	}
	for _, seed := range []flakegate.Seed{"11", "12", "13"} {
		if fresh[seed] != 1 {
			t.Errorf("seed %s: %d records ran the base, want 1 (the other from the cache)", seed, fresh[seed])
		}
	}
}

// gatedProp tells the test it started ($FG_STATE/started-<seed>), then
// waits for the test's go-ahead ($FG_STATE/go).
const gatedProp = `#!/bin/sh
# Property: the library accepts every seed on the fixture, when let go.
touch "$FG_STATE/started-$1"
while [ ! -e "$FG_STATE/go" ]; do sleep 0.05; done
. ./src/lib.sh
grep -q alpha fixtures/data.txt || exit 1
ok "$1"
`

// ledgerState is everything a check may write to the database.
type ledgerState struct {
	freezes []string // JSON, sorted by triple
	audit   []string
	records []string // record_sha256, sorted
	replays []string // key and result, sorted
}

func readLedgerState(t *testing.T, dsn string) ledgerState {
	t.Helper()
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open the ledger: %v", err)
	}
	defer s.Close()
	var st ledgerState
	freezes, err := s.ListFreezes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range freezes {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		st.freezes = append(st.freezes, string(b))
	}
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		st.audit = append(st.audit, string(l))
	}
	if err := s.EachRecord(ctx, func(sha string, _ []byte) error {
		st.records = append(st.records, sha)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(st.records)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT replay_key || ' ' || result FROM flakegate.replays ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	if st.replays, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCheckPostgresServerStops: the server stops while a check runs; the
// check fails with a clear database error (exit 3), writes nothing and
// prints no labels. Started again, the ledger is as it was and the next
// check works.
func TestCheckPostgresServerStops(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and the flakegate binary")
	}
	cluster := pgtest.NewCluster(t)
	dsn := cluster.DSN(t)
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config(""), "wall_budget: 1500ms", "wall_budget: 60s", 1)
	files["props/prop.sh"] = gatedProp
	r := newRepo(t, files)
	r.candidate("cand", map[string]string{"README.md": "changed\n"})

	// Something in every table, for the check not to touch.
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Grant(ctx, storetest.Freeze("7", 3), false); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRecord(ctx, storetest.Sha('a'), []byte(`{"kept":true}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutReplay(ctx, "another base", flakegate.BaseReplay{Result: "fail", RunID: "r0", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := readLedgerState(t, dsn)

	cmd := exec.Command(flakegateBin, "check", "--json", "--base", "base", "--candidate", "cand", "--ledger", dsn)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), "FG_STATE="+r.state)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for the first candidate attempt, then stop the server under it.
	started := filepath.Join(r.state, "started-11")
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the check ended before its first attempt: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("the first attempt did not start within 2 minutes")
		case <-time.After(20 * time.Millisecond):
		}
	}
	cluster.Stop(t)
	if err := os.WriteFile(filepath.Join(r.state, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	out, errOut := stdout.String(), stderr.String()
	if code != 3 {
		t.Fatalf("exit %d with the server stopped, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"Error:", "PostgreSQL", "Try:", "check that PostgreSQL is running"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	for _, bad := range []string{"panic", "goroutine ", "PASS", "SCHEDULER", "PROPERTY"} {
		if strings.Contains(out+errOut, bad) {
			t.Errorf("a failed check printed %q\nstdout:\n%s\nstderr:\n%s", bad, out, errOut)
		}
	}

	cluster.Start(t)
	if after := readLedgerState(t, dsn); !sameLedgerState(before, after) {
		t.Fatalf("the failed check changed the ledger\nbefore: %+v\nafter:  %+v", before, after)
	}

	cr := r.check("--base", "base", "--candidate", "cand", "--ledger", dsn)
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("the check after the restart\n%s", cr)
	}
	after := readLedgerState(t, dsn)
	if !slices.Equal(before.freezes, after.freezes) || !slices.Equal(before.audit, after.audit) {
		t.Errorf("the ledger or its audit log changed\nbefore: %+v\nafter:  %+v", before, after)
	}
	for _, sha := range before.records {
		if !slices.Contains(after.records, sha) {
			t.Errorf("record %s is gone", sha)
		}
	}
	for _, res := range cr.summary.Results {
		if !slices.Contains(after.records, res.RecordSHA256) {
			t.Errorf("the record of seed %s was not stored", res.Seed)
		}
	}
	if len(after.records) != len(before.records)+2 || len(after.replays) != len(before.replays)+2 {
		t.Errorf("after the check: %d records and %d replay results, want %d and %d",
			len(after.records), len(after.replays), len(before.records)+2, len(before.replays)+2)
	}
	for _, rp := range before.replays {
		if !slices.Contains(after.replays, rp) {
			t.Errorf("replay result %q is gone", rp)
		}
	}
}

func sameLedgerState(a, b ledgerState) bool {
	return slices.Equal(a.freezes, b.freezes) && slices.Equal(a.audit, b.audit) && slices.Equal(a.records, b.records) && slices.Equal(a.replays, b.replays)
}

// TestCheckPostgresReplayCacheFails: a runner whose role may not use the
// replay cache gets exit 3 and the database's reason, not labels; with
// --no-replay-cache the same runner checks fine.
func TestCheckPostgresReplayCacheFails(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and the flakegate binary")
	}
	admin := pgtest.NewCluster(t).DSN(t)
	ctx := context.Background()
	if err := postgres.Migrate(ctx, admin); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE ROLE runner_without_cache LOGIN",
		"GRANT USAGE ON SCHEMA flakegate TO runner_without_cache",
		"GRANT ALL ON ALL TABLES IN SCHEMA flakegate TO runner_without_cache",
		"GRANT ALL ON ALL SEQUENCES IN SCHEMA flakegate TO runner_without_cache",
		"REVOKE ALL ON flakegate.replays FROM runner_without_cache",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return // the cluster goes with the test anyway
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP OWNED BY runner_without_cache; DROP ROLE runner_without_cache") //nolint:errcheck
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("runner_without_cache")
	dsn := u.String()

	r := newRepo(t, baseFiles(libOK))
	r.candidate("cand", map[string]string{"README.md": "changed\n"})
	before := readLedgerState(t, admin)
	cr := r.check("--base", "base", "--candidate", "cand", "--ledger", dsn)
	if cr.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", cr.code, cr)
	}
	for _, want := range []string{"Error:", "replay", "permission denied", "Try:"} {
		if !strings.Contains(cr.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, cr.stderr)
		}
	}
	if strings.Contains(cr.stdout+cr.stderr, "panic") || strings.Contains(cr.stdout, "INCOMPLETE") {
		t.Errorf("the failed check printed labels or a panic\n%s", cr)
	}
	if after := readLedgerState(t, admin); !sameLedgerState(before, after) {
		t.Errorf("the failed check changed the ledger\nbefore: %+v\nafter:  %+v", before, after)
	}

	cr = r.check("--base", "base", "--candidate", "cand", "--ledger", dsn, "--no-replay-cache")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("with --no-replay-cache\n%s", cr)
	}
}
