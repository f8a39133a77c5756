package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

var reportNow = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// smallStore holds a few of everything, with known counts.
func smallStore(t testing.TB) *memStore {
	t.Helper()
	ctx := context.Background()
	m := newMemStore()
	at := func(h int) time.Time { return time.Date(2026, 11, 29, h, 0, 0, 0, time.UTC) }
	put := func(path string, seed int, l flakegate.Label, h, run int) string {
		sha, raw := makeRecord(t, path, seed, l, at(h), run)
		m.PutRecord(ctx, sha, raw)
		return sha
	}
	sched := put("tests/props/test_retry_budget.py", 1401, flakegate.Scheduler, 1, 1)
	put("tests/props/test_retry_budget.py", 1401, flakegate.Scheduler, 2, 2)
	put("tests/props/test_retry_budget.py", 1401, flakegate.Pass, 3, 3)
	put("tests/props/test_retry_budget.py", 1400, flakegate.Pass, 4, 4)
	put("tests/props/test_parser.py", 7, flakegate.Property, 5, 5)
	put("tests/props/test_parser.py", 8, flakegate.Scheduler, 6, 6)
	put("tests/props/test_parser.py", 9, flakegate.Incomplete, 7, 7)
	m.PutRecord(ctx, "not-json", []byte("{\"property_path\": 3,"))

	keep := flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: "tests/props/test_retry_budget.py", Seed: "1401",
		FixtureSHA256: testFixture, ExpiresAfterRuns: 10, Owner: "alice@example.com", RecordSHA256: sched,
		PropertySHA256: testFixture, GrantedAt: at(2), GrantedBy: "alice@example.com"}
	m.Grant(ctx, keep, false)
	m.freezes[keep.Triple().Key()] = withRuns(keep, 4)
	gone := keep
	gone.Seed, gone.ExpiresAfterRuns, gone.Owner = "8", 3, "bob@example.com"
	gone.PropertyPath = "tests/props/test_parser.py"
	m.Grant(ctx, gone, false)
	m.Remove(ctx, gone.Triple(), flakegate.ActionVoid, "flakegate check", "the check failed: PROPERTY")
	m.audit[len(m.audit)-1] = []byte(strings.Replace(string(m.audit[len(m.audit)-1]), `"at":"0001-01-01T00:00:00Z"`, `"at":"2026-11-29T08:00:00Z"`, 1))
	m.event(flakegate.AuditEvent{Action: flakegate.ActionExpire, At: at(9), By: "flakegate check", Triple: flakegate.Triple{PropertyPath: "tests/props/test_cache.py", Seed: "11", FixtureSHA256: testFixture}, Reason: "no runs left"})
	m.audit = append(m.audit, []byte("{not an event"))
	return m
}

type failingRecords struct {
	*memStore
}

func (failingRecords) EachRecord(context.Context, func(string, []byte) error) error {
	return errors.New("disk on fire")
}

func TestLoadHTMLData(t *testing.T) {
	type testCase struct {
		name    string
		store   flakegate.Store
		wantErr string
		check   func(t *testing.T, d *HTMLData)
	}
	run := func(t *testing.T, tc testCase) {
		d, err := LoadHTMLData(context.Background(), tc.store, reportNow)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		tc.check(t, d)
	}
	for _, tc := range []testCase{
		{
			name:  "empty store",
			store: newMemStore(),
			check: func(t *testing.T, d *HTMLData) {
				if len(d.Freezes)+d.Records+d.Recent+len(d.Properties)+len(d.Schedulers)+len(d.Removed) != 0 || !d.GeneratedAt.Equal(reportNow) {
					t.Errorf("empty store gives %+v", d)
				}
			},
		},
		{
			name:  "small store",
			store: smallStore(t),
			check: func(t *testing.T, d *HTMLData) {
				if len(d.Freezes) != 1 || d.Freezes[0].ExpiresAfterRuns != 4 || d.Freezes[0].GrantedRuns != 10 || d.Freezes[0].RunsFraction() != 0.4 {
					t.Errorf("freezes = %+v, want one with 4 of 10 runs left", d.Freezes)
				}
				if d.Records != 8 || d.Recent != 8 {
					t.Errorf("records %d recent %d, want 8 and 8", d.Records, d.Recent)
				}
				got := map[string]string{}
				for _, p := range d.Properties {
					got[p.PropertyPath] = fmt.Sprintf("%d P%d S%d R%d I%d", p.Total, p.Counts[flakegate.Pass], p.Counts[flakegate.Scheduler], p.Counts[flakegate.Property], p.Counts[flakegate.Incomplete])
				}
				want := map[string]string{
					"tests/props/test_retry_budget.py": "4 P2 S2 R0 I0",
					"tests/props/test_parser.py":       "3 P0 S1 R1 I1",
					unreadablePath:                     "1 P0 S0 R0 I1",
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("labels per property\n got %v\nwant %v", got, want)
				}
				if d.Properties[0].PropertyPath != "tests/props/test_retry_budget.py" {
					t.Errorf("most checked property first, got %s", d.Properties[0].PropertyPath)
				}
				if len(d.Schedulers) != 2 {
					t.Fatalf("schedulers = %+v", d.Schedulers)
				}
				top := d.Schedulers[0]
				if top.PropertyPath != "tests/props/test_retry_budget.py" || top.Seed != "1401" || top.Schedulers != 2 || top.Records != 3 || !top.Last.Equal(time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)) {
					t.Errorf("top SCHEDULER triple = %+v", top)
				}
				if len(d.Removed) != 2 || d.Removed[0].Action != flakegate.ActionExpire || d.Removed[1].Action != flakegate.ActionVoid {
					t.Errorf("removed = %+v, want the expiry then the void", d.Removed)
				}
				if d.AuditEvents != 5 || d.BadAuditLines != 1 {
					t.Errorf("audit events %d bad %d, want 5 and 1", d.AuditEvents, d.BadAuditLines)
				}
			},
		},
		{
			name:  "only the newest records are charted",
			store: bigStore(t, MaxRecentChecks+700, 0, 0),
			check: func(t *testing.T, d *HTMLData) {
				start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
				if d.Records != MaxRecentChecks+700 || d.Recent != MaxRecentChecks {
					t.Errorf("records %d recent %d", d.Records, d.Recent)
				}
				total := 0
				for _, p := range d.Properties {
					total += p.Total
				}
				if total != MaxRecentChecks {
					t.Errorf("chart counts %d records, want %d", total, MaxRecentChecks)
				}
				if want := start.Add(700 * 17 * time.Minute); !d.RecentFrom.Equal(want) {
					t.Errorf("recent from %v, want %v", d.RecentFrom, want)
				}
				if want := start.Add((MaxRecentChecks + 699) * 17 * time.Minute); !d.RecentTo.Equal(want) {
					t.Errorf("recent to %v, want %v", d.RecentTo, want)
				}
			},
		},
		{
			name:    "store error",
			store:   failingRecords{newMemStore()},
			wantErr: "disk on fire",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestHTMLGolden(t *testing.T) {
	d, err := LoadHTMLData(context.Background(), smallStore(t), reportNow)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "report.golden.html", buf.Bytes())
}

func TestHTML(t *testing.T) {
	type testCase struct {
		name                      string
		records, freezes, removed int
		want                      map[string]int // substring -> count
	}
	run := func(t *testing.T, tc testCase) {
		d, err := LoadHTMLData(context.Background(), bigStore(t, tc.records, tc.freezes, tc.removed), reportNow)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := HTML(&buf, d); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		// Self-contained: nothing the browser would fetch.
		lower := strings.ToLower(page)
		for _, bad := range []string{"<script", "src=", "url(", "@import", "http:", "https:", "<link", "<iframe", "<img", "<object", "<embed"} {
			if strings.Contains(lower, bad) {
				t.Errorf("page contains %q", bad)
			}
		}
		// Links only jump inside the page.
		if n, local := strings.Count(lower, "href="), strings.Count(lower, `href="#`); n != local {
			t.Errorf("%d links, %d of them within the page", n, local)
		}
		for sub, n := range tc.want {
			if got := strings.Count(page, sub); got != n {
				t.Errorf("%d × %q, want %d", got, sub, n)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "empty", want: map[string]int{"The ledger holds no freezes.": 1, "No run records are stored yet.": 1, `<g class="row">`: 0}},
		{name: "few", records: 40, freezes: 12, removed: 3, want: map[string]int{`<tr class="freeze">`: 12, "<details>": 0, `<g class="row">`: 11}},
		{name: "thousands", records: 3000, freezes: 1500, removed: 400, want: map[string]int{
			`<tr class="freeze">`: 1500, "Show 1450 more freezes": 1, "Show 350 older events": 1,
			`<span class="badge void">`: 134, `<span class="badge expire">`: 266,
		}},
		{name: "too many to list", records: 10, freezes: htmlRowsMax + 20, want: map[string]int{
			`<tr class="freeze">`: htmlRowsMax, "20 more not shown": 1,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestEllipsizeLeft(t *testing.T) {
	type testCase struct {
		in   string
		n    int
		want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := ellipsizeLeft(tc.in, tc.n); got != tc.want {
			t.Errorf("ellipsizeLeft(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"short.py", 10, "short.py"},
		{"a/b/c/d/e.py", 6, "…/e.py"},
		{"ñññññ/x", 4, "…ñ/x"},
	} {
		t.Run(tc.in+strconv.Itoa(tc.n), func(t *testing.T) { run(t, tc) })
	}
}

// BenchmarkLoadHTMLData reads a store of 5000 records, 1500 freezes and
// 600 removed freezes; ns/op over 5000 is the cost per record.
func BenchmarkLoadHTMLData(b *testing.B) {
	store := bigStore(b, 5000, 1500, 600)
	ctx := context.Background()
	for b.Loop() {
		if _, err := LoadHTMLData(ctx, store, reportNow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTML renders the page for the same store.
func BenchmarkHTML(b *testing.B) {
	d, err := LoadHTMLData(context.Background(), bigStore(b, 5000, 1500, 600), reportNow)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := HTML(&buf, d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/page")
}

// TestHTMLRejectOutput: a recent reject shows its test name, the failing
// attempt's output and the falsifying example the framework printed.
func TestHTMLRejectOutput(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	_, raw := makeRecord(t, "tests/test_x.py", 5, flakegate.Property, time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC), 1)
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["name"] = "test_budget"
	rec["attempts"] = []flakegate.Attempt{
		{Side: "candidate", Result: "fail", ExitCode: 1, StartedAt: reportNow,
			OutputTail: "F\n=== FAILURES ===\nE   AssertionError\nFalsifying example: test_budget(\n    attempts=3,\n)\n\n1 failed in 0.5s\n"},
		{Side: "base", Result: "pass", StartedAt: reportNow, OutputTail: "1 passed\n"},
	}
	raw, _ = json.Marshal(rec)
	sha, err := flakegate.RecordSHA256(raw)
	if err != nil {
		t.Fatal(err)
	}
	m.PutRecord(ctx, sha, raw)
	d, err := LoadHTMLData(ctx, m, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Rejects) != 1 || d.Rejects[0].Name != "test_budget" || d.Rejects[0].Example != "Falsifying example: test_budget(\n    attempts=3,\n)" {
		t.Fatalf("rejects: %+v", d.Rejects)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tests/test_x.py::test_budget", "candidate run output", "attempts=3", "1 failed in 0.5s", `<tr class="reject">`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestFalsifyingExample(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"x\nFalsifying example: f(\n    n=1,\n)\n\nmore\n", "Falsifying example: f(\n    n=1,\n)"},
		{"E   Falsifying example: f(\nE       n=1,\nE   )\n-------- Hypothesis ----\n", "E   Falsifying example: f(\nE       n=1,\nE   )"},
		{"--- FAIL: TestX (0.01s)\n    x_test.go:9: [rapid] failed after 2 tests: boom\n        To reproduce, specify -run=\"TestX\" -rapid.seed=7\n    x_test.go:12: [rapid] draw n: 4\nFAIL\n",
			"    x_test.go:9: [rapid] failed after 2 tests: boom\n        To reproduce, specify -run=\"TestX\" -rapid.seed=7\n    x_test.go:12: [rapid] draw n: 4"},
		{"plain failure\n", ""},
	} {
		if got := FalsifyingExample(tc.out); got != tc.want {
			t.Errorf("FalsifyingExample(%q)\n got %q\nwant %q", tc.out, got, tc.want)
		}
	}
}

// TestHTMLOriginAndCandidates: the page names records, not checks; a
// freeze shows the candidate whose record earned it, the SCHEDULER table
// the latest flake origin and probe results, a reject its candidate and
// base.
func TestHTMLOriginAndCandidates(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	edit := func(raw []byte, keys map[string]any) (string, []byte) {
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		for k, v := range keys {
			rec[k] = v
		}
		raw, _ = json.Marshal(rec)
		sha, err := flakegate.RecordSHA256(raw)
		if err != nil {
			t.Fatal(err)
		}
		m.PutRecord(ctx, sha, raw)
		return sha, raw
	}
	at := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	cand := "c0ffee0000000000000000000000000000000001"
	base := "ba5e000000000000000000000000000000000002"
	_, raw := makeRecord(t, "tests/test_x.py", 5, flakegate.Scheduler, at, 1)
	sched, _ := edit(raw, map[string]any{"candidate_sha": cand, "base_sha": base, "flake_origin": "new", "base_probe_results": []string{"pass", "pass", "pass"}})
	_, raw = makeRecord(t, "tests/test_x.py", 6, flakegate.Property, at, 2)
	edit(raw, map[string]any{"candidate_sha": cand, "base_sha": base})
	f := flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: "tests/test_x.py", Seed: "5", FixtureSHA256: testFixture,
		ExpiresAfterRuns: 3, Owner: "alice", RecordSHA256: sched, PropertySHA256: testFixture, GrantedAt: at, GrantedBy: "alice"}
	m.Grant(ctx, f, false)
	d, err := LoadHTMLData(ctx, m, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Freezes) != 1 || d.Freezes[0].EarnedBy != cand || d.Freezes[0].Origin != "new" {
		t.Errorf("freezes: %+v", d.Freezes)
	}
	if len(d.Schedulers) != 1 || d.Schedulers[0].Origin != "new" || strings.Join(d.Schedulers[0].Probes, ",") != "pass,pass,pass" || d.Schedulers[0].NewFlakes != 1 {
		t.Errorf("schedulers: %+v", d.Schedulers)
	}
	if len(d.Rejects) != 1 || d.Rejects[0].CandidateSHA != cand || d.Rejects[0].BaseSHA != base {
		t.Errorf("rejects: %+v", d.Rejects)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"recent records in the chart", "Labels of recent records", "Earned by candidate", flakegate.ShortSHA(cand),
		flakegate.ShortSHA(base), "base probe: pass, pass, pass", "1 new", "new flake"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "recent checks") {
		t.Error("the page says checks where it means records")
	}
}

// TestHTMLReasonInWords: a record whose candidate attempt errored shows
// in the reason column what the attempt did, not only the table's type
// complaint.
func TestHTMLReasonInWords(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	_, raw := makeRecord(t, "tests/test_x.py", 5, flakegate.Property, time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC), 1)
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["candidate_result"] = "error"
	rec["command"] = []string{"/usr/bin/python3", "-m", "pytest", "-q", "tests/x.py", "--hypothesis-seed=5"}
	rec["attempts"] = []flakegate.Attempt{
		{Side: "candidate", Result: "error", ExitCode: 4, StartedAt: reportNow, OutputTail: "ERROR: file or directory not found: tests/x.py\n\nno tests ran in 0.01s\n"},
	}
	raw, _ = json.Marshal(rec)
	sha, err := flakegate.RecordSHA256(raw)
	if err != nil {
		t.Fatal(err)
	}
	m.PutRecord(ctx, sha, raw)
	d, err := LoadHTMLData(ctx, m, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	want := `the test never ran: candidate attempt 0: pytest exited 4 (usage error): ERROR: file or directory not found: tests/x.py (the record's candidate_result is "error")`
	if len(d.Rejects) != 1 || d.Rejects[0].Reason != want {
		t.Fatalf("rejects: %+v\nwant reason %q", d.Rejects, want)
	}
	var buf bytes.Buffer
	if err := HTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "pytest exited 4 (usage error): ERROR: file or directory not found: tests/x.py") {
		t.Errorf("the page lacks the reason:\n%s", buf.String())
	}
}
