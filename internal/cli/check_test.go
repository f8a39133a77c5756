package cli

import (
	"strings"
	"testing"
)

func TestCheckHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "check", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "check-help.golden", out)
}

// TestCheckUsage: usage errors exit 2 before any git or test runs.
func TestCheckUsage(t *testing.T) {
	type testCase struct {
		name   string
		args   []string
		errOut string
	}
	run := func(t *testing.T, tc testCase) {
		_, errOut, code := runCLI(t, "", tc.args...)
		if code != ExitUsage {
			t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.errOut) {
			t.Errorf("stderr %q does not mention %q", errOut, tc.errOut)
		}
	}
	for _, tc := range []testCase{
		{"no base", []string{"check"}, "--base is required"},
		{"positional argument", []string{"check", "--base", "main", "extra"}, "unknown command"},
		{"unknown flag", []string{"check", "--base", "main", "--retries", "3"}, "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
