package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// The JUnit model follows the Surefire report schema, which Jenkins,
// GitLab, GitHub test reporters and most CI views read: a reject is a
// <failure>, a frozen skip is <skipped>, and a SCHEDULER result is a pass
// that keeps each failed attempt as a <flakyFailure>.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitSkipped `xml:"skipped"`
	Failure   *junitFailure `xml:"failure"`
	Flaky     []junitFlaky  `xml:"flakyFailure"`
	SystemOut *cdata        `xml:"system-out"`
}

// cdata is element text written as a CDATA section, so multi-line output
// stays readable in the file.
type cdata struct {
	Text string `xml:",cdata"`
}

func newCDATA(s string) *cdata {
	if s == "" {
		return nil
	}
	return &cdata{Text: xmlText(s)}
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

type junitFlaky struct {
	Message    string `xml:"message,attr"`
	Type       string `xml:"type,attr"`
	StackTrace *cdata `xml:"stackTrace"`
	SystemOut  *cdata `xml:"system-out"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes s as JUnit XML: one <testsuite> per property path, in the
// order the paths first appear, and one <testcase> per triple with the
// property path as classname and "NAME seed=S" as name ("seed=S" for an
// entry without a name; a drawn seed adds " (drawn)"). A suite's triples
// get one <testsuite> per package or file (suites.go), where a passed
// triple is a bare <testcase>, and the new tests one <testsuite> per
// suite, a <testcase> each.
func JUnit(w io.Writer, s *flakegate.Summary) error {
	doc := junitSuites{Name: "flakegate"}
	index := map[string]int{}
	var total float64
	suiteTime := map[int]float64{}
	for i := range s.Results {
		r := &s.Results[i]
		key, name := r.PropertyPath, r.PropertyPath
		if r.Suite != "" {
			// A NUL cannot be in a path: suite groups never meet a property.
			key = r.Suite + "\x00" + groupKey(r.PropertyPath)
			name = xmlText(groupKey(r.PropertyPath))
		}
		k, ok := index[key]
		if !ok {
			k = len(doc.Suites)
			index[key] = k
			doc.Suites = append(doc.Suites, junitSuite{Name: name, Properties: junitSuiteProperties(s, r.Suite)})
		}
		suite := &doc.Suites[k]
		if r.FlakeOrigin != "" {
			// Test cases carry no properties in the schema: the suite names
			// each probed case's flake origin and probe results.
			suite.Properties = append(suite.Properties,
				junitProperty{Name: xmlText("flakegate.flake_origin[" + junitName(r) + "]"), Value: r.FlakeOrigin},
				junitProperty{Name: xmlText("flakegate.base_probe_results[" + junitName(r) + "]"), Value: strings.Join(r.BaseProbeResults, ",")})
		}
		suite.add(junitTestCase(r))
		suiteTime[k] += r.Seconds
		total += r.Seconds
	}
	for i := range doc.Suites {
		doc.Suites[i].Time = junitTime(suiteTime[i])
	}
	doc.Suites = append(doc.Suites, junitNewTests(s)...)
	for i := range doc.Suites {
		su := &doc.Suites[i]
		doc.Tests += su.Tests
		doc.Failures += su.Failures
		doc.Skipped += su.Skipped
	}
	doc.Time = junitTime(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// add appends a test case and counts it.
func (su *junitSuite) add(c junitCase) {
	su.Tests++
	switch {
	case c.Skipped != nil:
		su.Skipped++
	case c.Failure != nil:
		su.Failures++
	}
	su.Cases = append(su.Cases, c)
}

// junitSuiteProperties are the properties every <testsuite> carries: the
// verdict, both revisions, the isolation, and for a suite's group the
// suite's path.
func junitSuiteProperties(s *flakegate.Summary, suite string) []junitProperty {
	props := []junitProperty{
		{Name: "flakegate.verdict", Value: s.Verdict},
		{Name: "flakegate.base", Value: s.Base},
		{Name: "flakegate.candidate", Value: s.Candidate},
	}
	if s.Isolation != "" {
		props = append(props, junitProperty{Name: "flakegate.isolation", Value: s.Isolation})
	}
	if suite != "" {
		props = append(props, junitProperty{Name: "flakegate.suite", Value: xmlText(suite)})
	}
	for _, si := range s.Impact {
		props = append(props, junitProperty{Name: fmt.Sprintf("flakegate.impact[suites[%d]]", si.Suite), Value: xmlText(si.Line())})
	}
	return props
}

// junitNewTests is one <testsuite> per suite with new tests: a test case
// per new test, failed when a run of it failed.
func junitNewTests(s *flakegate.Summary) []junitSuite {
	var out []junitSuite
	index := map[string]int{}
	for _, t := range s.NewTests {
		k, ok := index[t.Suite]
		if !ok {
			k = len(out)
			index[t.Suite] = k
			out = append(out, junitSuite{Name: xmlText("new tests of " + t.Suite), Time: junitTime(0), Properties: junitSuiteProperties(s, t.Suite)})
		}
		c := junitCase{Name: xmlText(t.Name + " (new test)"), Classname: xmlText(t.Path), Time: junitTime(0),
			SystemOut: newCDATA(newTestText(t) + "\n")}
		if newTestFailed(t) {
			c.Failure = &junitFailure{Message: xmlText(newTestText(t)), Type: "NEW_TEST", Body: xmlText(newTestText(t) +
				" on the candidate; a test the candidate adds has no base to replay. " + newTestPolicy(s) + "\n")}
		}
		out[k].add(c)
	}
	return out
}

func junitTestCase(r *flakegate.Result) junitCase {
	c := junitCase{
		Name:      xmlText(junitName(r)),
		Classname: xmlText(r.PropertyPath),
		Time:      junitTime(r.Seconds),
	}
	if r.Suite != "" && passed(r) {
		return c // folded: thousands of passes stay one line each
	}
	meta := fmt.Sprintf("label: %s\nrecord: %s\nrecord_sha256: %s\n", r.Label, r.Record, r.RecordSHA256)
	if !r.Skipped {
		meta += "attempts: " + attemptCounts(r) + "\n"
	}
	if r.FixtureSHA256 != "" {
		meta += "fixture_sha256: " + r.FixtureSHA256 + "\n"
	}
	if r.FlakeOrigin != "" {
		meta += "flake_origin: " + r.FlakeOrigin + "\nbase_probe_results: " + strings.Join(r.BaseProbeResults, ", ") + "\n"
	}
	if r.FrozenCandidate != "" {
		meta += "frozen_from_candidate: " + r.FrozenCandidate + "\n"
	}
	if r.CandidateSHA != "" {
		meta += "candidate: " + r.CandidateSHA + "\nbase: " + r.BaseSHA + "\nat: " + r.At + "\n"
	}
	reproduce := ""
	if r.Reproduce != "" {
		reproduce = "reproduce: " + r.Reproduce + "\n"
	}
	switch {
	case r.Skipped:
		c.Skipped = &junitSkipped{Message: xmlText(fmt.Sprintf("%s %s: %s", r.Label, FrozenWording, frozenLine(r)))}
	case r.Label.Reject():
		body := "attempts: " + attemptCounts(r) + "\n" + attemptsText(r.Attempts) + reproduce
		if ft := failureText(r); ft != "" {
			body += "\n" + ft
		}
		c.Failure = &junitFailure{
			Message: xmlText(fmt.Sprintf("%s: %s", r.Label, reasonOf(r))),
			Type:    string(r.Label),
			Body:    xmlText(body),
		}
	case r.Label == flakegate.Scheduler:
		for _, a := range failedAttempts(r) {
			c.Flaky = append(c.Flaky, junitFlaky{
				Message:    xmlText("SCHEDULER: " + attemptLine(a)),
				Type:       a.Result,
				StackTrace: newCDATA(attemptsText(r.Attempts)),
				SystemOut:  newCDATA(a.OutputTail),
			})
		}
	}
	c.SystemOut = newCDATA(meta + reproduce)
	return c
}

// junitName is a test case's name: "NAME seed=S", or "seed=S" for an
// entry without a name; a drawn seed adds " (drawn)".
func junitName(r *flakegate.Result) string {
	name := "seed=" + r.Seed.String()
	if r.Name != "" {
		name = r.Name + " " + name
	}
	if r.SeedOrigin != "" {
		name += " (" + r.SeedOrigin + ")"
	}
	return name
}

// ansiEscape matches terminal colour and cursor sequences in output tails.
var ansiEscape = lazyre.New("\x1b\\[[0-9;?]*[ -/]*[@-~]")

// xmlText makes s safe for XML 1.0 and for a terminal that shows it:
// terminal colour and cursor sequences are dropped, any other control
// sequence, control character, bare CR or invalid UTF-8 is rendered as
// text (internal/termsafe: "\x1b]52;..."), and any other character XML
// cannot hold becomes U+FFFD.
func xmlText(s string) string {
	s = termsafe.String(ansiEscape.ReplaceAllString(s, ""))
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

func junitTime(s float64) string { return fmt.Sprintf("%.3f", s) }
