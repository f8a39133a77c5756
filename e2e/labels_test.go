package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/transcript"
)

// checkReproduce runs a result's reproduce line with the test's binary
// and checks its exit: it replays exactly that seed in the candidate tree.
func checkReproduce(t *testing.T, res flakegate.Result, want int) {
	t.Helper()
	line, ok := strings.CutPrefix(res.Reproduce, "flakegate ")
	if !ok {
		t.Fatalf("reproduce %q does not start with flakegate", res.Reproduce)
	}
	cmd := exec.Command("sh", "-c", `"$FLAKEGATE" `+line)
	cmd.Env = append(cleanEnv(), "FLAKEGATE="+flakegateBin)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Errorf("reproduce exited %d, want %d: %s\n%s", code, want, res.Reproduce, out)
	}
}

// verifyTranscript checks a record against the transcript it names: the
// digest matches and transcript.Verify finds no difference.
func verifyTranscript(t *testing.T, recordPath string, rec *flakegate.RunRecord) {
	t.Helper()
	recRaw, err := os.ReadFile(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := os.ReadFile(rec.TranscriptPath)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	sum := sha256.Sum256(tr)
	if hex.EncodeToString(sum[:]) != rec.TranscriptSHA256 {
		t.Errorf("transcript_sha256 %s does not match %s", rec.TranscriptSHA256, rec.TranscriptPath)
	}
	for _, d := range transcript.Verify(recRaw, tr) {
		t.Errorf("transcript %s: %s", rec.TranscriptPath, d)
	}
	if !strings.HasPrefix(string(tr), `{"type":"retry_cap"`) {
		t.Errorf("the transcript does not start with the retry cap:\n%s", tr)
	}
}

// The scripted repository: props/prop.sh is the property, src/lib.sh the
// code under test, fixtures/data.txt the fixture and tools/gen.sh its
// generator. A candidate patch replaces some of them.
const (
	propScript = `#!/bin/sh
# Property: the library accepts every seed on the fixture.
. ./src/lib.sh
grep -q alpha fixtures/data.txt || exit 1
ok "$1"
`
	libOK = `ok() { return 0; }
`
	libRed = `ok() { return 1; }
`
	// libFlaky fails the first attempt of each seed and passes afterwards:
	// the counter lives outside the worktree, which is cleaned per attempt.
	libFlaky = `ok() {
	n=$(cat "$FG_STATE/flaky-$1" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/flaky-$1"
	[ "$n" -ge 1 ]
}
`
	libSlow  = "ok() { sleep 30; }\n"
	libCrash = "ok() { exit 3; }\n"
	libKill  = "ok() { kill -KILL $$; }\n"
	// libCountBase passes and counts its runs (the base's library only).
	libCountBase = `ok() { echo "$1" >> "$FG_STATE/base-runs"; return 0; }
`
	genScript = "#!/bin/sh\necho alpha > fixtures/data.txt\n"
)

// config is the scripted repository's config. The flake probe is off
// (flake_probe_runs: 0): these tests count attempts, and grant freezes to
// flakes their base never has; probeConfig turns it on (probe_test.go).
func config(extra string) string {
	return `version: 1
retry_cap: 2
workers: 1
flake_probe_runs: 0
freeze:
  expires_after_runs: 3
sandbox:
  rw: ["@FG_STATE@"]
  env: [FG_STATE]
properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    generator: tools/gen.sh
    seeds: [11, 12]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 1500ms
` + extra
}

func baseFiles(lib string) map[string]string {
	return map[string]string{
		"flakegate.yaml":    config(""),
		"props/prop.sh":     propScript,
		"src/lib.sh":        lib,
		"fixtures/data.txt": "alpha\n",
		"tools/gen.sh":      genScript,
		"README.md":         "scripted repository\n",
	}
}

func TestCheckLabels(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: runs git and the flakegate binary")
	}
	type testCase struct {
		name      string
		baseLib   string
		candidate map[string]string
		label     flakegate.Label
		exit      int
		// replayExit is the exit of the first result's reproduce line
		// (checked for PASS and when not 0).
		replayExit int
		// check looks at the first record.
		check func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result)
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		r := newRepo(t, baseFiles(tc.baseLib))
		r.candidate("cand", tc.candidate)
		cr := r.check("--base", "base", "--candidate", "cand")
		if cr.code != tc.exit {
			t.Fatalf("exit %d, want %d\n%s", cr.code, tc.exit, cr)
		}
		if got := strings.Join(cr.labels(), ","); got != string(tc.label)+","+string(tc.label) {
			t.Fatalf("labels %s, want %s for both seeds\n%s", got, tc.label, cr)
		}
		for i, res := range cr.summary.Results {
			rec := cr.record(t, i)
			if res.RecordSHA256 == "" || !strings.HasPrefix(res.Reproduce, "flakegate replay ") {
				t.Errorf("result %d: record_sha256 %q, reproduce %q", i, res.RecordSHA256, res.Reproduce)
			}
			if rec.BaseSHA != cr.summary.Base || rec.CandidateSHA != cr.summary.Candidate || len(rec.BaseSHA) != 40 {
				t.Errorf("record pins %s..%s, summary %s..%s", rec.BaseSHA, rec.CandidateSHA, cr.summary.Base, cr.summary.Candidate)
			}
			if rec.RetryCap != 2 || rec.CandidateEnv == nil || rec.BaseEnv == nil || rec.CandidateEnv.Filesystem == "" || rec.CandidateEnv.Workers != 1 {
				t.Errorf("record cap/env: %d %+v %+v", rec.RetryCap, rec.CandidateEnv, rec.BaseEnv)
			}
			verifyTranscript(t, res.Record, rec)
			// The label is the table's: the record on disk classifies to
			// the same label and row (the check adds reasons, never labels).
			raw, err := os.ReadFile(res.Record)
			if err != nil {
				t.Fatal(err)
			}
			if d := flakegate.ClassifyBytes(raw); d.Label != res.Label || d.Row != res.Row {
				t.Errorf("result %d says %s row %d, its record classifies %s row %d", i, res.Label, res.Row, d.Label, d.Row)
			}
			if tc.check != nil {
				tc.check(t, rec, res)
			}
		}
		if tc.replayExit != 0 || tc.label == flakegate.Pass {
			checkReproduce(t, cr.summary.Results[0], tc.replayExit)
		}
		if !strings.Contains(cr.stderr, string(tc.label)) || !strings.Contains(cr.stderr, "props/prop.sh seed 11") {
			t.Errorf("stderr lacks the per-triple line:\n%s", cr.stderr)
		}
	}
	tests := []testCase{
		{
			name: "PASS", baseLib: libOK, label: flakegate.Pass, exit: 0,
			candidate: map[string]string{"README.md": "changed\n"},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if rec.CandidateResult != "pass" || rec.BaseSeedResult != "pass" || len(rec.RetryResults) != 0 || !rec.TranscriptComplete {
					t.Errorf("record %+v", rec)
				}
				if len(rec.DiffPaths) != 1 || rec.DiffPaths[0] != "README.md" {
					t.Errorf("diff_paths %v", rec.DiffPaths)
				}
			},
		},
		{
			name: "SCHEDULER", baseLib: libOK, label: flakegate.Scheduler, exit: 0,
			candidate: map[string]string{"src/lib.sh": libFlaky},
			check: func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.CandidateResult != "fail" || strings.Join(rec.RetryResults, ",") != "pass" || rec.BaseSeedResult != "pass" {
					t.Errorf("record results %s %v %s", rec.CandidateResult, rec.RetryResults, rec.BaseSeedResult)
				}
				if !res.Freeze || len(res.Attempts) != 3 {
					t.Errorf("freeze %t, attempts %d", res.Freeze, len(res.Attempts))
				}
			},
		},
		{
			name: "PROPERTY base red", baseLib: libRed, label: flakegate.Property, exit: 1,
			candidate: map[string]string{"README.md": "changed\n"},
			check: func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result) {
				// The seed fails on base too: PROPERTY after one candidate
				// attempt, no retry spent.
				if rec.BaseSeedResult != "fail" || len(rec.RetryResults) != 0 || len(rec.Attempts) != 2 || rec.Attempts[1].Side != "base" {
					t.Errorf("base %s, retries %v, attempts %+v", rec.BaseSeedResult, rec.RetryResults, rec.Attempts)
				}
				if res.CandidateAttempts != 1 || res.BaseAttempts != 1 || res.BaseCached || !strings.Contains(res.Reason, "fails on base") {
					t.Errorf("result counts %d/%d cached %t, reason %q", res.CandidateAttempts, res.BaseAttempts, res.BaseCached, res.Reason)
				}
			},
		},
		{
			name: "PROPERTY base green", baseLib: libOK, label: flakegate.Property, exit: 1, replayExit: 1,
			candidate: map[string]string{"src/lib.sh": libRed},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if rec.BaseSeedResult != "pass" || rec.CandidateResult != "fail" || len(rec.RetryResults) != 2 {
					t.Errorf("base %s, candidate %s, retries %v", rec.BaseSeedResult, rec.CandidateResult, rec.RetryResults)
				}
			},
		},
		{
			name: "BUDGET by timeout", baseLib: libOK, label: flakegate.Budget, exit: 1,
			candidate: map[string]string{"src/lib.sh": libSlow},
			check: func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.BudgetOK || rec.Attempts[0].Result != "timeout" || rec.Attempts[0].WallSeconds > 10 {
					t.Errorf("budget_ok %t, attempt %+v", rec.BudgetOK, rec.Attempts[0])
				}
				if !strings.Contains(res.Reason, "wall budget 1.5s exceeded at 1.") {
					t.Errorf("the reason lacks the budget and the time: %q", res.Reason)
				}
			},
		},
		{
			name: "INCOMPLETE by crash", baseLib: libOK, label: flakegate.Incomplete, exit: 1, replayExit: 3,
			candidate: map[string]string{"src/lib.sh": libCrash},
			check: func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.CandidateResult != "error" || rec.Attempts[0].ExitCode != 3 || len(rec.RetryResults) != 0 {
					t.Errorf("candidate %s, attempt %+v, retries %v", rec.CandidateResult, rec.Attempts[0], rec.RetryResults)
				}
				if !strings.HasPrefix(res.Reason, "the test never ran: candidate attempt 0: ") || !strings.Contains(res.Reason, " exited 3") || strings.Contains(res.Reason, `want "pass" or "fail"`) {
					t.Errorf("reason %q does not say why in words", res.Reason)
				}
			},
		},
		{
			name: "INCOMPLETE by signal", baseLib: libOK, label: flakegate.Incomplete, exit: 1,
			candidate: map[string]string{"src/lib.sh": libKill},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if rec.CandidateResult != "error" || rec.Attempts[0].Signal != "SIGKILL" {
					t.Errorf("candidate %s, attempt %+v", rec.CandidateResult, rec.Attempts[0])
				}
			},
		},
		{
			name: "FIXTURE", baseLib: libOK, label: flakegate.Fixture, exit: 1,
			candidate: map[string]string{"fixtures/data.txt": "alpha beta\n"},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if rec.FixtureSHA256 == rec.BaseFixtureSHA256 || len(rec.FixtureSHA256) != 64 {
					t.Errorf("digests %s %s", rec.FixtureSHA256, rec.BaseFixtureSHA256)
				}
				// The digests alone decide: no attempt runs on either side.
				if rec.BaseSeedResult != "not_run" || len(rec.Attempts) != 0 || len(rec.RetryResults) != 0 ||
					!strings.HasPrefix(rec.AttemptsSkipped, "fixture differs from base: fixtures/data.txt is ") {
					t.Errorf("attempts ran: base %q, attempts %d, attempts_skipped %q", rec.BaseSeedResult, len(rec.Attempts), rec.AttemptsSkipped)
				}
			},
		},
		{
			name: "FIXTURE absent on the candidate", baseLib: libOK, label: flakegate.Fixture, exit: 1,
			candidate: map[string]string{"fixtures/data.txt": ""},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if len(rec.Attempts) != 0 || !strings.Contains(rec.AttemptsSkipped, "is absent on the candidate") {
					t.Errorf("attempts %d, attempts_skipped %q", len(rec.Attempts), rec.AttemptsSkipped)
				}
			},
		},
		{
			// The graded tree runs the base's property on the candidate's
			// code: it fails there, and the patch edited it.
			name: "CONTAMINATED by property", baseLib: libOK, label: flakegate.Contaminated, exit: 1,
			candidate: map[string]string{"props/prop.sh": propScript + "# weakened\n", "src/lib.sh": libRed},
			check: func(t *testing.T, rec *flakegate.RunRecord, res flakegate.Result) {
				if !slices.Equal(rec.GraderEdits, []string{"props/prop.sh"}) || !slices.Contains(rec.DiffPaths, "props/prop.sh") ||
					rec.BaseSeedResult != "pass" || len(rec.RetryResults) != 0 || rec.AttemptsSkipped != "" {
					t.Errorf("grader_edits %v diff_paths %v base %q retries %v attempts_skipped %q", rec.GraderEdits, rec.DiffPaths, rec.BaseSeedResult, rec.RetryResults, rec.AttemptsSkipped)
				}
				if want := "the patch changes props/prop.sh, and the base's version of props/prop.sh fails on the patch's code: split that edit into another review"; res.Reason != want {
					t.Errorf("reason %q, want %q", res.Reason, want)
				}
			},
		},
		{
			// An edited property is not what grades the patch: the base's
			// runs, and passes on code that did not break.
			name: "PASS with an edited property", baseLib: libOK, label: flakegate.Pass, exit: 0,
			candidate: map[string]string{"props/prop.sh": propScript + "# weakened\n"},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if slices.Contains(rec.DiffPaths, "props/prop.sh") || rec.GraderEdits != nil {
					t.Errorf("diff_paths %v grader_edits %v: the graded tree holds the base's property", rec.DiffPaths, rec.GraderEdits)
				}
			},
		},
		{
			name: "CONTAMINATED by generator", baseLib: libOK, label: flakegate.Contaminated, exit: 1,
			candidate: map[string]string{"tools/gen.sh": genScript + "# edited\n"},
		},
		{
			name: "CONTAMINATED by config", baseLib: libOK, label: flakegate.Contaminated, exit: 1,
			// The candidate raises its own retry cap: the base's config
			// still rules, and every triple is contaminated.
			candidate: map[string]string{"flakegate.yaml": strings.Replace(config(""), "retry_cap: 2", "retry_cap: 9", 1)},
			check: func(t *testing.T, rec *flakegate.RunRecord, _ flakegate.Result) {
				if rec.RetryCap != 2 || len(rec.WatchPaths) == 0 || rec.WatchPaths[0] != "flakegate.yaml" {
					t.Errorf("retry_cap %d (want the base's 2), watch_paths %v", rec.RetryCap, rec.WatchPaths)
				}
				// The diff alone decides: no attempt runs on either side.
				if rec.BaseSeedResult != "not_run" || rec.CandidateResult != "fail" || len(rec.Attempts) != 0 ||
					!strings.HasPrefix(rec.AttemptsSkipped, "contaminated by diff: flakegate.yaml") {
					t.Errorf("attempts ran: base %q, attempts %d, attempts_skipped %q", rec.BaseSeedResult, len(rec.Attempts), rec.AttemptsSkipped)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestCheckReplayCache: a second candidate on the same base replays no
// base seed; --no-replay-cache replays them all again.
func TestCheckReplayCache(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libCountBase))
	r.candidate("cand1", map[string]string{"src/lib.sh": libOK, "README.md": "one\n"})
	r.candidate("cand2", map[string]string{"src/lib.sh": libOK, "README.md": "two\n"})
	baseRuns := func() int {
		b, _ := os.ReadFile(filepath.Join(r.state, "base-runs"))
		return strings.Count(string(b), "\n")
	}
	first := r.check("--base", "base", "--candidate", "cand1")
	if first.code != 0 || baseRuns() != 2 {
		t.Fatalf("first check: base ran %d times\n%s", baseRuns(), first)
	}
	for i := range first.summary.Results {
		if rec := first.record(t, i); rec.BaseFromCache {
			t.Errorf("first check: record %d claims a cached base result", i)
		}
	}
	second := r.check("--base", "base", "--candidate", "cand2")
	if second.code != 0 {
		t.Fatalf("second check\n%s", second)
	}
	if n := baseRuns(); n != 2 {
		t.Errorf("second candidate replayed base again: %d base runs", n)
	}
	for i := range second.summary.Results {
		rec := second.record(t, i)
		verifyTranscript(t, second.summary.Results[i].Record, rec)
		if !rec.BaseFromCache || rec.BaseSeedResult != "pass" {
			t.Errorf("record %d: base_from_replay_cache %t, base %s", i, rec.BaseFromCache, rec.BaseSeedResult)
		}
		// The cached base result still counts as the base attempt it was.
		if res := second.summary.Results[i]; !res.BaseCached || res.BaseAttempts != 1 || res.CandidateAttempts != 1 {
			t.Errorf("result %d: %d candidate, %d base attempts, base_cached %t", i, res.CandidateAttempts, res.BaseAttempts, res.BaseCached)
		}
		for _, a := range rec.Attempts {
			if a.Side == "base" {
				t.Errorf("record %d has a base attempt", i)
			}
		}
	}
	third := r.check("--base", "base", "--candidate", "cand2", "--no-replay-cache")
	if third.code != 0 || baseRuns() != 4 {
		t.Errorf("--no-replay-cache: base ran %d times in all, want 4\n%s", baseRuns(), third)
	}
}
