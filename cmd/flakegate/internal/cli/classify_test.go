package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/internal/golden"
)

// runCLI runs flakegate with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const schedulerRecord = `{"run_id":"r1","seed":1402,"property_path":"tests/props/test_retry_budget.py","property_sha256":"p","fixture_sha256":"f","base_fixture_sha256":"f","diff_paths":["src/retry.py"],"candidate_result":"fail","base_seed_result":"pass","retry_results":["pass"],"retry_cap":2,"budget_ok":true,"transcript_complete":true}`

func TestClassifyCommand(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "sched.json")
	prop := filepath.Join(dir, "prop.json")
	os.WriteFile(sched, []byte(schedulerRecord), 0o644)
	os.WriteFile(prop, []byte(strings.Replace(schedulerRecord, `"base_seed_result":"pass"`, `"base_seed_result":"fail"`, 1)), 0o644)
	jsonl := strings.Join([]string{schedulerRecord, "", "not json", `[1]`}, "\n") + "\n"

	type testCase struct {
		name   string
		args   []string
		stdin  string
		code   int
		out    []string // substrings of stdout, in order
		lines  int      // stdout lines, -1 to skip
		errOut string
	}
	run := func(t *testing.T, tc testCase) {
		out, errOut, code := runCLI(t, tc.stdin, tc.args...)
		if code != tc.code {
			t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
		}
		rest := out
		for _, s := range tc.out {
			i := strings.Index(rest, s)
			if i < 0 {
				t.Fatalf("stdout lacks %q (in order):\n%s", s, out)
			}
			rest = rest[i+len(s):]
		}
		if tc.lines >= 0 && strings.Count(out, "\n") != tc.lines {
			t.Fatalf("got %d lines, want %d:\n%s", strings.Count(out, "\n"), tc.lines, out)
		}
		if !strings.Contains(errOut, tc.errOut) {
			t.Fatalf("stderr %q lacks %q", errOut, tc.errOut)
		}
		if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
			t.Fatalf("stack trace on stderr: %s", errOut)
		}
	}
	testCases := []testCase{
		{name: "self-check", args: []string{"classify", "--self-check"}, out: []string{"self-check ok\n"}, lines: 1},
		{name: "one file", args: []string{"classify", sched}, out: []string{`"label":"SCHEDULER"`, `"freeze":true`, `"seed":1402`, `"file":`}, lines: 1},
		{name: "reject exits 0 without gate", args: []string{"classify", prop}, out: []string{`"label":"PROPERTY"`}, lines: 1},
		{name: "gate rejects", args: []string{"classify", "--gate", sched, prop}, code: 1, out: []string{"SCHEDULER", "PROPERTY"}, lines: 2},
		{name: "gate passes scheduler", args: []string{"classify", "--gate", sched}, out: []string{"SCHEDULER"}, lines: 1},
		{name: "stdin", args: []string{"classify", "-"}, stdin: schedulerRecord, out: []string{"SCHEDULER", `"file":"-"`}, lines: 1},
		{name: "stdin by default", args: []string{"classify"}, stdin: "{", out: []string{"INCOMPLETE", `"record_sha256":null`}, lines: 1},
		{name: "jsonl keeps order and bad lines", args: []string{"classify", "--jsonl"}, stdin: jsonl, out: []string{"SCHEDULER", "empty line", "invalid literal", "want an object"}, lines: 4},
		{name: "jsonl gate", args: []string{"classify", "--jsonl", "--gate"}, stdin: jsonl, code: 1, lines: 4},
		{name: "missing file", args: []string{"classify", filepath.Join(dir, "nope.json")}, code: 2, lines: 0, errOut: "nope.json: cannot read the record file: no such file or directory"},
		{name: "missing file among good", args: []string{"classify", sched, filepath.Join(dir, "nope.json")}, code: 2, lines: 0, errOut: "nope.json"},
		{name: "directory", args: []string{"classify", dir}, code: 2, lines: 0, errOut: "is a directory"},
		{name: "self-check with files", args: []string{"classify", "--self-check", sched}, code: 2, lines: 0, errOut: "--self-check takes no files"},
		{name: "unknown flag", args: []string{"classify", "--bogus"}, code: 2, lines: 0, errOut: "unknown flag"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestClassifyHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "classify", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "classify-help.golden", []byte(out))
}

func TestNewCmdClassifyFlags(t *testing.T) {
	testParse(t, NewCmdClassify, []parseCase[ClassifyOptions]{
		{name: "defaults: stdin, exit 0 for every label", args: nil, want: func(t *testing.T, o *ClassifyOptions) {
			same(t, "Files", o.Files, []string{})
			same(t, "Gate", o.Gate, false)
			same(t, "JSONL", o.JSONL, false)
			same(t, "SelfCheck", o.SelfCheck, false)
		}},
		{name: "files and flags", args: []string{"a.json", "--gate", "b.json", "--jsonl"}, want: func(t *testing.T, o *ClassifyOptions) {
			same(t, "Files", o.Files, []string{"a.json", "b.json"})
			same(t, "Gate", o.Gate, true)
			same(t, "JSONL", o.JSONL, true)
		}},
		{name: "dash is stdin", args: []string{"-"}, want: func(t *testing.T, o *ClassifyOptions) {
			same(t, "Files", o.Files, []string{"-"})
		}},
		{name: "self-check", args: []string{"--self-check"}, want: func(t *testing.T, o *ClassifyOptions) {
			same(t, "SelfCheck", o.SelfCheck, true)
		}},
		{name: "self-check with a file", args: []string{"--self-check", "a.json"}, errText: "--self-check takes no files"},
		{name: "self-check with --gate", args: []string{"--self-check", "--gate"}, errText: "--self-check takes no files and no other flags"},
		{name: "unknown flag", args: []string{"--strict"}, errText: "unknown flag: --strict", errCode: "cobra"},
	})
}
