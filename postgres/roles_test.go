package postgres

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// runnerGrants returns the SQL that docs/postgres.md tells administrators
// to run for the runners' role.
func runnerGrants(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/postgres.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- runner-grants[^>]*-->\\s*```sql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/postgres.md has no runner-grants SQL block")
	}
	var lines []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// TestRunnerRole gives a role exactly the privileges docs/postgres.md
// lists and checks that a runner with it does everything a check does,
// without CREATE, and cannot change or delete audit lines.
func TestRunnerRole(t *testing.T) {
	admin := pgtest.DSN(t)
	if err := Migrate(ctx, admin); err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	role := "flakegate_runner_" + hex.EncodeToString(b[:])
	pw := "runner-pw-" + hex.EncodeToString(b[:])
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")

	if err := exec(t, admin, "CREATE ROLE "+role+" LOGIN PASSWORD '"+pw+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec(t, admin, "DROP OWNED BY "+role+"; DROP ROLE "+role); err != nil {
			t.Errorf("drop role: %v", err)
		}
	})
	grants := runnerGrants(t)
	grants = strings.ReplaceAll(grants, "ON DATABASE flakegate ", "ON DATABASE "+db+" ")
	grants = strings.ReplaceAll(grants, "flakegate_runner", role)
	if err := exec(t, admin, grants); err != nil {
		t.Fatalf("the documented grants fail: %v\n%s", err, grants)
	}

	u.User = url.UserPassword(role, pw)
	runner := u.String()
	s := openDSN(t, runner)
	f := storetest.Freeze("1402", 2)
	steps := []struct {
		name string
		do   func() error
	}{
		{"put record", func() error { return s.PutRecord(ctx, f.RecordSHA256, []byte(`{"seed":1402}`)) }},
		{"put record again", func() error { return s.PutRecord(ctx, f.RecordSHA256, []byte(`{}`)) }},
		{"get record", func() error { _, err := s.GetRecord(ctx, f.RecordSHA256); return err }},
		{"each record", func() error { return s.EachRecord(ctx, func(string, []byte) error { return nil }) }},
		{"grant", func() error { return s.Grant(ctx, f, false) }},
		{"replace", func() error { return s.Grant(ctx, f, true) }},
		{"list", func() error { _, err := s.ListFreezes(ctx); return err }},
		{"consume", func() error { _, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run"); return err }},
		{"consume to zero", func() error { _, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "run"); return err }},
		{"grant again", func() error { return s.Grant(ctx, f, false) }},
		{"revoke", func() error { return s.Remove(ctx, f.Triple(), flakegate.ActionRevoke, "lead", "why") }},
		{"put replay", func() error { _, err := s.PutReplay(ctx, "k", flakegate.BaseReplay{Result: "pass"}); return err }},
		{"put replay again", func() error { _, err := s.PutReplay(ctx, "k", flakegate.BaseReplay{Result: "fail"}); return err }},
		{"get replay", func() error { _, _, err := s.GetReplay(ctx, "k"); return err }},
		{"audit lines", func() error { _, err := s.AuditLines(ctx); return err }},
		{"enqueue a check", func() error { c, ts := queuedCheck("role", 2); _, err := s.Enqueue(ctx, c, ts); return err }},
		{"join it", func() error { c, ts := queuedCheck("role", 2); _, err := s.Enqueue(ctx, c, ts); return err }},
		{"claim, renew and label", func() error {
			l, _, err := s.Claim(ctx, "role", flakegate.Runner{ID: "r"}, time.Minute)
			if err == nil {
				err = s.Renew(ctx, "role", l, time.Minute)
			}
			if err == nil {
				err = s.Complete(ctx, "role", l, flakegate.Result{Seed: "100", Label: flakegate.Pass, RecordSHA256: storetest.Sha('9')}, []byte(`{}`))
			}
			return err
		}},
		{"read the check", func() error { _, _, err := s.CheckState(ctx, "role"); return err }},
		{"queue progress", func() error { _, err := s.Progress(ctx, ""); return err }},
		{"age the corpus", func() error { _, err := s.CorpusBase(ctx, "base-1"); return err }},
		{"add to the corpus", func() error {
			_, err := s.AddFailure(ctx, "k", flakegate.CorpusEntry{Seed: "1", FirstBaseSHA: "base-1", CandidateSHA: "c", FailedAt: time.Now()})
			return err
		}},
		{"renew a corpus seed", func() error {
			_, err := s.AddFailure(ctx, "k", flakegate.CorpusEntry{Seed: "1", FirstBaseSHA: "base-1", CandidateSHA: "d", FailedAt: time.Now().Add(time.Hour)})
			return err
		}},
		{"read the corpus", func() error { _, err := s.Failures(ctx, "k"); return err }},
		{"make the seed secret", func() error { _, err := s.SeedSecret(ctx); return err }},
		{"derive the seed secret", func() error { _, err := openDSN(t, runner).SeedSecret(ctx); return err }},
		{"migrate an up-to-date schema", func() error { return Migrate(ctx, runner) }},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("%s as the runner role: %v", step.name, err)
		}
	}
	snapshot(t, s)
	for _, sql := range []string{
		`UPDATE flakegate.audit SET sha256 = ''`,
		`DELETE FROM flakegate.audit`,
		`DELETE FROM flakegate.records`,
		// flakegate.replays and flakegate.records take UPDATE: a keyed
		// store replaces a row without a valid authenticator; an edited
		// row is refused when read (TestKeyRefusesForgedRows).
		`CREATE TABLE flakegate.x (y int)`,
		`DELETE FROM flakegate.check_triples`,
		`DELETE FROM flakegate.checks`,
		`SELECT secret FROM flakegate.seed_secret`,
		`DELETE FROM flakegate.seed_secret`,
	} {
		err := exec(t, runner, sql)
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("%s as the runner role: %v, want permission denied", sql, err)
		}
	}
}
