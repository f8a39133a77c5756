package cli

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate/internal/golden"
)

func TestCheckHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "check", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "check-help.golden", []byte(out))
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

func TestNewCmdCheckFlags(t *testing.T) {
	testParse(t, NewCmdCheck, []parseCase[CheckOptions]{
		{name: "defaults", args: []string{"--base", "origin/main"}, want: func(t *testing.T, o *CheckOptions) {
			same(t, "Base", o.Base, "origin/main")
			same(t, "Candidate", o.Candidate, "HEAD")
			same(t, "Config", o.Config, "flakegate.yaml")
			same(t, "Out", o.Out, "")
			same(t, "Ledger", o.Ledger, "")
			same(t, "JSON", o.JSON, false)
			same(t, "GitHub", o.GitHub, false)
			same(t, "NoReplayCache", o.NoReplayCache, false)
			same(t, "JUnit", o.JUnit, "")
			same(t, "Markdown", o.Markdown, "")
			same(t, "FreezeOwner", o.FreezeOwner, "")
		}},
		{name: "every flag", args: []string{"--base", "main", "--candidate", "feature", "--config", "ci/gate.yaml",
			"--out", "/tmp/out", "--ledger", "postgres://ci@db/fg", "--json", "--junit", "junit.xml", "--markdown", "-",
			"--github", "--no-replay-cache", "--freeze-owner", "  alice@example.com "},
			want: func(t *testing.T, o *CheckOptions) {
				same(t, "Candidate", o.Candidate, "feature")
				same(t, "Config", o.Config, "ci/gate.yaml")
				same(t, "Out", o.Out, "/tmp/out")
				same(t, "Ledger", o.Ledger, "postgres://ci@db/fg")
				same(t, "JSON", o.JSON, true)
				same(t, "JUnit", o.JUnit, "junit.xml")
				same(t, "Markdown", o.Markdown, "-")
				same(t, "GitHub", o.GitHub, true)
				same(t, "NoReplayCache", o.NoReplayCache, true)
				same(t, "FreezeOwner", o.FreezeOwner, "alice@example.com")
			}},
		{name: "ledger from the environment", args: []string{"--base", "main"}, env: map[string]string{"FLAKEGATE_LEDGER": "/srv/ledger"},
			want: func(t *testing.T, o *CheckOptions) { same(t, "Ledger", o.Ledger, "/srv/ledger") }},
		{name: "the flag wins over the environment", args: []string{"--base", "main", "--ledger", "/a"}, env: map[string]string{"FLAKEGATE_LEDGER": "/b"},
			want: func(t *testing.T, o *CheckOptions) { same(t, "Ledger", o.Ledger, "/a") }},
		{name: "no base", args: nil, errText: "--base is required"},
		{name: "blank base", args: []string{"--base", "  "}, errText: "--base is required"},
		{name: "positional argument", args: []string{"--base", "main", "HEAD~1"}, errText: `unknown command "HEAD~1"`, errCode: "cobra"},
		{name: "retries is not a flag", args: []string{"--base", "main", "--retries", "3"}, errText: "unknown flag: --retries", errCode: "cobra"},
		{name: "json takes no value", args: []string{"--base", "main", "--json=maybe"}, errText: "invalid argument", errCode: "cobra"},
	})
}
