package flakegate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
)

var ctx = context.Background()

var (
	propSHA    = strings.Repeat("b", 64)
	fixtureSHA = strings.Repeat("f", 64)
	grantTime  = time.Date(2026, 5, 4, 10, 11, 12, 0, time.UTC)
)

// record returns a run record's bytes: SCHEDULER unless change alters it.
// change maps a key to its JSON value text.
func record(seed string, change map[string]string) []byte {
	fields := [][2]string{
		{"run_id", `"r-` + strings.Trim(seed, `"`) + `"`},
		{"seed", seed},
		{"property_path", `"tests/props/test_retry_budget.py"`},
		{"property_sha256", `"` + propSHA + `"`},
		{"fixture_sha256", `"` + fixtureSHA + `"`},
		{"base_fixture_sha256", `"` + fixtureSHA + `"`},
		{"diff_paths", `["src/retry.py"]`},
		{"candidate_result", `"fail"`},
		{"base_seed_result", `"pass"`},
		{"retry_results", `["fail","pass"]`},
		{"retry_cap", `2`},
		{"budget_ok", `true`},
		{"transcript_complete", `true`},
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, f := range fields {
		v := f[1]
		if c, ok := change[f[0]]; ok {
			v = c
		}
		fmt.Fprintf(&b, "  %q: %s", f[0], v)
		if i < len(fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

func triple(seed string) flakegate.Triple {
	return flakegate.Triple{PropertyPath: "tests/props/test_retry_budget.py", Seed: flakegate.Seed(seed), FixtureSHA256: fixtureSHA}
}

func openStore(t *testing.T) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func grant(t *testing.T, s flakegate.Store, raw []byte, runs int) flakegate.Freeze {
	t.Helper()
	f, err := flakegate.GrantRecord(ctx, s, raw, "reviewer-a", runs, false, "", grantTime)
	if err != nil {
		t.Fatalf("GrantRecord: %v", err)
	}
	return f
}

func auditActions(t *testing.T, s flakegate.Store) string {
	t.Helper()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	var out []string
	for _, l := range lines {
		e, err := flakegate.ParseAuditLine(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s:%d", e.Action, e.RunsLeft))
	}
	return strings.Join(out, " ")
}

func TestSkipLifecycle(t *testing.T) {
	s := openStore(t)
	raw := record("1402", nil)
	f := grant(t, s, raw, 3)
	if f.Owner != "reviewer-a" || f.GrantedBy != "reviewer-a" || f.ExpiresAfterRuns != 3 || f.PropertySHA256 != propSHA || !f.GrantedAt.Equal(grantTime) {
		t.Fatalf("granted freeze: %+v", f)
	}
	want, err := flakegate.RecordSHA256(raw)
	if err != nil || f.RecordSHA256 != want {
		t.Fatalf("record_sha256 %s, want %s (%v)", f.RecordSHA256, want, err)
	}
	stored, err := s.GetRecord(ctx, f.RecordSHA256)
	if err != nil || string(stored) != string(raw) {
		t.Fatalf("stored record: %q, %v; want the exact bytes", stored, err)
	}
	for left := 2; left >= 0; left-- {
		d, err := flakegate.Skip(ctx, s, triple("1402"), propSHA, "ci")
		if err != nil || !d.Skipped || d.RunsLeft != left || d.Voided {
			t.Fatalf("Skip: %+v, %v; want skipped with %d left", d, err, left)
		}
		// Other seeds of the same property always run.
		d, err = flakegate.Skip(ctx, s, triple("1403"), propSHA, "ci")
		if err != nil || d.Skipped || d.Voided {
			t.Fatalf("Skip of another seed: %+v, %v", d, err)
		}
	}
	if _, err := s.GetFreeze(ctx, triple("1402")); flakegate.ErrorCode(err) != flakegate.ENOTFOUND {
		t.Fatalf("freeze after the last skip: %v, want it deleted", err)
	}
	d, err := flakegate.Skip(ctx, s, triple("1402"), propSHA, "ci")
	if err != nil || d.Skipped || d.Voided {
		t.Fatalf("Skip after expiry: %+v, %v; want the triple to run", d, err)
	}
	if got, want := auditActions(t, s), "grant:3 skip:2 skip:1 skip:0 expire:0"; got != want {
		t.Fatalf("audit log: %s, want %s", got, want)
	}
}

// TestSkipVoids: every failed check voids the freeze, the triple runs, and
// the void is in the audit log.
func TestSkipVoids(t *testing.T) {
	type testCase struct {
		name string
		// setup breaks the freeze of seed 1402 in the store at dir.
		setup  func(t *testing.T, s *filestore.Store, f flakegate.Freeze)
		prop   string // the property digest the run passes
		reason string
	}
	recordPath := func(s *filestore.Store, f flakegate.Freeze) string {
		return filepath.Join(s.Dir(), filestore.RecordsDir, f.RecordSHA256+".json")
	}
	// regrant writes f changed by change around GrantRecord's checks.
	regrant := func(t *testing.T, s flakegate.Store, f flakegate.Freeze, change func(*flakegate.Freeze)) {
		change(&f)
		if err := s.Grant(ctx, f, true); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, tc testCase) {
		s := openStore(t)
		f := grant(t, s, record("1402", nil), 5)
		tc.setup(t, s, f)
		d, err := flakegate.Skip(ctx, s, f.Triple(), tc.prop, "ci")
		if err != nil {
			t.Fatal(err)
		}
		if d.Skipped || !d.Voided || !strings.Contains(d.Reason, tc.reason) {
			t.Fatalf("Skip: %+v; want voided with a reason containing %q", d, tc.reason)
		}
		if _, err := s.GetFreeze(ctx, f.Triple()); flakegate.ErrorCode(err) != flakegate.ENOTFOUND {
			t.Fatalf("the voided freeze is still there: %v", err)
		}
		if a := auditActions(t, s); !strings.HasSuffix(a, " void:5") {
			t.Fatalf("audit log: %s, want it to end with void:5", a)
		}
	}
	for _, tc := range []testCase{
		{"tampered record", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			raw := record("1402", map[string]string{"retry_results": `["pass"]`})
			os.WriteFile(recordPath(s, f), raw, 0o644)
		}, propSHA, "now hashes to"},
		{"record not json", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			os.WriteFile(recordPath(s, f), []byte("{\"seed\":"), 0o644)
		}, propSHA, "no longer a JSON record"},
		{"record missing", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			os.Remove(recordPath(s, f))
		}, propSHA, "is missing"},
		{"property digest changed", func(*testing.T, *filestore.Store, flakegate.Freeze) {}, strings.Repeat("c", 64), "the property file changed"},
		{"record classifies PROPERTY", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			raw := record("1402", map[string]string{"retry_results": `["fail","fail"]`})
			sha, _ := flakegate.RecordSHA256(raw)
			s.PutRecord(ctx, sha, raw)
			regrant(t, s, f, func(f *flakegate.Freeze) { f.RecordSHA256 = sha })
		}, propSHA, "classifies PROPERTY"},
		{"record of another seed", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			raw := record("1403", nil)
			sha, _ := flakegate.RecordSHA256(raw)
			s.PutRecord(ctx, sha, raw)
			regrant(t, s, f, func(f *flakegate.Freeze) { f.RecordSHA256 = sha })
		}, propSHA, "seed 1403"},
		{"entry's property digest edited", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			regrant(t, s, f, func(f *flakegate.Freeze) { f.PropertySHA256 = strings.Repeat("c", 64) })
		}, strings.Repeat("c", 64), "differs from the record's"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestSkipChangedFixture: a new fixture digest is a new triple; the old
// freeze no longer matches and stays as it was.
func TestSkipChangedFixture(t *testing.T) {
	s := openStore(t)
	f := grant(t, s, record("1402", nil), 5)
	other := f.Triple()
	other.FixtureSHA256 = strings.Repeat("e", 64)
	d, err := flakegate.Skip(ctx, s, other, propSHA, "ci")
	if err != nil || d.Skipped || d.Voided {
		t.Fatalf("Skip with a changed fixture: %+v, %v; want the triple to run", d, err)
	}
	g, err := s.GetFreeze(ctx, f.Triple())
	if err != nil || g.ExpiresAfterRuns != 5 {
		t.Fatalf("the old freeze changed: %+v, %v", g, err)
	}
}

func TestSkipBadInput(t *testing.T) {
	s := openStore(t)
	grant(t, s, record("1402", nil), 5)
	if _, err := flakegate.Skip(ctx, s, triple("1402"), "", "ci"); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Fatalf("Skip without a property digest: %v, want EINVALID", err)
	}
	if _, err := flakegate.Skip(ctx, s, triple("1 2"), propSHA, "ci"); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Fatalf("Skip with a bad seed: %v, want EINVALID", err)
	}
	if a := auditActions(t, s); a != "grant:5" {
		t.Fatalf("bad input changed the log: %s", a)
	}
}

func TestGrantRecord(t *testing.T) {
	type testCase struct {
		name    string
		raw     []byte
		owner   string
		runs    int
		replace bool
		code    string
		message string
	}
	run := func(t *testing.T, tc testCase) {
		s := openStore(t)
		grant(t, s, record(`"existing"`, nil), 4)
		_, err := flakegate.GrantRecord(ctx, s, tc.raw, tc.owner, tc.runs, tc.replace, "", grantTime)
		if got := flakegate.ErrorCode(err); got != tc.code {
			t.Fatalf("GrantRecord: %v (code %q), want code %q", err, got, tc.code)
		}
		if err != nil && !strings.Contains(err.Error(), tc.message) {
			t.Fatalf("GrantRecord: %v, want a message containing %q", err, tc.message)
		}
		// The domain names no command-line flag; the CLI adds its own.
		if hint := flakegate.ErrorHint(err); strings.Contains(hint, "--") {
			t.Errorf("hint %q names a flag", hint)
		}
		records := 0
		s.EachRecord(ctx, func(string, []byte) error { records++; return nil })
		a := auditActions(t, s)
		switch {
		case err != nil && (records != 1 || a != "grant:4"):
			t.Fatalf("a refused grant left %d records and log %s", records, a)
		case err == nil && !strings.HasPrefix(a, "grant:4 grant:"):
			t.Fatalf("audit log: %s", a)
		}
	}
	for _, tc := range []testCase{
		{"scheduler", record("1402", nil), "reviewer-a", 20, false, "", ""},
		{"string seed", record(`"nightly-3"`, nil), "reviewer-a", 100, false, "", ""},
		{"property", record("1402", map[string]string{"base_seed_result": `"fail"`}), "r", 5, false, flakegate.EREJECT, "classifies PROPERTY"},
		{"fixture", record("1402", map[string]string{"base_fixture_sha256": `"abc"`}), "r", 5, false, flakegate.EREJECT, "classifies FIXTURE"},
		{"not json", []byte("not json"), "r", 5, false, flakegate.EREJECT, "classifies INCOMPLETE"},
		{"empty owner", record("1402", nil), "  ", 5, false, flakegate.EINVALID, "owner is empty"},
		{"zero runs", record("1402", nil), "r", 0, false, flakegate.EINVALID, "runs is 0"},
		{"above the maximum", record("1402", nil), "r", flakegate.MaxFreezeRuns + 1, false, flakegate.EINVALID, "1 to 100 runs"},
		{"second freeze", record(`"existing"`, map[string]string{"run_id": `"r-2"`}), "r", 5, false, flakegate.ECONFLICT, "already has a freeze"},
		{"second freeze replaced", record(`"existing"`, map[string]string{"run_id": `"r-2"`}), "r", 5, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestVerifyLedger(t *testing.T) {
	type testCase struct {
		name   string
		break_ func(t *testing.T, s *filestore.Store, f flakegate.Freeze)
		// reasons lists a part of every problem's reason, in order.
		reasons []string
	}
	editFile := func(t *testing.T, path, old, new string) {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(raw), old, new, 1)
		if edited == string(raw) {
			t.Fatalf("%s: %q not found", path, old)
		}
		os.WriteFile(path, []byte(edited), 0o644)
	}
	ledger := func(s *filestore.Store) string { return filepath.Join(s.Dir(), filestore.LedgerFile) }
	audit := func(s *filestore.Store) string { return filepath.Join(s.Dir(), filestore.AuditFile) }
	run := func(t *testing.T, tc testCase) {
		s := openStore(t)
		f := grant(t, s, record("1402", nil), 5)
		grant(t, s, record("1403", nil), 7)
		if _, err := flakegate.Skip(ctx, s, f.Triple(), propSHA, "ci"); err != nil {
			t.Fatal(err)
		}
		tc.break_(t, s, f)
		rep, err := flakegate.VerifyLedger(ctx, s, "verify")
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != len(tc.reasons) {
			t.Fatalf("verify found %d problems, want %d: %+v", len(rep.Problems), len(tc.reasons), rep.Problems)
		}
		for i, p := range rep.Problems {
			if !strings.Contains(p.Reason, tc.reasons[i]) {
				t.Fatalf("problem %d: %q, want it to contain %q", i+1, p.Reason, tc.reasons[i])
			}
		}
		// After the voids, a second verify finds the store consistent,
		// unless the log itself is broken (that stays visible).
		rep2, err := flakegate.VerifyLedger(ctx, s, "verify")
		if err != nil {
			t.Fatal(err)
		}
		broken := len(rep.Problems) > 0 && rep.Problems[0].Triple == nil
		if broken != !rep2.OK() {
			t.Fatalf("second verify: %+v", rep2.Problems)
		}
		if !broken {
			if _, err := flakegate.ReplayAudit(mustLines(t, s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []testCase{
		{"clean", func(*testing.T, *filestore.Store, flakegate.Freeze) {}, nil},
		{"freeze extended by hand", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			editFile(t, ledger(s), `"expires_after_runs": 4`, `"expires_after_runs": 40`)
		}, []string{"expires_after_runs is 40 in the ledger but 4 in the audit log"}},
		{"owner changed by hand", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			editFile(t, ledger(s), `"owner": "reviewer-a"`, `"owner": "mallory"`)
		}, []string{"owner is mallory in the ledger but reviewer-a in the audit log"}},
		{"record tampered", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			path := filepath.Join(s.Dir(), filestore.RecordsDir, f.RecordSHA256+".json")
			editFile(t, path, `"r-1402"`, `"r-9999"`)
		}, []string{"now hashes to"}},
		{"entry removed by hand", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			editFile(t, ledger(s), `"seed": 1402`, `"seed": 1404`)
		}, []string{"never granted", "removed from the ledger by hand"}},
		{"audit line changed", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			editFile(t, audit(s), `"owner":"reviewer-a"`, `"owner":"mallory"`)
		}, []string{"audit log line 2: prev_sha256", "chain is broken", "chain is broken"}},
		{"audit line removed", func(t *testing.T, s *filestore.Store, f flakegate.Freeze) {
			raw, _ := os.ReadFile(audit(s))
			lines := strings.SplitAfter(string(raw), "\n")
			os.WriteFile(audit(s), []byte(lines[0]+lines[2]), 0o644)
		}, []string{"audit log line 2: prev_sha256", "chain is broken", "chain is broken"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func mustLines(t *testing.T, s flakegate.Store) [][]byte {
	t.Helper()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
