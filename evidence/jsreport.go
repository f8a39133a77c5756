package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// JSReport reads a jest or vitest batch: the JSON report the framework
// wrote to a file outside the tree (jest --json --outputFile=F, vitest
// --reporter=json --outputFile=F; batch/js.go builds that command),
// and reports each member's result by test file and full name (its
// describe titles and its title, joined by spaces, as the report's
// fullName). Write it the batch's output, give it the file (SetFile),
// then call Report for each member.
//
// What the code under test can forge: its output, all of it. The report
// is never read from the output, so a printed JSON report, a "✓ B" line
// or a "Tests: 1 passed" line is only output. A test could still rewrite
// the report file after the framework wrote it (a process exit hook in
// the code under test), which takes the framework apart from inside, as
// a test run alone can do for itself: the forger is code under test, in
// the candidate's diff. A report naming a test twice makes that test an
// error, never a pass.
type JSReport struct {
	Framework string

	mu      sync.Mutex
	partial []byte
	other   string // the last non-empty line of the output
	file    []byte
	fileErr error
	root    string // the folder the framework ran in, as it saw it
	parsed  *jsFileReport
	why     string // why the file is no report
}

// jsFileReport is the part of the JSON report a batch reads (jest's
// format; vitest's json reporter writes the same).
type jsFileReport struct {
	NumTotalTests *int `json:"numTotalTests"`
	TestResults   []struct {
		Name             string  `json:"name"`
		Status           string  `json:"status"`
		Message          string  `json:"message"`
		FailureMessage   *string `json:"failureMessage"`
		AssertionResults []struct {
			FullName        string   `json:"fullName"`
			Title           string   `json:"title"`
			AncestorTitles  []string `json:"ancestorTitles"`
			Status          string   `json:"status"`
			Duration        *float64 `json:"duration"`
			FailureMessages []string `json:"failureMessages"`
			// Meta (vitest) and NumPassingAsserts (jest) are what the
			// report carries from a test's body.
			Meta              json.RawMessage `json:"meta"`
			NumPassingAsserts *int            `json:"numPassingAsserts"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// NewJSReport returns an empty reader for framework (jest or vitest).
func NewJSReport(framework string) *JSReport { return &JSReport{Framework: framework} }

// Write reads the output, keeping its last line.
func (j *JSReport) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	data := append(j.partial, p...)
	j.partial = nil
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if s := strings.TrimSpace(string(data[:i])); s != "" {
			j.other = clip(s)
		}
		data = data[i+1:]
	}
	if len(data) > 64<<10 {
		data = data[len(data)-64<<10:]
	}
	j.partial = append([]byte(nil), data...)
	return len(p), nil
}

// SetFile gives the report file's content (or the error reading it) and
// the folder the framework ran in, as the tests saw it: the report names
// each test file by its absolute path there.
func (j *JSReport) SetFile(data []byte, err error, root string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.file, j.fileErr, j.root, j.parsed = data, err, root, nil
}

// HasReport reports whether the framework wrote a report that parses.
func (j *JSReport) HasReport() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.parse() != nil
}

func (j *JSReport) parse() *jsFileReport {
	if j.parsed != nil || j.why != "" {
		return j.parsed
	}
	if j.fileErr != nil {
		j.why = j.Framework + " wrote no JSON report: " + j.fileErr.Error()
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(j.file))
	var r jsFileReport
	if err := dec.Decode(&r); err != nil || r.NumTotalTests == nil {
		j.why = j.Framework + "'s JSON report does not parse"
		if err != nil {
			j.why += ": " + err.Error()
		}
		return nil
	}
	if dec.More() {
		j.why = j.Framework + "'s JSON report file holds more than one document"
		return nil
	}
	j.parsed = &r
	return j.parsed
}

// Report is what the report says of the test named name (its full name)
// in the test file file (a path relative to the folder the framework ran
// in). Without a report it is an error that never started: a killed
// batch wrote none, and each member is a timeout of that batch
// (batch/report.go, Judge).
func (j *JSReport) Report(file, name string) TestReport {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.parse()
	if r == nil {
		return TestReport{Result: attempt.Errored, Reason: j.why}
	}
	want := path.Join(j.root, path.Clean(file))
	var found []TestReport
	suites := 0
	for _, s := range r.TestResults {
		if path.Clean(s.Name) != want {
			continue
		}
		suites++
		if len(s.AssertionResults) == 0 && s.Status == "failed" {
			msg := s.Message
			if s.FailureMessage != nil && msg == "" {
				msg = *s.FailureMessage
			}
			return TestReport{Result: attempt.Errored, Started: true, Ended: true, Output: tail([]byte(msg)),
				Reason: fmt.Sprintf("%s: the suite %s failed to run, so %s did not run: %q", j.Framework, file, name, firstLines(stripANSI(msg)))}
		}
		for _, a := range s.AssertionResults {
			full := a.FullName
			if full == "" {
				full = strings.Join(append(append([]string{}, a.AncestorTitles...), a.Title), " ")
			}
			if full != name && (j.Framework != FrameworkVitest || strings.ReplaceAll(full, " > ", " ") != name) {
				continue // a vitest title that holds " > " lost it in the name (check's parseVitestList)
			}
			t := TestReport{Started: true, Ended: true, Output: tail([]byte(stripANSI(strings.Join(a.FailureMessages, "\n"))))}
			if a.Duration != nil {
				t.Elapsed = time.Duration(*a.Duration * float64(time.Millisecond))
			}
			if len(a.Meta) > 0 {
				var meta bytes.Buffer
				if json.Compact(&meta, a.Meta) == nil {
					t.Evidence = meta.String()
				}
			}
			if a.NumPassingAsserts != nil {
				t.Evidence += fmt.Sprintf("asserts=%d;", *a.NumPassingAsserts)
			}
			switch a.Status {
			case "passed":
				t.Result = attempt.Pass
			case "failed":
				t.Result = attempt.Fail
			default:
				t.Result, t.Reason = attempt.Errored, fmt.Sprintf("%s: %s was not run (its status is %q)", j.Framework, name, a.Status)
			}
			found = append(found, t)
		}
	}
	switch {
	case len(found) == 1:
		return found[0]
	case len(found) > 1:
		return TestReport{Result: attempt.Errored, Started: true, Ended: true, Reason: twice(name+" ("+file+")", len(found))}
	case suites == 0:
		return TestReport{Result: attempt.Errored, Reason: fmt.Sprintf("%s's JSON report has no suite for %s", j.Framework, file)}
	}
	return TestReport{Result: attempt.Errored, Reason: fmt.Sprintf("%s's JSON report of %s has no test named %q", j.Framework, file, name)}
}

// Carries says whether the report carries, for some test, vitest's
// task meta and jest's count of passing assertions: the evidence of a
// body that ran (TestReport.Evidence). A framework too old to write
// them writes them for no test.
func (j *JSReport) Carries() (meta, asserts bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := j.parse()
	if r == nil {
		return false, false
	}
	for _, s := range r.TestResults {
		for _, a := range s.AssertionResults {
			meta = meta || len(a.Meta) > 0
			asserts = asserts || a.NumPassingAsserts != nil
		}
	}
	return meta, asserts
}

// Other is the last line of the output ("" when none).
func (j *JSReport) Other() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.other
}

// StripANSI drops the terminal colour codes of a framework's message.
func StripANSI(s string) string { return stripANSI(s) }

// stripANSI drops the terminal colour codes of a framework's messages.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			k := i + 2
			for k < len(s) && (s[k] >= '0' && s[k] <= '9' || s[k] == ';') {
				k++
			}
			if k < len(s) {
				i = k
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
