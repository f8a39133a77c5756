package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// TestImpactInReports: a summary with impact says, in the Markdown and
// the JUnit, how many tests were not run again and how many runs the
// affected ones got; one without impact says nothing of it.
func TestImpactInReports(t *testing.T) {
	s := &flakegate.Summary{Verdict: flakegate.VerdictPass, Base: strings.Repeat("b", 40), Candidate: strings.Repeat("c", 40),
		Results: []flakegate.Result{{PropertyPath: "p9/p9_test.go", Name: "TestValue", Seed: "1", Label: flakegate.Pass, Suite: "suites[0]"}},
		Impact: []flakegate.SuiteImpact{{Suite: 0, Framework: "go", Path: "./...", Affected: 4, Unaffected: 36, Unit: "package", AffectedUnits: 1,
			UnaffectedUnits: 9, Seeds: 3, Runs: 12, Chance: 0.9923, Reached: []flakegate.Reach{{Unit: "./p9", Why: "p9/p9.go modified"}}}}}
	want := "unaffected: 36 tests (inputs identical to the base's), 9 packages not run again; affected: 4 tests in 1 package, 12 runs each: a 1-in-3 flake shows in 99.2% of checks"
	if got := s.Impact[0].Line(); got != want {
		t.Fatalf("line %q\nwant %q", got, want)
	}
	var md, ju bytes.Buffer
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Impact, suites[0] (`go` `./...`): unaffected: 36 tests") {
		t.Fatalf("markdown:\n%s", md.String())
	}
	if err := JUnit(&ju, s); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(ju.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, su := range doc.Suites {
		for _, p := range su.Props {
			found = found || p.Name == "flakegate.impact[suites[0]]" && p.Value == want
		}
	}
	if !found {
		t.Fatalf("junit has no impact property:\n%s", ju.String())
	}

	s.Impact = []flakegate.SuiteImpact{{Suite: 0, Framework: "go", Path: "./...", Undecided: "go list failed in the candidate's tree"}}
	if got := s.Impact[0].Line(); got != "every test ran: go list failed in the candidate's tree" {
		t.Fatalf("undecided line %q", got)
	}
	s.Impact = nil
	md.Reset()
	ju.Reset()
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&ju, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String()+ju.String(), "mpact") {
		t.Fatalf("a summary without impact names it:\n%s\n%s", md.String(), ju.String())
	}
}
