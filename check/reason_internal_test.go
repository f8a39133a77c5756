package check

import (
	"testing"

	"github.com/flakegate/flakegate"
)

// TestNeverRan: an attempt that errored says the test never ran, what
// the runner's exit code means and the line of output that says why.
func TestNeverRan(t *testing.T) {
	type testCase struct {
		name      string
		framework string
		argv      []string
		a         flakegate.Attempt
		why       string
		want      string
	}
	run := func(t *testing.T, tc testCase) {
		if got := neverRan(tc.framework, tc.argv, tc.a, tc.why); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"pytest usage error", "pytest", []string{"python3", "-m", "pytest", "tests/x.py"},
			flakegate.Attempt{Side: "candidate", Result: "error", ExitCode: 4, OutputTail: "ERROR: file or directory not found: tests/x.py\n\n"}, "exit code 4",
			"the test never ran: candidate attempt 0: pytest exited 4 (usage error): ERROR: file or directory not found: tests/x.py"},
		{"no pytest", "pytest", []string{"python3", "-m", "pytest"},
			flakegate.Attempt{Side: "base", Index: 0, Result: "error", ExitCode: 1, OutputTail: "/x/python3: No module named pytest\n"},
			`exit 1 but no "FAILED" line and no pytest summary line; the last line is "/x/python3: No module named pytest"`,
			`the test never ran: base attempt 0: pytest exited 1 but no "FAILED" line and no pytest summary line; the last line is "/x/python3: No module named pytest"`},
		{"command not found", "", []string{"env", "A=1", "node_modules/.bin/jest", "--ci"},
			flakegate.Attempt{Side: "candidate", Index: 2, Result: "error", ExitCode: 127, OutputTail: "env: 'node_modules/.bin/jest': No such file or directory\n"}, "exit code 127",
			"the test never ran: candidate attempt 2: jest exited 127 (command not found): env: 'node_modules/.bin/jest': No such file or directory"},
		{"the telling line, not the last", "go test", []string{"go", "test"},
			flakegate.Attempt{Side: "candidate", Result: "error", ExitCode: 2, OutputTail: "# example.com/x\n./x.go:3:1: syntax error: unexpected }\nFAIL\texample.com/x [build failed]\nFAIL\n"}, "exit code 2",
			"the test never ran: candidate attempt 0: go test exited 2 (build or usage error): ./x.go:3:1: syntax error: unexpected }"},
		{"did not start", "", []string{"./missing"},
			flakegate.Attempt{Side: "candidate", Result: "error", ExitCode: -1}, "the command could not be started: no such file",
			"the test never ran: candidate attempt 0: the command could not be started: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
