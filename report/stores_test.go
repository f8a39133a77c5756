package report

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestLoadHTMLDataStores reads the embedded store and PostgreSQL after the
// same ledger history, so the report reads what the real stores write:
// their audit lines, their grant events, their record iteration.
func TestLoadHTMLDataStores(t *testing.T) {
	type testCase struct {
		name string
		open func(t *testing.T) flakegate.Store
	}
	run := func(t *testing.T, tc testCase) {
		ctx := context.Background()
		st := tc.open(t)
		defer st.Close()
		at := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
		labels := []flakegate.Label{flakegate.Pass, flakegate.Scheduler, flakegate.Property, flakegate.Scheduler, flakegate.Budget}
		for i := range 40 {
			_, raw := makeRecord(t, "tests/props/test_retry_budget.py", 1400+i%4, labels[i%len(labels)], at.Add(time.Duration(i)*time.Minute), i)
			if err := st.PutRecord(ctx, fmt.Sprintf("%x", sha256.Sum256(raw)), raw); err != nil {
				t.Fatal(err)
			}
		}
		freeze := func(seed string, runs int) flakegate.Freeze {
			return flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: "tests/props/test_retry_budget.py", Seed: flakegate.Seed(seed),
				FixtureSHA256: testFixture, ExpiresAfterRuns: runs, Owner: "alice@example.com",
				RecordSHA256: fmt.Sprintf("%x", sha256.Sum256([]byte(seed))), PropertySHA256: testFixture, GrantedAt: at, GrantedBy: "alice"}
		}
		keep, expire, void := freeze("1401", 10), freeze("1402", 1), freeze("1403", 5)
		for _, f := range []flakegate.Freeze{keep, expire, void} {
			if err := st.Grant(ctx, f, false); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []flakegate.Freeze{keep, keep, expire} {
			if _, err := st.Consume(ctx, f.Triple(), f.RecordSHA256, "flakegate check"); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Remove(ctx, void.Triple(), flakegate.ActionVoid, "flakegate check", "the check failed: PROPERTY"); err != nil {
			t.Fatal(err)
		}

		d, err := LoadHTMLData(ctx, st, reportNow)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Freezes) != 1 || d.Freezes[0].Seed != "1401" || d.Freezes[0].ExpiresAfterRuns != 8 || d.Freezes[0].GrantedRuns != 10 {
			t.Errorf("freezes = %+v, want 1401 with 8 of 10 runs left", d.Freezes)
		}
		if len(d.Removed) != 2 || d.Removed[0].Action != flakegate.ActionVoid || d.Removed[0].Triple.Seed != "1403" ||
			d.Removed[1].Action != flakegate.ActionExpire || d.Removed[1].Triple.Seed != "1402" {
			t.Errorf("removed = %+v, want the void of 1403 then the expiry of 1402", d.Removed)
		}
		if d.BadAuditLines != 0 || d.AuditEvents < 7 {
			t.Errorf("audit: %d events, %d unreadable", d.AuditEvents, d.BadAuditLines)
		}
		if d.Records != 40 || d.Recent != 40 || len(d.Properties) != 1 || d.Properties[0].Counts[flakegate.Scheduler] != 16 {
			t.Errorf("records %d recent %d properties %+v", d.Records, d.Recent, d.Properties)
		}
		if len(d.Schedulers) != 4 || d.Schedulers[0].Schedulers+d.Schedulers[1].Schedulers+d.Schedulers[2].Schedulers+d.Schedulers[3].Schedulers != 16 {
			t.Errorf("schedulers = %+v", d.Schedulers)
		}
	}
	for _, tc := range []testCase{
		{"embedded", func(t *testing.T) flakegate.Store {
			s, err := filestore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"postgres", func(t *testing.T) flakegate.Store {
			s, err := postgres.Open(context.Background(), pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
