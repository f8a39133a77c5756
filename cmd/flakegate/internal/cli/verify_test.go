package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/internal/golden"
	"github.com/flakegate/flakegate/transcript"
)

// verifyWriteRun does what check does for one triple, with real processes:
// cap 2, the candidate fails, the base seed passes, the first retry passes.
// It writes the transcript at transcriptPath and returns the record that
// names it as transcriptRef.
func verifyWriteRun(t *testing.T, transcriptPath, transcriptRef string) flakegate.RunRecord {
	t.Helper()
	ctx := context.Background()
	tr, err := transcript.Create(transcriptPath)
	if err != nil {
		t.Fatal(err)
	}
	write := func(ev transcript.Event) {
		t.Helper()
		if err := tr.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	retryCap := 2
	rec := flakegate.RunRecord{Schema: "flakegate.run/v1", RunID: "r1", Seed: "1402", PropertyPath: "tests/props/p.py",
		PropertySHA256: "p", FixtureSHA256: "f", BaseFixtureSHA256: "f", DiffPaths: []string{"src/a.py"},
		RetryCap: retryCap, BudgetOK: true, TranscriptComplete: true, TranscriptPath: transcriptRef}
	write(transcript.Event{Type: transcript.EventRetryCap, RetryCap: &retryCap})
	try := func(side string, index int, argv ...string) string {
		t.Helper()
		write(transcript.Event{Type: transcript.EventAttemptStart, Side: side, Index: index})
		o := attempt.Run(ctx, attempt.Command{Argv: argv})
		write(transcript.Event{Type: transcript.EventAttemptEnd, Side: side, Index: index, Result: o.Result,
			ExitCode: o.ExitCode, WallSeconds: o.Wall.Seconds(), Signal: o.Signal, Reason: o.Reason})
		rec.Attempts = append(rec.Attempts, flakegate.Attempt{Side: side, Index: index, Result: o.Result,
			ExitCode: o.ExitCode, StartedAt: o.Started, WallSeconds: o.Wall.Seconds(), OutputTail: o.Tail})
		return o.Result
	}
	rec.CandidateResult = try(transcript.SideCandidate, 0, "sh", "-c", "echo red; exit 1")
	rec.BaseSeedResult = try(transcript.SideBase, 0, "true")
	write(transcript.Event{Type: transcript.EventBaseReplay, Result: rec.BaseSeedResult})
	rec.RetryResults = []string{try(transcript.SideCandidate, 1, "true")}
	write(transcript.Event{Type: transcript.EventComplete})
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	rec.TranscriptSHA256 = tr.SHA256()
	if rec.CandidateResult != attempt.Fail || rec.BaseSeedResult != attempt.Pass || rec.RetryResults[0] != attempt.Pass {
		t.Fatalf("the real run gave %s/%s/%v, want fail/pass/[pass]", rec.CandidateResult, rec.BaseSeedResult, rec.RetryResults)
	}
	return rec
}

func TestVerifyCommand(t *testing.T) {
	type testCase struct {
		name string
		// ref is the record's transcript_path: "" for a file beside the
		// record, "abs" for an absolute path, or a path relative to the
		// record's folder.
		ref        string
		editRecord func(*flakegate.RunRecord)
		recordRaw  string                                     // written instead of the record when set
		editFiles  func(t *testing.T, rec, transcript string) // after writing
		args       func(rec string) []string                  // default: verify REC
		code       int
		out        []string // substrings of stdout, in order
		errOut     string
	}
	run := func(t *testing.T, tc testCase) {
		root := t.TempDir()
		recPath := filepath.Join(root, "out", "records", "r1.json")
		if err := os.MkdirAll(filepath.Dir(recPath), 0o755); err != nil {
			t.Fatal(err)
		}
		ref, tpath := "r1.transcript.jsonl", filepath.Join(root, "out", "records", "r1.transcript.jsonl")
		switch tc.ref {
		case "":
		case "abs":
			tpath = filepath.Join(root, "elsewhere.jsonl")
			ref = tpath
		default:
			ref, tpath = tc.ref, filepath.Join(filepath.Dir(recPath), tc.ref)
			if err := os.MkdirAll(filepath.Dir(tpath), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		rec := verifyWriteRun(t, tpath, ref)
		if tc.editRecord != nil {
			tc.editRecord(&rec)
		}
		raw, err := rec.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if tc.recordRaw != "" {
			raw = []byte(tc.recordRaw)
		}
		if err := os.WriteFile(recPath, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.editFiles != nil {
			tc.editFiles(t, recPath, tpath)
		}
		args := []string{"verify", recPath}
		if tc.args != nil {
			args = tc.args(recPath)
		}
		out, errOut, code := runCLI(t, "", args...)
		t.Logf("stdout:\n%sstderr:\n%s", out, errOut)
		if code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
		}
		rest := out
		for _, s := range tc.out {
			i := strings.Index(rest, s)
			if i < 0 {
				t.Fatalf("stdout lacks %q (in order):\n%s", s, out)
			}
			rest = rest[i+len(s):]
		}
		if !strings.Contains(errOut, tc.errOut) {
			t.Errorf("stderr %q lacks %q", errOut, tc.errOut)
		}
		if code == 0 && out != "ok\n" {
			t.Errorf("stdout = %q, want \"ok\\n\"", out)
		}
	}
	edit := func(old, new string) func(t *testing.T, rec, transcript string) {
		return func(t *testing.T, rec, transcript string) {
			b, err := os.ReadFile(transcript)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), old) {
				t.Fatalf("transcript lacks %q:\n%s", old, b)
			}
			if err := os.WriteFile(transcript, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	dropLine := func(prefix string) func(t *testing.T, rec, transcript string) {
		return func(t *testing.T, rec, transcript string) {
			b, err := os.ReadFile(transcript)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, l := range strings.SplitAfter(string(b), "\n") {
				if !strings.HasPrefix(l, prefix) {
					kept = append(kept, l)
				}
			}
			if len(kept) != strings.Count(string(b), "\n") {
				t.Fatalf("no line starts with %q:\n%s", prefix, b)
			}
			if err := os.WriteFile(transcript, []byte(strings.Join(kept, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "ok"},
		{name: "transcript in another folder", ref: "../transcripts/r1.jsonl"},
		{name: "absolute transcript path", ref: "abs"},
		{name: "transcript line edited", editFiles: edit(`"result":"fail"`, `"result":"pass"`), code: 1,
			out: []string{"transcript_sha256 is ", "line 4: prev_sha256 does not match the sha256 of line 3", `candidate_result is "fail" in the record, but the first candidate attempt (line 3) ended "pass"`}},
		{name: "transcript line dropped", editFiles: dropLine(`{"type":"base_replay"`), code: 1,
			out: []string{"transcript_sha256 is ", "line 6: prev_sha256 does not match", `base_seed_result is "pass" in the record, but the transcript has no base replay`}},
		{name: "record lists a retry that never ran",
			editRecord: func(r *flakegate.RunRecord) { r.RetryResults = []string{"pass", "pass"} }, code: 1,
			out: []string{"retry_results lists 2 retries, the transcript 1"}},
		{name: "record cap raised after the fact",
			editRecord: func(r *flakegate.RunRecord) { r.RetryCap = 5 }, code: 1,
			out: []string{"retry_cap is 5 in the record but 2 in the transcript (line 1)"}},
		{name: "record without transcript_sha256",
			editRecord: func(r *flakegate.RunRecord) { r.TranscriptSHA256 = "" }, code: 1,
			out: []string{"the record has no transcript_sha256"}},
		{name: "record missing", editFiles: func(t *testing.T, rec, _ string) { os.Remove(rec) }, code: 2,
			errOut: "r1.json: cannot read the record: no such file or directory"},
		{name: "record not JSON", recordRaw: "{not json", code: 2, errOut: "not a run record"},
		{name: "record with a wrong type", recordRaw: `{"retry_cap": "2", "transcript_path": "r1.transcript.jsonl"}`, code: 2, errOut: "not a run record"},
		{name: "record names no transcript", editRecord: func(r *flakegate.RunRecord) { r.TranscriptPath = "" }, code: 2,
			errOut: "the record names no transcript"},
		{name: "transcript missing", editFiles: func(t *testing.T, _, transcript string) { os.Remove(transcript) }, code: 2,
			errOut: "cannot read the record's transcript: no such file or directory"},
		{name: "no record given", args: func(string) []string { return []string{"verify"} }, code: 2, errOut: "want one record file, got 0 arguments"},
		{name: "two records given", args: func(rec string) []string { return []string{"verify", rec, rec} }, code: 2, errOut: "got 2 arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestVerifyHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "verify", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "verify-help.golden", []byte(out))
}

func TestNewCmdVerifyFlags(t *testing.T) {
	testParse(t, NewCmdVerify, []parseCase[VerifyOptions]{
		{name: "one record", args: []string{"out/records/3f2a.json"}, want: func(t *testing.T, o *VerifyOptions) {
			same(t, "Record", o.Record, "out/records/3f2a.json")
		}},
		{name: "no record", args: nil, errText: "want one record file, got 0 arguments"},
		{name: "two records", args: []string{"a.json", "b.json"}, errText: "want one record file, got 2 arguments"},
		{name: "unknown flag", args: []string{"--transcript", "t", "a.json"}, errText: "unknown flag: --transcript", errCode: "cobra"},
	})
}
