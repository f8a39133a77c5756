package evidence

import (
	"errors"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
)

// A jest-format report of two files under /tree.
const jsReportSample = `{"numTotalTests": 5, "testResults": [
 {"name": "/tree/tests/a.test.js", "status": "failed", "message": "", "assertionResults": [
  {"fullName": "one", "title": "one", "status": "passed", "duration": 12, "failureMessages": []},
  {"fullName": "two", "title": "two", "status": "failed", "duration": 3, "failureMessages": ["\u001b[31mError: boom\u001b[39m"]},
  {"fullName": "sort orders", "title": "orders", "ancestorTitles": ["sort"], "status": "passed"},
  {"fullName": "dup", "title": "dup", "status": "passed"},
  {"fullName": "dup", "title": "dup", "status": "failed"},
  {"fullName": "skipped", "title": "skipped", "status": "pending"}]},
 {"name": "/tree/tests/b.test.js", "status": "failed", "message": "  ● Test suite failed to run\n\n    SyntaxError: Unexpected token", "assertionResults": []}
]}`

// TestJSReport: each member's result is the one entry of its file and
// full name; two entries, none, a skipped test, a suite that failed to
// run and a missing or doubled report are errors, never a pass.
func TestJSReport(t *testing.T) {
	r := NewJSReport(FrameworkJest)
	r.Write([]byte(`{"numTotalTests": 1, "numPassedTests": 1, "testResults": []}` + "\n  ✓ two (1 ms)\n")) // printed: only output
	r.SetFile([]byte(jsReportSample), nil, "/tree")
	for _, tc := range []struct {
		file, name, result, reason string
	}{
		{"tests/a.test.js", "one", attempt.Pass, ""},
		{"./tests/a.test.js", "two", attempt.Fail, ""},
		{"tests/a.test.js", "sort orders", attempt.Pass, ""},
		{"tests/a.test.js", "dup", attempt.Errored, "reported 2 times"},
		{"tests/a.test.js", "skipped", attempt.Errored, `its status is "pending"`},
		{"tests/a.test.js", "ghost", attempt.Errored, `has no test named "ghost"`},
		{"tests/b.test.js", "any", attempt.Errored, "failed to run, so any did not run"},
		{"tests/c.test.js", "any", attempt.Errored, "no suite for tests/c.test.js"},
	} {
		got := r.Report(tc.file, tc.name)
		if got.Result != tc.result || !strings.Contains(got.Reason, tc.reason) || tc.reason == "" && got.Reason != "" {
			t.Errorf("%s %q: %+v; want %s, %q", tc.file, tc.name, got, tc.result, tc.reason)
		}
	}
	if got := r.Report("tests/a.test.js", "two"); got.Output != "Error: boom" || got.Elapsed.Milliseconds() != 3 {
		t.Errorf("two's output %q and time %s", got.Output, got.Elapsed)
	}
	if got := r.Report("tests/a.test.js", "ghost"); got.Started {
		t.Errorf("an absent test started: %+v", got)
	}
	for name, set := range map[string]func(*JSReport){
		"no file":       func(r *JSReport) { r.SetFile(nil, errors.New("no such file"), "/tree") },
		"not json":      func(r *JSReport) { r.SetFile([]byte("Tests: 1 passed"), nil, "/tree") },
		"two documents": func(r *JSReport) { r.SetFile([]byte(jsReportSample+jsReportSample), nil, "/tree") },
		"no total":      func(r *JSReport) { r.SetFile([]byte(`{"testResults": []}`), nil, "/tree") },
	} {
		r := NewJSReport(FrameworkVitest)
		set(r)
		if got := r.Report("tests/a.test.js", "one"); got.Result != attempt.Errored || got.Started || r.HasReport() || !strings.Contains(got.Reason, "vitest") {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

// TestJSReportVitestTitleWithSeparator: vitest's list joins titles by
// " > ", so a title that holds " > " lost it in the name flakegate gives
// the test ("encodes > alone" became "encodes alone"); the report's full
// name still holds it, and the member is found by that name. jest's
// names come from its own full names and are compared as they are.
func TestJSReportVitestTitleWithSeparator(t *testing.T) {
	const rep = `{"numTotalTests": 2, "testResults": [{"name": "/tree/a.test.js", "status": "passed", "assertionResults": [
  {"fullName": "entities encodes > alone", "title": "encodes > alone", "ancestorTitles": ["entities"], "status": "passed"},
  {"fullName": "entities encodes alone twice", "title": "encodes alone twice", "ancestorTitles": ["entities"], "status": "failed"}]}]}`
	v := NewJSReport(FrameworkVitest)
	v.SetFile([]byte(rep), nil, "/tree")
	if got := v.Report("a.test.js", "entities encodes alone"); got.Result != attempt.Pass {
		t.Errorf("vitest: %+v; want pass", got)
	}
	if got := v.Report("a.test.js", "entities encodes alone twice"); got.Result != attempt.Fail {
		t.Errorf("vitest, the other test: %+v; want fail", got)
	}
	j := NewJSReport(FrameworkJest)
	j.SetFile([]byte(rep), nil, "/tree")
	if got := j.Report("a.test.js", "entities encodes alone"); got.Result != attempt.Errored {
		t.Errorf("jest: %+v; want no such test", got)
	}
}
