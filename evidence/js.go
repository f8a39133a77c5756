// Evidence from vitest and jest: their summary lines ("Tests:  1 failed,
// 2 passed, 3 total", "Tests  1 failed | 2 passed (3)") and their JSON
// reporters (jest --json, vitest --reporter=json: numTotalTests,
// numFailedTests, ...). A suite that failed to run (a syntax error, a
// missing import) reports no failed test: its exit 1 is an error, never a
// failure of the property.

package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// jsState is what a vitest or jest attempt's output showed.
type jsState struct {
	summary  string // the last "Tests" summary line
	counts   map[string]int
	total    int  // from the summary, -1 when it gives none
	noTests  bool // "Tests  no tests" or "No tests found"
	notRun   string
	raw      bytes.Buffer // the output, for the JSON report (bounded)
	rawFull  bool
	reported *jsReport
}

// maxJSRaw bounds the output kept for the JSON report.
const maxJSRaw = 8 << 20

type jsReport struct {
	NumTotalTests             *int `json:"numTotalTests"`
	NumFailedTests            int  `json:"numFailedTests"`
	NumPassedTests            int  `json:"numPassedTests"`
	NumPendingTests           int  `json:"numPendingTests"`
	NumTodoTests              int  `json:"numTodoTests"`
	NumRuntimeErrorTestSuites int  `json:"numRuntimeErrorTestSuites"`
	NumFailedTestSuites       int  `json:"numFailedTestSuites"`
	TestResults               []struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Name    string `json:"name"`
	} `json:"testResults"`
}

var (
	jestTestsRe   = lazyre.New(`^\s*Tests:\s+(.*?)(\d+) total\s*$`)
	vitestTestsRe = lazyre.New(`^\s*Tests\s+(.*?)\s*\((\d+)\)\s*$`)
	vitestNoneRe  = lazyre.New(`^\s*Tests\s+no tests\s*$|^\s*No test files found|^\s*No tests found`)
	jsCountRe     = lazyre.New(`(\d+) (failed|passed|skipped|todo|pending)`)
	jsNotRunRe    = lazyre.New(`Test suite failed to run|Failed to load url|Failed to resolve import|Cannot find module|SyntaxError|Error: No test suite found|failed to run`)
)

func (e *Checker) jsLine(l string) {
	s := &e.js
	if m := jestTestsRe.FindStringSubmatch(l); m != nil && e.Framework == FrameworkJest {
		s.setSummary(l, m[1], m[2])
	} else if m := vitestTestsRe.FindStringSubmatch(l); m != nil && e.Framework == FrameworkVitest {
		s.setSummary(l, m[1], m[2])
	}
	if vitestNoneRe.MatchString(l) {
		s.noTests = true
		s.summary = clip(strings.TrimSpace(l))
	}
	if s.notRun == "" && jsNotRunRe.MatchString(l) {
		s.notRun = clip(strings.TrimSpace(l))
	}
}

func (s *jsState) setSummary(line, counts, total string) {
	s.summary = clip(strings.TrimSpace(line))
	s.counts = map[string]int{}
	for _, m := range jsCountRe.FindAllStringSubmatch(counts, -1) {
		n, _ := strconv.Atoi(m[1])
		s.counts[m[2]] += n
	}
	s.total, _ = strconv.Atoi(total)
	s.noTests = false
}

// keep saves output for the JSON report.
func (s *jsState) keep(p []byte) {
	if s.rawFull {
		return
	}
	if s.raw.Len()+len(p) > maxJSRaw {
		s.rawFull = true
		return
	}
	s.raw.Write(p)
}

// report finds the last JSON report in the output (an object with
// numTotalTests, on one line or pretty-printed).
func (s *jsState) report() *jsReport {
	if s.reported != nil {
		return s.reported
	}
	b := s.raw.Bytes()
	for off := 0; off < len(b); {
		i := bytes.Index(b[off:], []byte(`"numTotalTests"`))
		if i < 0 {
			break
		}
		at := off + i
		start := bytes.LastIndexByte(b[:at], '{')
		for start >= 0 {
			var r jsReport
			dec := json.NewDecoder(bytes.NewReader(b[start:]))
			if dec.Decode(&r) == nil && r.NumTotalTests != nil {
				s.reported = &r
				break
			}
			start = bytes.LastIndexByte(b[:start], '{')
		}
		off = at + 1
	}
	return s.reported
}

// jsFailMissing says why an exit 1 of vitest or jest is not evidence
// that the test ran and failed, "" when it is.
func (e *Checker) jsFailMissing(what, seen string) string {
	s := &e.js
	name := e.Framework
	if r := s.report(); r != nil {
		if r.NumFailedTests > 0 {
			return ""
		}
		why := fmt.Sprintf("%s: %s did not run: the JSON report has %d tests, %d failed", name, what, *r.NumTotalTests, r.NumFailedTests)
		if r.NumRuntimeErrorTestSuites > 0 || r.NumFailedTestSuites > 0 {
			why += fmt.Sprintf(", and %d suites failed to run", max(r.NumRuntimeErrorTestSuites, r.NumFailedTestSuites))
		}
		for _, tr := range r.TestResults {
			if msg := firstLines(tr.Message); msg != "" {
				return why + ": " + strconv.Quote(msg)
			}
		}
		return why
	}
	if s.summary != "" && s.counts["failed"] > 0 {
		return ""
	}
	if s.summary != "" || s.noTests {
		why := name + ": " + what + " did not run: the summary says " + strconv.Quote(s.summary)
		if s.notRun != "" {
			why += "; " + strconv.Quote(s.notRun)
		}
		return why
	}
	if s.notRun != "" {
		return name + ": " + what + " did not run: " + strconv.Quote(s.notRun)
	}
	return "exit 1 but no " + name + " summary line shows a failed test; the last line is " + seen
}

// jsMissing says why an exit 0 of vitest or jest is not evidence that the
// test ran and passed, "" when it is.
func (e *Checker) jsMissing(seen string) string {
	s := &e.js
	name := e.Framework
	if r := s.report(); r != nil {
		if r.NumPassedTests > 0 && r.NumFailedTests == 0 {
			return ""
		}
		return fmt.Sprintf("%s's JSON report has %d tests, %d passed, %d failed; want at least one passed and none failed", name, *r.NumTotalTests, r.NumPassedTests, r.NumFailedTests)
	}
	if s.summary == "" {
		return "exit 0 but no " + name + " summary line; the last line is " + seen
	}
	if s.noTests || s.counts["passed"] == 0 || s.counts["failed"] > 0 {
		return name + "'s summary says " + strconv.Quote(s.summary) + "; want at least one passed and none failed"
	}
	return ""
}

// firstLines is the first non-empty lines of a message, on one line.
func firstLines(msg string) string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			if len(out) == 3 {
				break
			}
		}
	}
	return clip(strings.Join(out, " / "))
}
