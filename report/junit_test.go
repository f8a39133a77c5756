package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

// The model below is written from the JUnit/Surefire schema, apart from
// the encoder's structs, so that a field the writer gets wrong (a name, a
// nesting) shows up as a missing value here.
type xTestsuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []xTestsuite `xml:"testsuite"`
}

type xTestsuite struct {
	Name       string `xml:"name,attr"`
	Tests      int    `xml:"tests,attr"`
	Failures   int    `xml:"failures,attr"`
	Errors     int    `xml:"errors,attr"`
	Skipped    int    `xml:"skipped,attr"`
	Time       string `xml:"time,attr"`
	Properties struct {
		Property []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"property"`
	} `xml:"properties"`
	Testcases []xTestcase `xml:"testcase"`
}

type xTestcase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	FlakyFailures []struct {
		Message    string `xml:"message,attr"`
		Type       string `xml:"type,attr"`
		StackTrace string `xml:"stackTrace"`
		SystemOut  string `xml:"system-out"`
	} `xml:"flakyFailure"`
	SystemOut string `xml:"system-out"`
}

func TestXMLText(t *testing.T) {
	type testCase struct{ in, want string }
	run := func(t *testing.T, tc testCase) {
		if got := xmlText(tc.in); got != tc.want {
			t.Errorf("xmlText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"plain text\n", "plain text\n"},
		{"\x1b[31mred\x1b[0m \x1b[1;32mbold\x1b[m", "red bold"},
		{"nul\x00 bell\x07 esc\x1b", `nul\x00 bell\x07 esc\x1b`},
		{"\ufffe\uffff \U0001F600", "\ufffd\ufffd \U0001F600"},
		{"tab\tcr\r", `tab` + "\t" + `cr\x0d`},
		{"crlf\r\n", "crlf\n"},
		{"osc \x1b]52;c;aGk=\x07 c1 \u009b \x9b bad \xff", `osc \x1b]52;c;aGk=\x07 c1 \u009b \x9b bad \xff`},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JUnit(&buf, loadSummary(t, "summary.json")); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "junit.golden.xml", buf.Bytes())
}

// junitCases are the summaries the model and schema tests read.
func junitCases(t *testing.T) []struct {
	name string
	s    *flakegate.Summary
} {
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return []struct {
		name string
		s    *flakegate.Summary
	}{
		{"summary", loadSummary(t, "summary.json")},
		{"all labels", loadSummary(t, "all-labels.json")},
		{"empty", &flakegate.Summary{Verdict: "pass", Base: "b", Candidate: "c"}},
		{"odd text", &flakegate.Summary{Verdict: "reject", Results: []flakegate.Result{{
			PropertyPath: "tests/a&b/<p>.py", Seed: `"x.1:y-2"`, Label: flakegate.Incomplete,
			Reason:   "stray ]]> and \"quotes\" and \x1b[31mcolour\x1b[0m",
			Attempts: []flakegate.Attempt{{Side: "candidate", Result: "error", ExitCode: 2, StartedAt: at, OutputTail: "\x00nul \ufffe ok\n"}},
		}, {
			PropertyPath: "tests/a&b/<p>.py", Seed: "18446744073709551617", Label: flakegate.Scheduler, Freeze: true,
			Attempts: []flakegate.Attempt{
				{Side: "candidate", Index: 0, Result: "timeout", Signal: "KILL", StartedAt: at},
				{Side: "base", Index: 0, Result: "pass", StartedAt: at},
				{Side: "candidate", Index: 1, Result: "pass", StartedAt: at},
			},
		}, {
			PropertyPath: "p.py", Seed: "1", Label: flakegate.Scheduler, Skipped: true, RunsLeft: intPtr(1), Owner: "bob, team <x>",
		}}}},
	}
}

func TestJUnitModel(t *testing.T) {
	type testCase struct {
		name string
		s    *flakegate.Summary
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := JUnit(&buf, tc.s); err != nil {
			t.Fatal(err)
		}
		var doc xTestsuites
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, buf.Bytes())
		}
		var cases []xTestcase
		sumTests, sumFail, sumSkip := 0, 0, 0
		for _, su := range doc.Suites {
			if su.Tests != len(su.Testcases) {
				t.Errorf("suite %s: tests=%d, has %d testcases", su.Name, su.Tests, len(su.Testcases))
			}
			fail, skip := 0, 0
			for _, c := range su.Testcases {
				if c.Classname != su.Name {
					t.Errorf("testcase %s in suite %s has classname %s", c.Name, su.Name, c.Classname)
				}
				if c.Failure != nil {
					fail++
				}
				if c.Skipped != nil {
					skip++
				}
			}
			if su.Failures != fail || su.Skipped != skip || su.Errors != 0 {
				t.Errorf("suite %s: failures=%d skipped=%d errors=%d, counted %d and %d", su.Name, su.Failures, su.Skipped, su.Errors, fail, skip)
			}
			sumTests += su.Tests
			sumFail += su.Failures
			sumSkip += su.Skipped
			cases = append(cases, su.Testcases...)
		}
		if doc.Tests != sumTests || doc.Failures != sumFail || doc.Skipped != sumSkip {
			t.Errorf("testsuites counts %d/%d/%d, suites add up to %d/%d/%d", doc.Tests, doc.Failures, doc.Skipped, sumTests, sumFail, sumSkip)
		}
		if len(cases) != len(tc.s.Results) {
			t.Fatalf("%d testcases for %d results", len(cases), len(tc.s.Results))
		}
		// Suites group by path in first-seen order; results of one path
		// keep their order, so match them up by (classname, name).
		byID := map[string]xTestcase{}
		for _, c := range cases {
			byID[c.Classname+"\x00"+c.Name] = c
		}
		for _, r := range tc.s.Results {
			c, ok := byID[r.PropertyPath+"\x00"+junitName(&r)]
			if !ok {
				t.Errorf("no testcase for %s seed %s", r.PropertyPath, r.Seed)
				continue
			}
			if want := fmt.Sprintf("%.3f", r.Seconds); c.Time != want {
				t.Errorf("%s: time %q, want %q", c.Name, c.Time, want)
			}
			if c.Error != nil {
				t.Errorf("%s: an <error>; rejects are failures", c.Name)
			}
			switch {
			case r.Skipped:
				if c.Skipped == nil || c.Failure != nil || len(c.FlakyFailures) > 0 {
					t.Fatalf("%s: frozen skip is not just <skipped>: %+v", c.Name, c)
				}
				if !strings.Contains(c.Skipped.Message, r.Owner) || !strings.Contains(c.Skipped.Message, fmt.Sprint(*r.RunsLeft)) {
					t.Errorf("%s: skipped message %q lacks owner %q or runs left %d", c.Name, c.Skipped.Message, r.Owner, *r.RunsLeft)
				}
			case r.Label.Reject():
				if c.Failure == nil || c.Skipped != nil || len(c.FlakyFailures) > 0 {
					t.Fatalf("%s: reject %s is not just a <failure>: %+v", c.Name, r.Label, c)
				}
				if !strings.HasPrefix(c.Failure.Message, string(r.Label)+": ") || c.Failure.Type != string(r.Label) {
					t.Errorf("%s: failure message %q type %q, want the label %s first", c.Name, c.Failure.Message, c.Failure.Type, r.Label)
				}
				if r.Reason != "" && !strings.Contains(r.Reason, "\x1b") && !strings.Contains(c.Failure.Message, r.Reason) {
					t.Errorf("%s: failure message %q lacks the reason %q", c.Name, c.Failure.Message, r.Reason)
				}
				for _, a := range r.Attempts {
					if !strings.Contains(c.Failure.Text, attemptName(a)+": "+a.Result) {
						t.Errorf("%s: failure body lacks attempt %s %s:\n%s", c.Name, attemptName(a), a.Result, c.Failure.Text)
					}
				}
			case r.Label == flakegate.Scheduler:
				failed := 0
				for _, a := range r.Attempts {
					if a.Result != "pass" {
						failed++
					}
				}
				if c.Failure != nil || c.Skipped != nil || len(c.FlakyFailures) != failed || failed == 0 {
					t.Fatalf("%s: SCHEDULER wants a pass with %d flakyFailure, got %+v", c.Name, failed, c)
				}
				for _, f := range c.FlakyFailures {
					if !strings.HasPrefix(f.Message, "SCHEDULER: ") || f.Type == "pass" || f.StackTrace == "" {
						t.Errorf("%s: flakyFailure %+v", c.Name, f)
					}
				}
			default:
				if c.Failure != nil || c.Skipped != nil || len(c.FlakyFailures) > 0 {
					t.Errorf("%s: PASS has %+v", c.Name, c)
				}
			}
		}
	}
	for _, tc := range junitCases(t) {
		t.Run(tc.name, func(t *testing.T) { run(t, testCase{tc.name, tc.s}) })
	}
}

// TestJUnitSchema validates the output with libxml2's xmllint against
// testdata/junit.xsd, and checks that the schema does reject a bad file.
func TestJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is missing (Debian package libxml2-utils); CI must run this test")
		}
		t.Skip("xmllint not installed (apt-get install libxml2-utils)")
	}
	type testCase struct {
		name  string
		write func(*bytes.Buffer) error
		valid bool
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "junit.xml")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
		if tc.valid && err != nil {
			t.Fatalf("xmllint rejects the output: %v\n%s\n%s", err, out, buf.Bytes())
		}
		if !tc.valid && err == nil {
			t.Fatalf("xmllint accepts a file the schema forbids:\n%s", buf.Bytes())
		}
	}
	var cases []testCase
	for _, jc := range junitCases(t) {
		s := jc.s
		cases = append(cases, testCase{name: jc.name, write: func(b *bytes.Buffer) error { return JUnit(b, s) }, valid: true})
	}
	cases = append(cases,
		testCase{name: "failure and skipped together", valid: false, write: func(b *bytes.Buffer) error {
			b.WriteString(`<testsuites tests="1"><testsuite name="p" tests="1"><testcase name="1" classname="p"><skipped/><failure type="X"/></testcase></testsuite></testsuites>`)
			return nil
		}},
		testCase{name: "testcase without classname", valid: false, write: func(b *bytes.Buffer) error {
			b.WriteString(`<testsuites tests="1"><testsuite name="p" tests="1"><testcase name="1"/></testsuite></testsuites>`)
			return nil
		}},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
