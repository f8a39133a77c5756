package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerdictHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "verdict", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "verdict-help.golden", out)
}

// TestFleetUsage: bad combinations of the fleet flags of check and
// verdict exit 2 before any git, test or database work.
func TestFleetUsage(t *testing.T) {
	notSummary := filepath.Join(t.TempDir(), "not-a-summary.json")
	if err := os.WriteFile(notSummary, []byte(`{"verdict": "maybe"}`), 0o644); err != nil {
		t.Fatal(err)
	}
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
		if !strings.Contains(errOut, tc.errOut) || !strings.Contains(errOut, "Try:") {
			t.Errorf("stderr %q does not mention %q with a hint", errOut, tc.errOut)
		}
	}
	for _, tc := range []testCase{
		{"bad shard", []string{"check", "--base", "main", "--shard", "4/3"}, "I must be between 1 and N"},
		{"shard without N", []string{"check", "--base", "main", "--shard", "2"}, "want I/N"},
		{"join without id", []string{"check", "--base", "main", "--join", "--ledger", "postgres://x/y"}, "--join needs --check-id"},
		{"id without join", []string{"check", "--base", "main", "--check-id", "x"}, "--check-id needs --join"},
		{"join and shard", []string{"check", "--base", "main", "--join", "--check-id", "x", "--shard", "1/2"}, "exclude each other"},
		{"join on files", []string{"check", "--base", "main", "--join", "--check-id", "x", "--ledger", "some/dir"}, "needs a PostgreSQL ledger"},
		{"short lease", []string{"check", "--base", "main", "--join", "--check-id", "x", "--ledger", "postgres://x/y", "--lease", "1s"}, "--lease must be at least 3s"},
		{"negative K", []string{"check", "--base", "main", "--join", "--check-id", "x", "--ledger", "postgres://x/y", "--max-lease-expiries", "-1"}, "0 or more"},
		{"verdict of nothing", []string{"verdict"}, "nothing to merge"},
		{"verdict of both", []string{"verdict", "--check-id", "x", "a.json"}, "not both"},
		{"verdict wait without id", []string{"verdict", "--wait", "a.json"}, "need --check-id"},
		{"verdict of files", []string{"verdict", "--check-id", "x", "--ledger", "some/dir"}, "PostgreSQL ledger"},
		{"verdict of a missing file", []string{"verdict", "no-such.json"}, "cannot read the summary"},
		{"verdict of a non-summary", []string{"verdict", notSummary}, "not a check summary"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
