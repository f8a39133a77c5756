package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
)

func TestJSEvidence(t *testing.T) {
	jestFailedToRun := " FAIL  src/sort.test.js\n  ● Test suite failed to run\n\n    SyntaxError: Unexpected token ';'\n\nTest Suites: 1 failed, 1 total\nTests:       0 total\nSnapshots:   0 total\n"
	jestJSONFailedToRun := `{"numFailedTestSuites":1,"numFailedTests":0,"numPassedTests":0,"numPendingTests":0,"numRuntimeErrorTestSuites":1,"numTodoTests":0,"numTotalTestSuites":1,"numTotalTests":0,"success":false,"testResults":[{"message":"  ● Test suite failed to run\n\n    Cannot find module './cmp.js'","status":"failed","name":"/t/src/sort.test.js"}]}` + "\n"
	for _, tc := range []struct {
		fw, out string
		result  string
		want    string // in the reason when an error
	}{
		{"jest", "  ✓ orders (3 ms)\nTests:       1 passed, 1 total\n", attempt.Pass, ""},
		{"jest", "Tests:       1 skipped, 0 passed, 1 total\n", attempt.Pass, "want at least one passed"},
		{"jest", "  ✕ orders\nTests:       1 failed, 2 skipped, 3 total\n", attempt.Fail, ""},
		{"jest", jestFailedToRun, attempt.Fail, `jest: orders did not run: the summary says "Tests:       0 total"; "● Test suite failed to run"`},
		{"jest", jestJSONFailedToRun, attempt.Fail, "jest: orders did not run: the JSON report has 0 tests, 0 failed, and 1 suites failed to run"},
		{"jest", `{"numFailedTests":1,"numPassedTests":0,"numTotalTests":1}` + "\n", attempt.Fail, ""},
		{"jest", "{\n  \"numFailedTests\": 0,\n  \"numPassedTests\": 2,\n  \"numTotalTests\": 2\n}\n", attempt.Pass, ""},
		{"jest", "boom\n", attempt.Fail, `exit 1 but no jest summary line shows a failed test; the last line is "boom"`},
		{"vitest", " ✓ src/a.test.ts > orders\n      Tests  1 passed | 2 skipped (3)\n", attempt.Pass, ""},
		{"vitest", "      Tests  1 failed | 2 passed (3)\n", attempt.Fail, ""},
		{"vitest", " FAIL  src/a.test.ts [ src/a.test.ts ]\nError: Failed to load url ./cmp.js\n Test Files  1 failed (1)\n      Tests  no tests\n", attempt.Fail, "vitest: orders did not run"},
		{"vitest", "      Tests  no tests\n", attempt.Pass, "want at least one passed"},
	} {
		c := New(tc.fw, "orders", nil, nil)
		c.Write([]byte(tc.out))
		code := 0
		if tc.result == attempt.Fail {
			code = 1
		}
		out := attempt.Outcome{Result: tc.result, ExitCode: code}
		c.Judge(&out)
		if tc.want == "" && out.Result != tc.result || tc.want != "" && (out.Result != attempt.Errored || !strings.Contains(out.Reason, tc.want)) {
			t.Errorf("%s %q: %s %q, want %s %q", tc.fw, tc.out, out.Result, out.Reason, tc.result, tc.want)
		}
	}
}

func TestArgvFor(t *testing.T) {
	for _, tc := range []struct{ fw, in, want string }{
		{"go", "go test -run X .", "go test -v -run X ."},
		{"go", "sh -c exec_go_test", `sh -c GOFLAGS="${GOFLAGS:+$GOFLAGS }-v" exec "$@" flakegate-evidence sh -c exec_go_test`},
		{"pytest", "sh -c exec_pytest", `sh -c PYTEST_ADDOPTS="${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }-rA" exec "$@" flakegate-evidence sh -c exec_pytest`},
		{"pytest", "pytest -q x.py", "pytest -q x.py -rA"},
		{"jest", "npx jest x", "npx jest x"},
		{"none", "sh p.sh", "sh p.sh"},
	} {
		if got := strings.Join(ArgvFor(tc.fw, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.fw, tc.in, got, tc.want)
		}
	}
}

// FuzzJSEvidence: any output judged as vitest or jest leaves a pass, a
// failure or an error, without a panic.
func FuzzJSEvidence(f *testing.F) {
	f.Add("Tests:       1 passed, 1 total\n", true)
	f.Add(`{"numTotalTests":0,"numFailedTests":0,"testResults":[{"message":"x"}]}`, false)
	f.Add("{\"numTotalTests\": {\n", false)
	f.Fuzz(func(t *testing.T, out string, pass bool) {
		for _, fw := range []string{FrameworkJest, FrameworkVitest} {
			c := New(fw, "t", nil, nil)
			c.Write([]byte(out))
			o := attempt.Outcome{Result: attempt.Fail, ExitCode: 1}
			if pass {
				o = attempt.Outcome{Result: attempt.Pass}
			}
			want := o.Result
			c.Judge(&o)
			if o.Result != want && o.Result != attempt.Errored {
				t.Fatalf("%q: %s", out, o.Result)
			}
		}
	})
}

// TestJSEvidenceRealOutput: the output of the real jest 29.7.0 and vitest
// 2.1.9 (testdata/real, run on this machine with "-t '^orders its
// output$'" on a file of two tests): passes, failures, and a suite that
// failed to run on a syntax error in the code it loads, with the text
// report and the JSON reporter.
func TestJSEvidenceRealOutput(t *testing.T) {
	for file, want := range map[string]string{
		"jest-29.7.0-pass.txt":         attempt.Pass,
		"jest-29.7.0-fail.txt":         attempt.Fail,
		"jest-29.7.0-syntax.txt":       attempt.Errored,
		"jest-29.7.0-syntax-json.txt":  attempt.Errored,
		"vitest-2.1.9-pass.txt":        attempt.Pass,
		"vitest-2.1.9-fail.txt":        attempt.Fail,
		"vitest-2.1.9-syntax.txt":      attempt.Errored,
		"vitest-2.1.9-syntax-json.txt": attempt.Errored,
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "real", file))
		if err != nil {
			t.Fatal(err)
		}
		c := New(strings.SplitN(file, "-", 2)[0], "orders its output", nil, nil)
		c.Write(b)
		o := attempt.Outcome{Result: attempt.Pass}
		if strings.Contains(file, "fail") || strings.Contains(file, "syntax") {
			o = attempt.Outcome{Result: attempt.Fail, ExitCode: 1}
		}
		c.Judge(&o)
		if o.Result != want || want == attempt.Errored && !strings.Contains(o.Reason, "orders its output did not run") {
			t.Errorf("%s: %s %q, want %s", file, o.Result, o.Reason, want)
		}
	}
}
