package report

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/internal/golden"
)

// TestDocsExamples keeps docs/example-* in step with the code: the JUnit
// XML, Markdown summary and annotations of testdata/summary.json, the
// Markdown summary and page of a check with suites, and the HTML report of
// the store the README's screenshot shows. Refresh them
// with -update.
func TestDocsExamples(t *testing.T) {
	type testCase struct {
		file  string
		write func(*bytes.Buffer) error
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil {
			t.Fatal(err)
		}
		golden.AssertFile(t, filepath.Join("..", "docs", tc.file), buf.Bytes())
	}
	s := loadSummary(t, "summary.json")
	suites := suiteSummary(docsSuiteShape)
	for _, tc := range []testCase{
		{"example-suite-summary.md", func(b *bytes.Buffer) error { return Markdown(b, suites) }},
		{"example-suite-check.html", func(b *bytes.Buffer) error { return SummaryHTML(b, suites) }},
		{"example-junit.xml", func(b *bytes.Buffer) error { return JUnit(b, s) }},
		{"example-summary.md", func(b *bytes.Buffer) error { return Markdown(b, s) }},
		{"example-annotations.txt", func(b *bytes.Buffer) error { return GitHubAnnotations(b, s) }},
		{"example-report.html", func(b *bytes.Buffer) error {
			d, err := LoadHTMLData(context.Background(), docsStore(t), reportNow)
			if err != nil {
				return err
			}
			return HTML(b, d)
		}},
	} {
		t.Run(tc.file, func(t *testing.T) { run(t, tc) })
	}
}

// docsSuiteShape is the summary of docs/example-suite-*: two suites of
// 72 and 90 triples and 4 property triples, with every kind of triple the
// big summaries have.
var docsSuiteShape = suiteShape{goPackages: 8, goTests: 3, pyFiles: 6, pyTests: 5, seeds: 3, properties: 4}

// docsStore is the store of docs/example-report.html and docs/report.png.
func docsStore(t testing.TB) *memStore { return bigStore(t, 3000, 9, 40) }
