package report

import (
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkSuiteReports renders every report of a 6,000-result summary
// (2,000 Go tests × 3 seeds, plus 4 property triples) to io.Discard. The
// "json" case is the peer bench/reports.sh divides by: encoding the same
// summary as check --json does.
func BenchmarkSuiteReports(b *testing.B) {
	s := suiteSummary(sixThousand)
	for _, bc := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"json", func(w io.Writer) error { return json.NewEncoder(w).Encode(s) }},
		{"markdown", func(w io.Writer) error { return Markdown(w, s) }},
		{"junit", func(w io.Writer) error { return JUnit(w, s) }},
		{"html", func(w io.Writer) error { return SummaryHTML(w, s) }},
		{"github", func(w io.Writer) error { return GitHubAnnotations(w, s) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.write(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
