package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// TestIsolationShown: an unsandboxed check is flagged in every report,
// and a sandboxed one says so where a summary is shown.
func TestIsolationShown(t *testing.T) {
	sum := func(iso string) *flakegate.Summary {
		return &flakegate.Summary{Verdict: "pass", Base: strings.Repeat("a", 40), Candidate: strings.Repeat("b", 40), Isolation: iso,
			Results: []flakegate.Result{{PropertyPath: "p.py", Seed: "1", Label: flakegate.Scheduler, Isolation: iso}}}
	}
	type testCase struct {
		name  string
		write func(*bytes.Buffer, *flakegate.Summary) error
		none  string // in the output of an unsandboxed summary
		bwrap string // in the output of a sandboxed one ("" means nothing)
	}
	run := func(t *testing.T, tc testCase) {
		var none, bwrap, plain bytes.Buffer
		if err := tc.write(&none, sum("none")); err != nil {
			t.Fatal(err)
		}
		if err := tc.write(&bwrap, sum("bwrap")); err != nil {
			t.Fatal(err)
		}
		if err := tc.write(&plain, sum("")); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(none.String(), tc.none) {
			t.Errorf("unsandboxed output lacks %q:\n%s", tc.none, none.String())
		}
		if tc.bwrap != "" && !strings.Contains(bwrap.String(), tc.bwrap) {
			t.Errorf("sandboxed output lacks %q:\n%s", tc.bwrap, bwrap.String())
		}
		if strings.Contains(plain.String(), "isolation") {
			t.Errorf("a summary without isolation mentions it:\n%s", plain.String())
		}
	}
	for _, tc := range []testCase{
		{name: "junit", write: func(b *bytes.Buffer, s *flakegate.Summary) error { return JUnit(b, s) },
			none: `<property name="flakegate.isolation" value="none">`, bwrap: `<property name="flakegate.isolation" value="bwrap">`},
		{name: "markdown", write: func(b *bytes.Buffer, s *flakegate.Summary) error { return Markdown(b, s) },
			none: "**not sandboxed** (isolation: none)", bwrap: "sandboxed (bwrap)"},
		{name: "github", write: func(b *bytes.Buffer, s *flakegate.Summary) error { return GitHubAnnotations(b, s) },
			none: "::warning title=flakegate not sandboxed::"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	t.Run("html", func(t *testing.T) {
		m := newMemStore()
		sha, raw := makeRecord(t, "p.py", 1, flakegate.Pass, time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC), 1)
		raw = bytes.Replace(raw, []byte(`"tool_version"`), []byte(`"isolation": "none", "tool_version"`), 1)
		m.PutRecord(context.Background(), sha, raw)
		d, err := LoadHTMLData(context.Background(), m, reportNow)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := HTML(&b, d); err != nil {
			t.Fatal(err)
		}
		if d.Unsandboxed != 1 || !strings.Contains(b.String(), "1 of these records ran without the sandbox") {
			t.Errorf("unsandboxed %d; the report does not say so", d.Unsandboxed)
		}
	})
}
