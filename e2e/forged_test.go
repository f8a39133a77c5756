package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
	"github.com/jackc/pgx/v5"
)

// runnerRole creates a role with exactly the privileges docs/postgres.md
// gives the runners (GRANTs on the tables, no superuser, no CREATE) on
// the migrated database admin names, and returns its DSN.
func runnerRole(t *testing.T, admin string) string {
	t.Helper()
	ctx := context.Background()
	if err := postgres.Migrate(ctx, admin); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/postgres.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- runner-grants[^>]*-->\\s*```sql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/postgres.md has no runner-grants SQL block")
	}
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	role := "flakegate_ci_" + hex.EncodeToString(b[:])
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	grants := strings.ReplaceAll(string(m[1]), "ON DATABASE flakegate ", "ON DATABASE "+db+" ")
	grants = strings.ReplaceAll(grants, "flakegate_runner", role)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD 'ci-role-password'"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, grants); err != nil {
		t.Fatalf("the documented grants fail: %v\n%s", err, grants)
	}
	u.User = url.UserPassword(role, "ci-role-password")
	return u.String()
}

// forgeFreezes is what a client that can only reach the database does:
// for every stored record it writes a SCHEDULER copy for the candidate
// (record hash recomputed by the public formula), a freeze of it with 50
// runs and a grant line chained onto the audit log, all as rows of the
// tables its role may write. It returns how many it forged and the seed
// secret it could read (nil if none).
func forgeFreezes(t *testing.T, dsn, candSHA string) (int, []byte) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var secret []byte
	err = conn.QueryRow(ctx, `SELECT secret FROM flakegate.seed_secret`).Scan(&secret)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) && !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("read the seed secret: %v", err)
	}
	rows, err := conn.Query(ctx, `SELECT raw FROM flakegate.records`)
	if err != nil {
		t.Fatal(err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	forged := 0
	for _, raw := range raws {
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		rec["candidate_sha"] = candSHA
		rec["candidate_result"], rec["base_seed_result"], rec["retry_results"] = "fail", "pass", []string{"pass"}
		out, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		d := flakegate.ClassifyBytes(out)
		if d.Label != flakegate.Scheduler {
			t.Fatalf("the forged record classifies %s: %s", d.Label, d.Reason)
		}
		seed := flakegate.Seed(d.Seed)
		f := flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: d.PropertyPath, Seed: seed, FixtureSHA256: d.FixtureSHA256,
			ExpiresAfterRuns: 50, Owner: "lead", RecordSHA256: d.RecordSHA256, PropertySHA256: rec["property_sha256"].(string),
			GrantedAt: time.Now().UTC().Truncate(time.Second), GrantedBy: "lead",
			RunSHA256: rec["run_sha256"].(string), PropertyEntrySHA256: rec["property_entry_sha256"].(string), CandidateSHA: candSHA}
		var seq int64
		var head string
		if err := conn.QueryRow(ctx, `SELECT seq, sha256 FROM flakegate.audit_head`).Scan(&seq, &head); err != nil {
			t.Fatal(err)
		}
		line, err := flakegate.AuditEvent{Action: flakegate.ActionGrant, At: f.GrantedAt, By: "lead", Triple: f.Triple(), RunsLeft: 50, Freeze: &f}.Line(head)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO flakegate.records (record_sha256, raw) VALUES ($1, $2)`, []any{d.RecordSHA256, out}},
			{`INSERT INTO flakegate.freezes (label, property_path, name, seed, fixture_sha256, runs_left, owner, record_sha256,
				property_sha256, granted_at, granted_by, run_sha256, property_entry_sha256, candidate_sha)
				VALUES ('SCHEDULER', $1, '', $2, $3, 50, 'lead', $4, $5, $6, 'lead', $7, $8, $9)`,
				[]any{f.PropertyPath, string(seed), f.FixtureSHA256, f.RecordSHA256, f.PropertySHA256, f.GrantedAt.Format(time.RFC3339Nano), f.RunSHA256, f.PropertyEntrySHA256, candSHA}},
			{`INSERT INTO flakegate.audit (seq, line, sha256, prev_sha256) VALUES ($1, $2, $3, $4)`, []any{seq + 1, line, flakegate.AuditLineSHA256(line), head}},
			{`UPDATE flakegate.audit_head SET seq = $1, sha256 = $2`, []any{seq + 1, flakegate.AuditLineSHA256(line)}},
		} {
			if _, err := conn.Exec(ctx, q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		forged++
	}
	return forged, secret
}

// TestCheckPostgresForgedFreezeRefused: the attack of a prepare (or of
// anyone) that reaches the runners' database with the runners' own role:
// it copies every stored record into a SCHEDULER record for the
// regression, with its hash recomputed, inserts a freeze of it with 50
// runs and a grant line chained onto the audit log, and reads the seed
// secret. The regression's check refuses every forged freeze (the rows
// carry no authenticator under the runner's ledger key) and rejects the
// regression, PROPERTY and exit 1, with a reason naming the refused row;
// the database held no seed secret to read.
func TestCheckPostgresForgedFreezeRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and flakegate processes")
	}
	admin := pgtest.DSN(t)
	dsn := runnerRole(t, admin)
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config("random_seeds: 1\n"), "seeds: [11, 12]", "seeds: [11]", 1)
	r := newRepo(t, files)
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	red := r.candidate("red", map[string]string{"src/lib.sh": libRed})

	first := r.check("--base", "base", "--candidate", "docs", "--ledger", dsn)
	if first.code != 0 || len(first.summary.Results) != 2 {
		t.Fatalf("the harmless candidate\n%s", first)
	}
	n, secret := forgeFreezes(t, dsn, red)
	if n != 2 {
		t.Fatalf("forged %d freezes, want 2", n)
	}
	if secret != nil {
		t.Errorf("a client of the database read a %d-byte seed secret", len(secret))
	}

	cr := r.check("--base", "base", "--candidate", "red", "--ledger", dsn)
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("the regression under forged freezes: want PROPERTY,PROPERTY, exit 1\n%s", cr)
	}
	for _, res := range cr.summary.Results {
		if res.Skipped || !strings.Contains(res.Reason, "flakegate.freezes row of props/prop.sh seed "+res.Seed.String()) || !strings.Contains(res.Reason, "refused") {
			t.Errorf("seed %s: the reason does not name the refused row: %s", res.Seed, res.Reason)
		}
	}
	if n := queryString(t, admin, `SELECT count(*)::text FROM flakegate.freezes`); n != "0" {
		t.Errorf("%s forged freezes are still in the ledger", n)
	}
	if n := queryString(t, admin, `SELECT count(*)::text FROM flakegate.seed_secret`); n != "0" {
		t.Errorf("the database holds %s seed secret(s)", n)
	}
}

// TestWeakPasswordRedactsOnlyTheDSN: with the DSN password "flakegate"
// (a word, as docs once showed), only the DSN's own "user:password@" is
// a secret: a test's output that says "flakegate" keeps the word in the
// record, and the check's output shows no "[redacted]" for it.
func TestWeakPasswordRedactsOnlyTheDSN(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and a flakegate process")
	}
	dsn := pgtest.WithPassword(t, pgtest.DSN(t), "flakegate")
	r := newRepo(t, baseFiles(libOK))
	r.candidate("red", map[string]string{"src/lib.sh": "ok() { echo \"flakegate says: seed $1 fails; dsn postgres://postgres:flakegate@db/x\"; return 1; }\n"})
	cr := r.check("--base", "base", "--candidate", "red", "--ledger", dsn)
	if cr.code != 1 {
		t.Fatalf("want exit 1\n%s", cr)
	}
	raw, err := os.ReadFile(cr.summary.Results[0].Record)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(raw)
	if !strings.Contains(rec, "flakegate says: seed 11 fails") || strings.Contains(cr.stdout+cr.stderr, "[redacted] says") {
		t.Errorf("the word flakegate was redacted:\n%s\n%s", rec, cr)
	}
	if strings.Contains(rec, "postgres:flakegate@") || !strings.Contains(rec, "dsn postgres://[redacted]db/x") {
		t.Errorf("the DSN's user:password@ token was not redacted:\n%s", rec)
	}
}

// TestCheckPostgresNoKey: a PostgreSQL ledger without the ledger key
// cannot vouch for its rows: a good freeze (granted with the key) lets no
// triple skip, and is kept, not voided; --freeze-owner grants none; a
// config that draws seeds is refused (exit 2) rather than drawing them
// from a secret any client of the database can read.
func TestCheckPostgresNoKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and flakegate processes")
	}
	dsn := pgtest.DSN(t)
	noKey := []string{pgtest.EnvLedgerKey + "="}
	r := newRepo(t, probeFiles(libBaseFlaky))
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	keyed := r.check("--base", "base", "--candidate", "flaky", "--ledger", dsn, "--freeze-owner", "alice")
	if keyed.code != 0 || strings.Join(keyed.labels(), ",") != "SCHEDULER,SCHEDULER" || keyed.summary.Results[0].Owner != "alice" {
		t.Fatalf("with the key, a base flake is frozen\n%s", keyed)
	}
	cr := r.checkEnv(noKey, "--base", "base", "--candidate", "flaky", "--ledger", dsn)
	if cr.code != 0 || strings.Contains(strings.Join(cr.labels(), ","), "skipped") || !strings.Contains(cr.stderr, "the PostgreSQL ledger has no key") {
		t.Fatalf("without the key: want no skip and a note\n%s", cr)
	}
	if n := queryString(t, dsn, `SELECT count(*)::text FROM flakegate.freezes`); n != "2" {
		t.Errorf("without the key the good freezes were removed: %s left", n)
	}
	r.clearState()
	r.rebase("base", "base-grant", map[string]string{"README.md": "another base\n"})
	r.rebase("base-grant", "flaky-grant", map[string]string{"src/lib.sh": libFlaky})
	grant := r.checkEnv(noKey, "--base", "base-grant", "--candidate", "flaky-grant", "--ledger", dsn, "--freeze-owner", "alice")
	if grant.code != 0 || strings.Join(grant.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("without the key\n%s", grant)
	}
	for _, res := range grant.summary.Results {
		if res.Owner != "" || !strings.Contains(res.Reason, "no freeze granted: the PostgreSQL ledger has no key") {
			t.Errorf("seed %s: owner %q, reason %q", res.Seed, res.Owner, res.Reason)
		}
	}
	r.rebase("base", "base-drawn", map[string]string{"flakegate.yaml": probeConfig("random_seeds: 1\n")})
	drawn := r.checkEnv(noKey, "--base", "base-drawn", "--candidate", "base-drawn", "--ledger", dsn)
	if drawn.code != 2 || !strings.Contains(drawn.stderr, "random_seeds") || !strings.Contains(drawn.stderr, "FLAKEGATE_LEDGER_KEY") {
		t.Fatalf("drawn seeds without the key: want exit 2 naming the key\n%s", drawn)
	}
}
