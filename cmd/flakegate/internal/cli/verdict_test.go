package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/internal/golden"
)

func TestVerdictHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "verdict", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "verdict-help.golden", []byte(out))
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

func TestVerdictParse(t *testing.T) {
	testParse(t, NewCmdVerdict, []parseCase[VerdictOptions]{
		{name: "shard summaries", args: []string{"s1/summary.json", "s2/summary.json"},
			env: map[string]string{"FLAKEGATE_LEDGER": "postgres://ci@db/fg"},
			want: func(t *testing.T, o *VerdictOptions) {
				same(t, "Summaries", o.Summaries, []string{"s1/summary.json", "s2/summary.json"})
				same(t, "CheckID", o.CheckID, "")
				same(t, "Ledger", o.Ledger, "") // the environment's ledger is for --check-id only
				same(t, "Wait", o.Wait, false)
				same(t, "Poll", o.Poll, time.Second)
				same(t, "StartTimeout", o.StartTimeout, 5*time.Minute)
				same(t, "JSON", o.JSON, false)
			}},
		{name: "every flag", args: []string{"--ledger", "postgres://ci@db/fg", "--check-id", "run-7", "--wait", "--poll", "2s",
			"--start-timeout", "1m", "--json", "--junit", "junit.xml", "--markdown", "-", "--github"},
			want: func(t *testing.T, o *VerdictOptions) {
				same(t, "Summaries", o.Summaries, []string{})
				same(t, "Ledger", o.Ledger, "postgres://ci@db/fg")
				same(t, "CheckID", o.CheckID, "run-7")
				same(t, "Wait", o.Wait, true)
				same(t, "Poll", o.Poll, 2*time.Second)
				same(t, "StartTimeout", o.StartTimeout, time.Minute)
				same(t, "JSON", o.JSON, true)
				same(t, "JUnit", o.JUnit, "junit.xml")
				same(t, "Markdown", o.Markdown, "-")
				same(t, "GitHub", o.GitHub, true)
			}},
		{name: "ledger from the environment", args: []string{"--check-id", "run-7"},
			env: map[string]string{"FLAKEGATE_LEDGER": "postgres://ci@db/fg"},
			want: func(t *testing.T, o *VerdictOptions) {
				same(t, "Ledger", o.Ledger, "postgres://ci@db/fg")
			}},
		{name: "nothing", args: []string{}, errText: "nothing to merge"},
		{name: "both", args: []string{"--check-id", "x", "a.json"}, errText: "not both"},
		{name: "wait without id", args: []string{"--wait", "a.json"}, errText: "need --check-id"},
		{name: "ledger without id", args: []string{"--ledger", "postgres://x/y"}, errText: "need --check-id"},
		{name: "bad poll", args: []string{"--poll", "soon", "a.json"}, errText: "invalid argument", errCode: "cobra"},
	})
}
