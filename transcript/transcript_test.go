package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

func intPtr(n int) *int { return &n }

// schedulerEvents is the transcript of a check that saw a candidate fail,
// the base seed pass and the first retry pass, under a cap of 2.
func schedulerEvents() []Event {
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []Event{
		{Type: EventRetryCap, At: at(0), RetryCap: intPtr(2)},
		{Type: EventAttemptStart, At: at(1), Side: SideCandidate, Index: 0},
		{Type: EventAttemptEnd, At: at(2), Side: SideCandidate, Index: 0, Result: flakegate.ResultFail, ExitCode: 1, WallSeconds: 1.25},
		{Type: EventAttemptStart, At: at(3), Side: SideBase, Index: 0},
		{Type: EventAttemptEnd, At: at(4), Side: SideBase, Index: 0, Result: flakegate.ResultPass, WallSeconds: 0.5},
		{Type: EventBaseReplay, At: at(4), Result: flakegate.ResultPass},
		{Type: EventAttemptStart, At: at(5), Side: SideCandidate, Index: 1},
		{Type: EventAttemptEnd, At: at(6), Side: SideCandidate, Index: 1, Result: flakegate.ResultPass, WallSeconds: 0.75},
		{Type: EventComplete, At: at(7)},
	}
}

// recordFor builds the run record that agrees with events.
func recordFor(events []Event) flakegate.RunRecord {
	rec := flakegate.RunRecord{Schema: "flakegate.run/v1", RunID: "r1", Seed: "1402", PropertyPath: "p.py",
		BaseSeedResult: "not_run", RetryResults: []string{}, TranscriptComplete: true, BudgetOK: true}
	capSeen := false
	for _, ev := range events {
		switch ev.Type {
		case EventRetryCap:
			if ev.RetryCap != nil && !capSeen {
				rec.RetryCap = *ev.RetryCap
			}
			capSeen = true
		case EventAttemptEnd:
			rec.Attempts = append(rec.Attempts, flakegate.Attempt{Side: ev.Side, Index: ev.Index, Result: ev.Result, ExitCode: ev.ExitCode, WallSeconds: ev.WallSeconds})
			if ev.Side == SideCandidate && ev.Index == 0 {
				rec.CandidateResult = ev.Result
			} else if ev.Side == SideCandidate {
				rec.RetryResults = append(rec.RetryResults, ev.Result)
			}
		case EventBaseReplay:
			rec.BaseSeedResult, rec.BaseFromCache = ev.Result, ev.FromCache
		}
	}
	return rec
}

// writeTranscript writes events through a real Writer and returns the
// file's bytes.
func writeTranscript(t *testing.T, events []Event) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	tr, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := tr.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); tr.SHA256() != hex.EncodeToString(sum[:]) {
		t.Errorf("SHA256() = %s, want the file's %x", tr.SHA256(), sum)
	}
	return raw
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerify(t *testing.T) {
	type testCase struct {
		name string
		// events to write (nil: schedulerEvents); the record is built
		// from them before editRecord and editLines run.
		events     func([]Event) []Event
		editRecord func(*flakegate.RunRecord)
		editLines  func([][]byte) [][]byte // on the written lines
		want       []string                // substrings, one per expected difference, in order
	}
	run := func(t *testing.T, tc testCase) {
		events := schedulerEvents()
		if tc.events != nil {
			events = tc.events(events)
		}
		rec := recordFor(events)
		raw := writeTranscript(t, events)
		if tc.editRecord != nil {
			tc.editRecord(&rec)
		}
		if tc.editLines != nil {
			lines := bytes.SplitAfter(raw, []byte("\n"))
			raw = bytes.Join(tc.editLines(lines[:len(lines)-1]), nil)
		}
		got := Verify(mustJSON(t, rec), raw)
		if len(got) != len(tc.want) {
			t.Fatalf("Verify gave %d differences, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
		}
		for i := range got {
			if !strings.Contains(got[i], tc.want[i]) {
				t.Errorf("difference %d = %q, want it to contain %q", i+1, got[i], tc.want[i])
			}
		}
	}
	for _, tc := range []testCase{
		{name: "agree"},
		{name: "candidate timed out, record says fail",
			events:     func(ev []Event) []Event { ev[2].Result, ev[2].ExitCode = flakegate.ResultTimeout, -1; return ev },
			editRecord: func(r *flakegate.RunRecord) { r.CandidateResult = flakegate.ResultFail }},
		{name: "base from the replay cache",
			events: func(ev []Event) []Event {
				ev[5].FromCache = true
				return append(ev[:3], ev[5:]...)
			}},
		{name: "no base replay, record says not_run",
			events: func(ev []Event) []Event { return append(ev[:3], ev[8]) }},
		{name: "edit a line",
			editLines: func(l [][]byte) [][]byte {
				l[2] = bytes.Replace(l[2], []byte(`"result":"fail"`), []byte(`"result":"pass"`), 1)
				return l
			},
			want: []string{"line 4: prev_sha256 does not match the sha256 of line 3", `candidate #0: the record says "fail", the transcript (line 3) "pass"`, `candidate_result is "fail" in the record, but the first candidate attempt (line 3) ended "pass"`}},
		{name: "edit the last line leaves the chain intact",
			editLines: func(l [][]byte) [][]byte {
				l[8] = bytes.Replace(l[8], []byte(`"complete"`), []byte(`"done"`), 1)
				return l
			},
			want: []string{`line 9: unknown event type "done"`, "does not end with a complete event"}},
		{name: "drop a line",
			editLines: func(l [][]byte) [][]byte { return append(l[:6], l[7:]...) },
			want:      []string{"line 7: prev_sha256 does not match", "attempt candidate #1 ends without an attempt_start"}},
		{name: "drop the first line",
			editLines: func(l [][]byte) [][]byte { return l[1:] },
			want:      []string{"line 1: prev_sha256 is not empty", "no retry_cap event"}},
		{name: "reorder two lines",
			editLines: func(l [][]byte) [][]byte { l[3], l[4] = l[4], l[3]; return l },
			want: []string{"line 4: prev_sha256 does not match", "line 5: prev_sha256 does not match", "line 6: prev_sha256 does not match",
				"attempt base #0 ends without an attempt_start", "attempt base #0 started on line 5 never ended"}},
		{name: "cut off mid-line",
			editLines: func(l [][]byte) [][]byte { l[8] = l[8][:10]; return l },
			want:      []string{"no newline", "line 9 is not a JSON event", "does not end with a complete event"}},
		{name: "empty transcript",
			editLines: func(l [][]byte) [][]byte { return nil },
			want: []string{"the transcript is empty", "no retry_cap event", "the record lists 3 attempts, the transcript 0",
				"no first candidate attempt", "retry_results lists 1 retries, the transcript 0", `base_seed_result is "pass" in the record, but the transcript has no base replay`}},
		{name: "cap written after the first attempt",
			events: func(ev []Event) []Event { ev[0], ev[1] = ev[1], ev[0]; return ev },
			want:   []string{"line 2: retry_cap was written after the first attempt (line 1)"}},
		{name: "cap written after a cached base replay",
			events: func(ev []Event) []Event {
				cached := ev[5]
				cached.FromCache = true
				out := []Event{cached}
				out = append(out, ev[:3]...)
				return append(out, ev[6:]...)
			},
			want: []string{"line 2: retry_cap was written after the first attempt (line 1)"}},
		{name: "cap changed during the run",
			events: func(ev []Event) []Event {
				return append(ev[:6], append([]Event{{Type: EventRetryCap, RetryCap: intPtr(5)}}, ev[6:]...)...)
			},
			want: []string{"line 7: retry_cap was written after the first attempt", "retry_cap is written 2 times (lines 1, 7)"}},
		{name: "record cap differs",
			editRecord: func(r *flakegate.RunRecord) { r.RetryCap = 3 },
			want:       []string{"retry_cap is 3 in the record but 2 in the transcript (line 1)"}},
		{name: "cap has no value",
			events:     func(ev []Event) []Event { ev[0].RetryCap = nil; return ev },
			editRecord: func(r *flakegate.RunRecord) { r.RetryCap = 2 },
			want:       []string{"line 1: the retry_cap event has no value"}},
		{name: "record claims a passing retry",
			events:     func(ev []Event) []Event { ev[7].Result, ev[7].ExitCode = flakegate.ResultFail, 1; return ev },
			editRecord: func(r *flakegate.RunRecord) { r.RetryResults = []string{flakegate.ResultPass} },
			want:       []string{`retry 1 is "pass" in retry_results, but it ended "fail" (line 8)`}},
		{name: "record turns a timeout into a pass",
			events:     func(ev []Event) []Event { ev[7].Result = flakegate.ResultTimeout; return ev },
			editRecord: func(r *flakegate.RunRecord) { r.RetryResults = []string{flakegate.ResultPass} },
			want:       []string{`retry 1 is "pass" in retry_results, but it ended "timeout"`}},
		{name: "record hides a retry",
			editRecord: func(r *flakegate.RunRecord) { r.RetryResults = nil },
			want:       []string{"retry_results lists 0 retries, the transcript 1"}},
		{name: "more retries than the cap",
			events: func(ev []Event) []Event {
				ev[0].RetryCap = intPtr(0)
				return ev
			},
			want: []string{"1 retries ran but the retry cap is 0"}},
		{name: "retries out of order",
			events: func(ev []Event) []Event { ev[6].Index, ev[7].Index = 2, 2; return ev },
			want:   []string{"line 8: candidate retry #2 ends where retry #1 was due"}},
		{name: "record claims base passed, base failed",
			events: func(ev []Event) []Event {
				ev[4].Result, ev[5].Result = flakegate.ResultFail, flakegate.ResultFail
				return ev
			},
			editRecord: func(r *flakegate.RunRecord) { r.BaseSeedResult = flakegate.ResultPass },
			want:       []string{`base_seed_result is "pass" in the record, "fail" in the transcript (line 6)`}},
		{name: "base replay disagrees with the base attempt",
			events: func(ev []Event) []Event { ev[4].Result = flakegate.ResultTimeout; return ev },
			want:   []string{`line 6: the base replay says "pass", but the base attempt (line 5) ended "timeout"`}},
		{name: "base retried until it passed",
			events: func(ev []Event) []Event {
				retry := []Event{
					{Type: EventAttemptStart, Side: SideBase, Index: 1},
					{Type: EventAttemptEnd, Side: SideBase, Index: 1, Result: flakegate.ResultPass},
				}
				ev[4].Result = flakegate.ResultFail
				return append(ev[:5], append(retry, ev[5:]...)...)
			},
			want: []string{"the base seed ran 2 times (lines 5, 7)", `the base replay says "pass", but the base attempt (line 5) ended "fail"`}},
		{name: "record claims a base result with no replay",
			events:     func(ev []Event) []Event { return append(ev[:3], ev[8]) },
			editRecord: func(r *flakegate.RunRecord) { r.BaseSeedResult = flakegate.ResultPass },
			want:       []string{`base_seed_result is "pass" in the record, but the transcript has no base replay`}},
		{name: "record says cached, transcript ran base",
			editRecord: func(r *flakegate.RunRecord) { r.BaseFromCache = true },
			want:       []string{"base_from_replay_cache is true in the record, false in the transcript"}},
		{name: "replay not cached and no base attempt",
			events: func(ev []Event) []Event { return append(ev[:3], ev[5:]...) },
			want:   []string{"line 4: the base replay did not come from the cache, but no base attempt ran"}},
		{name: "record wall time differs",
			editRecord: func(r *flakegate.RunRecord) { r.Attempts[0].WallSeconds = 0.5 },
			want:       []string{"attempt candidate #0: the record says 0.5s of wall time, the transcript (line 3) 1.25s"}},
		{name: "record exit code differs",
			editRecord: func(r *flakegate.RunRecord) { r.Attempts[1].ExitCode = 3 },
			want:       []string{"attempt base #0: the record says exit code 3, the transcript (line 5) 0"}},
		{name: "record attempts reordered",
			editRecord: func(r *flakegate.RunRecord) { r.Attempts[1], r.Attempts[2] = r.Attempts[2], r.Attempts[1] },
			want: []string{"attempt 2 is candidate #1 in the record but base #0 in the transcript (line 5)",
				"attempt 3 is base #0 in the record but candidate #1 in the transcript (line 8)"}},
		{name: "attempt never ends",
			events:     func(ev []Event) []Event { return append(ev[:7], ev[8]) },
			editRecord: func(r *flakegate.RunRecord) { r.RetryResults = nil; r.Attempts = r.Attempts[:2] },
			want:       []string{"attempt candidate #1 started on line 7 never ended"}},
		{name: "an event after complete",
			events: func(ev []Event) []Event {
				return append(ev, Event{Type: EventAttemptStart, Side: SideCandidate, Index: 2})
			},
			want: []string{"line 10: an event follows the complete event on line 9", "attempt candidate #2 started on line 10 never ended", "does not end with a complete event"}},
		{name: "unknown side",
			events:     func(ev []Event) []Event { ev[1].Side, ev[2].Side = "other", "other"; return ev },
			editRecord: func(r *flakegate.RunRecord) { r.Attempts[0].Side = "other" },
			want:       []string{`line 2: attempt side "other" is neither candidate, base nor probe`, "no first candidate attempt"}},
		{name: "record hides a failed probe",
			events: func(ev []Event) []Event {
				probe := []Event{
					{Type: EventAttemptStart, Side: SideProbe, Index: 1},
					{Type: EventAttemptEnd, Side: SideProbe, Index: 1, Result: flakegate.ResultFail, ExitCode: 1},
				}
				return append(ev[:8], append(probe, ev[8:]...)...)
			},
			editRecord: func(r *flakegate.RunRecord) { r.BaseProbeResults = []string{flakegate.ResultPass} },
			want:       []string{`base_probe_results is ["pass"] in the record, but the probe attempts ended ["fail"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestVerifyUnreadableRecord(t *testing.T) {
	type testCase struct {
		name   string
		record string
	}
	run := func(t *testing.T, tc testCase) {
		got := Verify([]byte(tc.record), writeTranscript(t, schedulerEvents()))
		if len(got) != 1 || !strings.Contains(got[0], "not a readable run record") {
			t.Errorf("Verify = %q, want one difference saying the record is unreadable", got)
		}
	}
	for _, tc := range []testCase{
		{name: "empty", record: ""},
		{name: "not an object", record: "[1,2]"},
		{name: "wrong type", record: `{"retry_cap": "2"}`},
		{name: "bad seed", record: `{"seed": "a b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	tr, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Write(Event{Type: EventRetryCap, RetryCap: intPtr(2), PrevSHA256: "forged"}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Write(Event{Type: EventComplete}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("transcript has %d lines, want 2:\n%s", len(lines), raw)
	}
	var first, second Event
	if err := json.Unmarshal(lines[0], &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lines[1], &second); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lines[0])
	if first.PrevSHA256 != "" || second.PrevSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("prev_sha256 = %q, %q; want \"\" and %x", first.PrevSHA256, second.PrevSHA256, sum)
	}
	if first.At.IsZero() || first.At.Location() != time.UTC {
		t.Errorf("At = %v, want the current time in UTC", first.At)
	}
	if err := tr.Write(Event{Type: EventComplete}); err == nil {
		t.Error("Write after Close succeeded")
	}
	if _, err := Create(path); flakegate.ErrorCode(err) != flakegate.ECONFLICT {
		t.Errorf("Create over an existing file: %v, want %s", err, flakegate.ECONFLICT)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, raw) {
		t.Error("Create changed an existing transcript")
	}
	if _, err := Create(filepath.Join(dir, "no", "such", "dir", "t.jsonl")); flakegate.ErrorCode(err) != flakegate.EINTERNAL {
		t.Errorf("Create in a missing folder: %v, want %s", err, flakegate.EINTERNAL)
	}
}

func FuzzVerify(f *testing.F) {
	events := schedulerEvents()
	rec, _ := json.Marshal(recordFor(events))
	var tr bytes.Buffer
	prev := ""
	for _, ev := range events {
		ev.PrevSHA256 = prev
		line, _ := json.Marshal(ev)
		tr.Write(line)
		tr.WriteByte('\n')
		prev = lineSHA256(line)
	}
	f.Add(rec, tr.Bytes())
	f.Add([]byte(`{}`), []byte("{}\n{}\n"))
	f.Add([]byte(`{"attempts":[{"side":"base"}]}`), []byte(`{"type":"attempt_end","side":"base","prev_sha256":""}`+"\n"))
	f.Fuzz(func(t *testing.T, record, transcript []byte) {
		for _, d := range Verify(record, transcript) {
			if d == "" {
				t.Fatal("an empty difference")
			}
		}
	})
}
