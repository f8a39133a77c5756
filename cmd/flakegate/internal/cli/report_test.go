package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/golden"
)

// reportGolden reads a golden file of the report package: the command
// must write exactly what the library writes.
func reportGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// schedulerLedger fills an embedded store in a temporary folder with one
// SCHEDULER record and its freeze.
func schedulerLedger(t *testing.T) (dir string, f flakegate.Freeze) {
	t.Helper()
	dir = t.TempDir()
	st, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	digest := strings.Repeat("ab", 32)
	env := &flakegate.Env{Workers: 1, ClockBudgetS: 60, Filesystem: "ext4"}
	rec := flakegate.RunRecord{
		Schema: "flakegate.run/v1", RunID: "r1", Seed: "1401", PropertyPath: "tests/props/test_retry_budget.py",
		PropertySHA256: digest, FixtureSHA256: digest, BaseFixtureSHA256: digest, DiffPaths: []string{"src/app.py"},
		CandidateResult: "fail", BaseSeedResult: "pass", RetryResults: []string{"fail", "pass"}, RetryCap: 2,
		BudgetOK: true, TranscriptComplete: true, CandidateEnv: env, BaseEnv: env,
		Attempts: []flakegate.Attempt{{Side: "candidate", Result: "fail", ExitCode: 1, StartedAt: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)}},
	}
	raw, err := rec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d := flakegate.ClassifyBytes(raw)
	if d.Label != flakegate.Scheduler {
		t.Fatalf("fixture record is %s: %s", d.Label, d.Reason)
	}
	ctx := context.Background()
	if err := st.PutRecord(ctx, d.RecordSHA256, raw); err != nil {
		t.Fatal(err)
	}
	f = flakegate.Freeze{Label: flakegate.Scheduler, PropertyPath: rec.PropertyPath, Seed: rec.Seed, FixtureSHA256: digest,
		ExpiresAfterRuns: 20, Owner: "alice@example.com", RecordSHA256: d.RecordSHA256, PropertySHA256: digest,
		GrantedAt: time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC), GrantedBy: "alice"}
	if err := st.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	return dir, f
}

func TestReport(t *testing.T) {
	summary := filepath.Join("..", "..", "..", "..", "report", "testdata", "summary.json")
	ledger, freeze := schedulerLedger(t)
	type testCase struct {
		name string
		args []string
		// files are written under a temporary folder; {dir} in args is it.
		stdin    string
		wantCode int
		wantOut  string   // exact stdout, when set
		wantErr  []string // substrings of stderr
		check    func(t *testing.T, dir string)
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		stepSummary := filepath.Join(dir, "step-summary.md")
		t.Setenv("GITHUB_STEP_SUMMARY", stepSummary)
		t.Setenv("FLAKEGATE_LEDGER", "")
		var args []string
		for _, a := range tc.args {
			args = append(args, strings.ReplaceAll(a, "{dir}", dir))
		}
		var out, errOut bytes.Buffer
		code := Main(args, strings.NewReader(tc.stdin), &out, &errOut)
		if code != tc.wantCode {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out.String(), errOut.String())
		}
		if tc.wantOut != "" && out.String() != tc.wantOut {
			t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), tc.wantOut)
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("stderr %q lacks %q", errOut.String(), w)
			}
		}
		if tc.check != nil {
			tc.check(t, dir)
		}
	}
	fileIs := func(name, want string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("%s differs from the library's output:\n%s", name, got)
			}
		}
	}
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []testCase{
		{name: "no output", args: []string{"report"}, wantCode: ExitUsage, wantErr: []string{"nothing to write"}},
		{name: "junit without a summary", args: []string{"report", "--junit", "{dir}/j.xml"}, wantCode: ExitUsage, wantErr: []string{"need --from"}},
		{name: "summary without an output", args: []string{"report", "--from", summary}, wantCode: ExitUsage, wantErr: []string{"--from needs an output"}},
		{name: "two outputs on stdout", args: []string{"report", "--from", summary, "--junit", "-", "--github"}, wantCode: ExitUsage, wantErr: []string{"only one output"}},
		{name: "missing summary", args: []string{"report", "--from", "{dir}/nope.json", "--junit", "-"}, wantCode: ExitUsage, wantErr: []string{"cannot read the summary"}},
		{name: "not a summary", args: []string{"report", "--from", "-", "--junit", "-"}, stdin: `{"label":"PASS"}`, wantCode: ExitUsage, wantErr: []string{"not a check summary", "Try: pass the stdout of 'flakegate check --json'"}},
		{name: "unknown label", args: []string{"report", "--from", "-", "--markdown", "-"}, stdin: `{"verdict":"pass","results":[{"property_path":"p.py","seed":1,"label":"FLAKY"}]}`, wantCode: ExitUsage, wantErr: []string{`label "FLAKY"`}},
		{name: "junit to stdout", args: []string{"report", "--from", summary, "--junit", "-"}, wantOut: reportGolden(t, "junit.golden.xml")},
		{name: "summary from stdin", args: []string{"report", "--from", "-", "--markdown", "-"}, stdin: string(raw), wantOut: reportGolden(t, "summary.golden.md")},
		{
			name: "files and github", args: []string{"report", "--from", summary, "--junit", "{dir}/junit.xml", "--markdown", "{dir}/summary.md", "--github"},
			wantOut: reportGolden(t, "annotations.golden.txt"),
			check: func(t *testing.T, dir string) {
				fileIs("junit.xml", reportGolden(t, "junit.golden.xml"))(t, dir)
				fileIs("summary.md", reportGolden(t, "summary.golden.md"))(t, dir)
				fileIs("step-summary.md", reportGolden(t, "summary.golden.md"))(t, dir)
			},
		},
		{
			name: "html from an embedded ledger", args: []string{"report", "--html", "{dir}/ledger.html", "--ledger", ledger},
			check: func(t *testing.T, dir string) {
				page, err := os.ReadFile(filepath.Join(dir, "ledger.html"))
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{`<tr class="freeze">`, freeze.Owner, freeze.RecordSHA256[:12], `<svg id="label-chart"`, "SCHEDULER 1", "20 / 20"} {
					if !strings.Contains(string(page), want) {
						t.Errorf("page lacks %q", want)
					}
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			},
		},
		{
			name: "summary page of a suite", args: []string{"report", "--from", "-", "--summary-html", "{dir}/check.html"},
			stdin: `{"verdict":"reject","base":"b","candidate":"c","results":[` +
				`{"property_path":"pkg/a_test.go","name":"TestA","suite":"./...","seed":1,"label":"PASS"},` +
				`{"property_path":"pkg/a_test.go","name":"TestB","suite":"./...","seed":1,"label":"PROPERTY","reason":"broke"}],` +
				`"new_tests":[{"suite":"./...","path":"pkg/n_test.go","name":"TestNew","runs":5,"passed":5}]}`,
			check: func(t *testing.T, dir string) {
				page, err := os.ReadFile(filepath.Join(dir, "check.html"))
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{`<details class="group" data-group="pkg" open>`, "a_test.go::TestB", "broke", "1 PASS folded", "new test <code>TestNew</code>: 5 of 5 passed"} {
					if !strings.Contains(string(page), want) {
						t.Errorf("page lacks %q", want)
					}
				}
			},
		},
		{name: "new test passed more than it ran", args: []string{"report", "--from", "-", "--markdown", "-"},
			stdin:    `{"verdict":"pass","results":[],"new_tests":[{"suite":"./...","path":"a_test.go","name":"TestN","runs":5,"passed":6}]}`,
			wantCode: ExitUsage, wantErr: []string{"new test 0: want a name, a path and 0 <= passed <= runs", "6 of 5"}},
		{name: "summary page without a summary", args: []string{"report", "--summary-html", "{dir}/c.html"}, wantCode: ExitUsage, wantErr: []string{"need --from"}},
		{name: "html into a missing folder", args: []string{"report", "--html", "{dir}/no/such/dir/r.html", "--ledger", ledger}, wantCode: ExitUsage, wantErr: []string{"cannot create the report"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestReportHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "report", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "report-help.golden", []byte(out))
}

func TestNewCmdReportFlags(t *testing.T) {
	testParse(t, NewCmdReport, []parseCase[ReportOptions]{
		{name: "html", args: []string{"--html", "ledger.html"}, want: func(t *testing.T, o *ReportOptions) {
			same(t, "HTML", o.HTML, "ledger.html")
			same(t, "Ledger", o.Ledger, "")
			same(t, "From", o.From, "")
		}},
		{name: "html from a named ledger", args: []string{"--html", "-", "--ledger", "postgres://ci@db/fg"}, want: func(t *testing.T, o *ReportOptions) {
			same(t, "HTML", o.HTML, "-")
			same(t, "Ledger", o.Ledger, "postgres://ci@db/fg")
		}},
		{name: "from a summary", args: []string{"--from", "summary.json", "--junit", "j.xml", "--markdown", "s.md", "--github"},
			want: func(t *testing.T, o *ReportOptions) {
				same(t, "From", o.From, "summary.json")
				same(t, "JUnit", o.JUnit, "j.xml")
				same(t, "Markdown", o.Markdown, "s.md")
				same(t, "GitHub", o.GitHub, true)
			}},
		{name: "both at once", args: []string{"--from", "-", "--junit", "-", "--html", "r.html"}, want: func(t *testing.T, o *ReportOptions) {
			same(t, "From", o.From, "-")
			same(t, "HTML", o.HTML, "r.html")
		}},
		{name: "nothing to write", args: nil, errText: "nothing to write"},
		{name: "junit without from", args: []string{"--junit", "j.xml"}, errText: "need --from SUMMARY.json"},
		{name: "github without from", args: []string{"--html", "r.html", "--github"}, errText: "need --from SUMMARY.json"},
		{name: "from without output", args: []string{"--from", "s.json"}, errText: "--from needs an output"},
		{name: "two outputs on stdout", args: []string{"--from", "s.json", "--junit", "-", "--github"}, errText: "only one output can go to stdout"},
		{name: "html and markdown on stdout", args: []string{"--from", "s.json", "--markdown", "-", "--html", "-"}, errText: "only one output can go to stdout"},
		{name: "an argument", args: []string{"--html", "r.html", "extra"}, errText: `unknown command "extra"`, errCode: "cobra"},
	})
}
