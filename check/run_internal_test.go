package check

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/grade"
	sitepkg "github.com/flakegate/flakegate/site"
)

// These tests run the whole check (Run, the CLI's entry point) in
// process on a temporary git repository, with sandbox mode none: every
// attempt is a real, tiny sh process. They are the fast twins of the
// e2e label tests (e2e/labels_test.go, e2e/isolation_test.go): what the
// pipeline decides, records and writes to the ledger, not the sandbox.

// The scripted repository, as e2e's: props/prop.sh is the property,
// src/lib.sh the code under test, fixtures/data.txt the fixture and
// tools/gen.sh its generator.
const (
	rtProp = `#!/bin/sh
. ./src/lib.sh
grep -q alpha fixtures/data.txt || exit 1
ok "$1"
`
	rtLibOK  = "ok() { echo ok; return 0; }\n"
	rtLibRed = "ok() { echo '--- FAIL'; return 1; }\n"
	// rtLibFlaky fails the first attempt of each seed and passes
	// afterwards: the counter lives outside the worktree.
	rtLibFlaky = `ok() {
	n=$(cat "$FG_STATE/flaky-$1" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/flaky-$1"
	[ "$n" -ge 1 ]
}
`
	rtLibSlow  = "ok() { sleep 5; }\n"
	rtLibCrash = "ok() { exit 3; }\n"
	rtGen      = "#!/bin/sh\necho alpha > fixtures/data.txt\n"
)

// rtConfig is the config of the scripted repository: sandbox mode none,
// no flake probe (the tests count attempts), one seed (11): a check
// takes about a second, most of it git's.
func rtConfig(extra string) string {
	return `version: 1
retry_cap: 2
workers: 1
flake_probe_runs: 0
freeze:
  expires_after_runs: 3
sandbox:
  mode: none
  env: [FG_STATE]
properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    generator: tools/gen.sh
    seeds: [11]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 2s
` + extra
}

func rtFiles(lib string) map[string]string {
	return map[string]string{
		"flakegate.yaml":    rtConfig(""),
		"props/prop.sh":     rtProp,
		"src/lib.sh":        lib,
		"fixtures/data.txt": "alpha\n",
		"tools/gen.sh":      rtGen,
		"README.md":         "scripted repository\n",
	}
}

// rtRepo is a temporary git repository the tests commit into, with a
// ledger folder and a state folder ($FG_STATE) outside it.
type rtRepo struct {
	t      *testing.T
	dir    string
	state  string
	ledger string
}

func newRTRepo(t *testing.T, files map[string]string) *rtRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmp := t.TempDir()
	r := &rtRepo{t: t, dir: filepath.Join(tmp, "repo"), state: filepath.Join(tmp, "state"), ledger: filepath.Join(tmp, "ledger")}
	for _, d := range []string{r.dir, r.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.git("init", "-q", "-b", "main")
	r.commit("base", files)
	r.git("tag", "base")
	return r
}

func (r *rtRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files ("" deletes one) and commits them.
func (r *rtRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if files[name] == "" {
			if err := os.RemoveAll(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// candidate commits files on a detached head off base and tags it.
func (r *rtRepo) candidate(tag string, files map[string]string) string {
	r.t.Helper()
	return r.rebase("base", tag, files)
}

// rebase commits files on a detached head off from and tags it.
func (r *rtRepo) rebase(from, tag string, files map[string]string) string {
	r.t.Helper()
	r.git("checkout", "-q", "--detach", from)
	sha := r.commit(tag, files)
	r.git("tag", tag)
	return sha
}

// rtProgress keeps the progress lines the check sends.
type rtProgress struct {
	mu    sync.Mutex
	lines []string
}

func (p *rtProgress) add(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines = append(p.lines, line)
}

func (p *rtProgress) Start(total int) { p.add("start " + strconv.Itoa(total)) }
func (p *rtProgress) Done(res flakegate.Result) {
	p.add("done " + string(res.Label) + " " + res.ID() + " " + res.Seed.String())
}
func (p *rtProgress) Note(topic, msg string) { p.add("note " + topic + ": " + msg) }
func (p *rtProgress) Finish()                { p.add("finish") }

func (p *rtProgress) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// rtRun is one in-process check.
type rtRun struct {
	sum      *flakegate.Summary
	err      error
	out      string
	progress *rtProgress
}

// options is the Options of a check of candidate against base, as the
// CLI builds them, with the ledger in r.ledger.
func (r *rtRepo) options(base, candidate string) Options {
	return Options{
		Dir:        r.dir,
		Base:       base,
		Candidate:  candidate,
		OutDir:     filepath.Join(r.t.TempDir(), "out"),
		LedgerPath: r.ledger,
		By:         "flakegate check",
		Env:        []string{"PATH=" + os.Getenv("PATH"), "FG_STATE=" + r.state},
		OpenStore: func(ctx context.Context, commonDir string) (flakegate.Store, error) {
			s, err := filestore.Open(r.ledger)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	}
}

func (r *rtRepo) check(base, candidate string, edit ...func(*Options)) *rtRun {
	r.t.Helper()
	opts := r.options(base, candidate)
	for _, e := range edit {
		e(&opts)
	}
	p := &rtProgress{}
	opts.Progress = p
	sum, err := Run(context.Background(), opts)
	return &rtRun{sum: sum, err: err, out: opts.OutDir, progress: p}
}

func (cr *rtRun) String() string {
	b, _ := json.MarshalIndent(cr.sum, "", "  ")
	return "err: " + errString(cr.err) + "\nsummary: " + string(b) + "\nprogress:\n" + cr.progress.text()
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func (cr *rtRun) labels() string {
	if cr.sum == nil {
		return ""
	}
	var ls []string
	for _, res := range cr.sum.Results {
		ls = append(ls, string(res.Label))
	}
	return strings.Join(ls, ",")
}

// record reads result i's record file.
func (cr *rtRun) record(t *testing.T, i int) (*flakegate.RunRecord, []byte) {
	t.Helper()
	raw, err := os.ReadFile(cr.sum.Results[i].Record)
	if err != nil {
		t.Fatal(err)
	}
	rec := new(flakegate.RunRecord)
	if err := json.Unmarshal(raw, rec); err != nil {
		t.Fatalf("record %d: %v", i, err)
	}
	if d := flakegate.ClassifyBytes(raw); d.Label != cr.sum.Results[i].Label || d.Row != cr.sum.Results[i].Row {
		t.Errorf("result %d says %s row %d, its record classifies %s row %d", i, cr.sum.Results[i].Label, cr.sum.Results[i].Row, d.Label, d.Row)
	}
	return rec, raw
}

// mustRun fails the test unless the check ran to a summary with labels.
func (cr *rtRun) mustLabels(t *testing.T, want, verdict string) {
	t.Helper()
	if cr.err != nil || cr.sum == nil {
		t.Fatalf("check failed:\n%s", cr)
	}
	if got := cr.labels(); got != want || cr.sum.Verdict != verdict {
		t.Fatalf("labels %s verdict %s, want %s verdict %s\n%s", got, cr.sum.Verdict, want, verdict, cr)
	}
}

// storedRecords is how many records the ledger folder's record store
// holds.
func (r *rtRepo) storedRecords(t *testing.T) map[string][]byte {
	t.Helper()
	s, err := filestore.Open(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := map[string][]byte{}
	if err := s.EachRecord(context.Background(), func(sha string, raw []byte) error {
		got[sha] = raw
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func (r *rtRepo) freezes(t *testing.T) []flakegate.Freeze {
	t.Helper()
	s, err := filestore.Open(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fs, err := s.ListFreezes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestRunLabels(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name      string
		baseLib   string
		config    string // "" is rtConfig("")
		candidate map[string]string
		label     flakegate.Label
		verdict   string
		freezeBy  string
		check     func(t *testing.T, cr *rtRun, rec *flakegate.RunRecord, res flakegate.Result)
	}
	tests := []testCase{
		{
			name: "PASS", baseLib: rtLibOK, label: flakegate.Pass, verdict: flakegate.VerdictPass,
			candidate: map[string]string{"README.md": "changed\n"},
			check: func(t *testing.T, cr *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.CandidateResult != "pass" || rec.BaseSeedResult != "pass" || len(rec.RetryResults) != 0 || !rec.TranscriptComplete || !rec.BudgetOK {
					t.Errorf("record %+v", rec)
				}
				if !slices.Equal(rec.DiffPaths, []string{"README.md"}) {
					t.Errorf("diff_paths %v", rec.DiffPaths)
				}
				if res.Isolation != sitepkg.IsolationNone || rec.Isolation != sitepkg.IsolationNone || cr.sum.Isolation != sitepkg.IsolationNone {
					t.Errorf("isolation: result %q record %q summary %q", res.Isolation, rec.Isolation, cr.sum.Isolation)
				}
				if !strings.HasSuffix(res.Reproduce, " --sandbox none") || !strings.HasPrefix(res.Reproduce, "flakegate replay ") {
					t.Errorf("reproduce %q", res.Reproduce)
				}
				if res.CandidateAttempts != 1 || res.BaseAttempts != 1 || res.BaseCached {
					t.Errorf("attempt counts %d/%d cached %t", res.CandidateAttempts, res.BaseAttempts, res.BaseCached)
				}
				// An unsandboxed base result is never cached.
				if rec.BaseFromCache || rec.Attempts[0].OutputTail != "ok\n" {
					t.Errorf("base from cache %t, output %q", rec.BaseFromCache, rec.Attempts[0].OutputTail)
				}
			},
		},
		{
			name: "PROPERTY base green", baseLib: rtLibOK, label: flakegate.Property, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"src/lib.sh": rtLibRed},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				// Row 10: every retry inside the cap failed, base passed.
				if rec.CandidateResult != "fail" || !slices.Equal(rec.RetryResults, []string{"fail", "fail"}) || rec.BaseSeedResult != "pass" {
					t.Errorf("record results %s %v %s", rec.CandidateResult, rec.RetryResults, rec.BaseSeedResult)
				}
				if res.Row != 10 || res.CandidateAttempts != 3 || !strings.Contains(res.Reason, "candidate failed 3 of 3 attempts; no retry inside the cap passed; base passed") {
					t.Errorf("row %d, %d candidate attempts, reason %q", res.Row, res.CandidateAttempts, res.Reason)
				}
			},
		},
		{
			name: "PROPERTY base red", baseLib: rtLibRed, label: flakegate.Property, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"README.md": "changed\n"},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				// The seed fails on base too: no retry is spent.
				if rec.BaseSeedResult != "fail" || len(rec.RetryResults) != 0 || len(rec.Attempts) != 2 || rec.Attempts[1].Side != "base" {
					t.Errorf("base %s, retries %v, attempts %+v", rec.BaseSeedResult, rec.RetryResults, rec.Attempts)
				}
				if res.CandidateAttempts != 1 || res.BaseAttempts != 1 || !strings.Contains(res.Reason, "fails on base") {
					t.Errorf("counts %d/%d, reason %q", res.CandidateAttempts, res.BaseAttempts, res.Reason)
				}
			},
		},
		{
			// Fails once, passes on the retry, passes on base: SCHEDULER. With
			// mode none no freeze is granted even with --freeze-owner: the
			// code under test could have forged its SCHEDULER.
			name: "SCHEDULER", baseLib: rtLibOK, label: flakegate.Scheduler, verdict: flakegate.VerdictPass, freezeBy: "alice",
			// The probe runs the base seed three more times: with the base
			// replay, 4 base passes against a 1-in-2 candidate flake.
			config:    strings.Replace(rtConfig(""), "flake_probe_runs: 0", "flake_probe_runs: 3", 1),
			candidate: map[string]string{"src/lib.sh": rtLibFlaky},
			check: func(t *testing.T, cr *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.CandidateResult != "fail" || !slices.Equal(rec.RetryResults, []string{"pass"}) || rec.BaseSeedResult != "pass" {
					t.Errorf("record results %s %v %s", rec.CandidateResult, rec.RetryResults, rec.BaseSeedResult)
				}
				if res.Row != 9 || !res.Freeze || len(res.Attempts) != 6 || res.Owner != "" || res.RunsLeft != nil {
					t.Errorf("row %d freeze %t, attempts %d, owner %q runs_left %v", res.Row, res.Freeze, len(res.Attempts), res.Owner, res.RunsLeft)
				}
				if !strings.Contains(res.Reason, "no freeze granted: the check ran without the sandbox (isolation none)") {
					t.Errorf("reason %q", res.Reason)
				}
				if res.FlakeOrigin != flakegate.FlakeOriginNew || !slices.Equal(res.BaseProbeResults, []string{"pass", "pass", "pass"}) ||
					!strings.Contains(res.Reason, "new flake: base passed 4 of 4") {
					t.Errorf("flake origin %q, probe %v, reason %q", res.FlakeOrigin, res.BaseProbeResults, res.Reason)
				}
				if n := strings.Count(res.Reason, "no freeze granted"); n != 1 {
					t.Errorf("reason says %d times why no freeze: %q", n, res.Reason)
				}
				if !strings.Contains(cr.progress.text(), "isolation none") {
					t.Errorf("no note says why no freeze:\n%s", cr.progress.text())
				}
			},
		},
		{
			name: "BUDGET", baseLib: rtLibOK, label: flakegate.Budget, verdict: flakegate.VerdictReject,
			config:    strings.Replace(rtConfig(""), "wall_budget: 2s", "wall_budget: 300ms", 1),
			candidate: map[string]string{"src/lib.sh": rtLibSlow},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.BudgetOK || rec.Attempts[0].Result != "timeout" || rec.Attempts[0].WallSeconds > 3 {
					t.Errorf("budget_ok %t, attempt %+v", rec.BudgetOK, rec.Attempts[0])
				}
				if res.Row != 4 || !strings.Contains(res.Reason, "wall budget 300ms exceeded at ") {
					t.Errorf("row %d, reason %q", res.Row, res.Reason)
				}
			},
		},
		{
			name: "INCOMPLETE", baseLib: rtLibOK, label: flakegate.Incomplete, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"src/lib.sh": rtLibCrash},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.CandidateResult != "error" || rec.Attempts[0].ExitCode != 3 || len(rec.RetryResults) != 0 {
					t.Errorf("candidate %s, attempt %+v, retries %v", rec.CandidateResult, rec.Attempts[0], rec.RetryResults)
				}
				if !strings.HasPrefix(res.Reason, "the test never ran: candidate attempt 0: ") || !strings.Contains(res.Reason, " exited 3") {
					t.Errorf("reason %q", res.Reason)
				}
			},
		},
		{
			// A prepare needs overlays; with mode none it fails, and every
			// triple of its property is INCOMPLETE without an attempt.
			name: "INCOMPLETE by a prepare under mode none", baseLib: rtLibOK, label: flakegate.Incomplete, verdict: flakegate.VerdictReject,
			config:    rtConfig("prepare:\n  run: [sh, -c, \"echo prepared > ready\"]\n"),
			candidate: map[string]string{"README.md": "changed\n"},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if !strings.Contains(res.Reason, "prepare failed: a prepare needs attempts on overlays") {
					t.Errorf("reason %q", res.Reason)
				}
				if len(rec.Attempts) != 0 || res.CandidateAttempts != 0 {
					t.Errorf("%d attempts ran: %+v", len(rec.Attempts), rec.Attempts)
				}
			},
		},
		{
			name: "FIXTURE", baseLib: rtLibOK, label: flakegate.Fixture, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"fixtures/data.txt": "alpha beta\n"},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.FixtureSHA256 == rec.BaseFixtureSHA256 || len(rec.FixtureSHA256) != 64 {
					t.Errorf("digests %s %s", rec.FixtureSHA256, rec.BaseFixtureSHA256)
				}
				if rec.BaseSeedResult != "not_run" || len(rec.Attempts) != 0 ||
					!strings.HasPrefix(rec.AttemptsSkipped, "fixture differs from base: fixtures/data.txt is ") || res.AttemptsSkipped != rec.AttemptsSkipped {
					t.Errorf("base %q, attempts %d, attempts_skipped %q / %q", rec.BaseSeedResult, len(rec.Attempts), rec.AttemptsSkipped, res.AttemptsSkipped)
				}
			},
		},
		{
			name: "CONTAMINATED by config", baseLib: rtLibOK, label: flakegate.Contaminated, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"flakegate.yaml": strings.Replace(rtConfig(""), "retry_cap: 2", "retry_cap: 9", 1)},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if rec.RetryCap != 2 || len(rec.WatchPaths) == 0 || rec.WatchPaths[0] != "flakegate.yaml" {
					t.Errorf("retry_cap %d (want the base's 2), watch_paths %v", rec.RetryCap, rec.WatchPaths)
				}
				if rec.BaseSeedResult != "not_run" || rec.CandidateResult != "fail" || len(rec.Attempts) != 0 ||
					!strings.HasPrefix(rec.AttemptsSkipped, "contaminated by diff: flakegate.yaml") {
					t.Errorf("attempts ran: base %q, attempts %d, attempts_skipped %q", rec.BaseSeedResult, len(rec.Attempts), rec.AttemptsSkipped)
				}
				if res.Row != 2 || res.CandidateAttempts != 0 || res.BaseAttempts != 0 {
					t.Errorf("row %d, attempts %d/%d", res.Row, res.CandidateAttempts, res.BaseAttempts)
				}
			},
		},
		{
			name: "CONTAMINATED by generator", baseLib: rtLibOK, label: flakegate.Contaminated, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"tools/gen.sh": rtGen + "# edited\n"},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, _ flakegate.Result) {
				if !strings.HasPrefix(rec.AttemptsSkipped, "contaminated by diff: tools/gen.sh") || len(rec.Attempts) != 0 {
					t.Errorf("attempts %d, attempts_skipped %q", len(rec.Attempts), rec.AttemptsSkipped)
				}
			},
		},
		{
			// The graded tree runs the base's property on the candidate's
			// code: it fails there, and the patch edited it.
			name: "CONTAMINATED by property", baseLib: rtLibOK, label: flakegate.Contaminated, verdict: flakegate.VerdictReject,
			candidate: map[string]string{"props/prop.sh": rtProp + "# weakened\n", "src/lib.sh": rtLibRed},
			check: func(t *testing.T, _ *rtRun, rec *flakegate.RunRecord, res flakegate.Result) {
				if !slices.Equal(rec.GraderEdits, []string{"props/prop.sh"}) || rec.BaseSeedResult != "pass" || rec.AttemptsSkipped != "" {
					t.Errorf("grader_edits %v base %q attempts_skipped %q", rec.GraderEdits, rec.BaseSeedResult, rec.AttemptsSkipped)
				}
				if want := "the patch changes props/prop.sh, and the base's version of props/prop.sh fails on the patch's code: split that edit into another review"; res.Reason != want {
					t.Errorf("reason %q, want %q", res.Reason, want)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := rtFiles(tc.baseLib)
			if tc.config != "" {
				files["flakegate.yaml"] = tc.config
			}
			r := newRTRepo(t, files)
			sha := r.candidate("cand", tc.candidate)
			cr := r.check("base", "cand", func(o *Options) { o.FreezeOwner = tc.freezeBy })
			cr.mustLabels(t, string(tc.label), tc.verdict)
			if cr.sum.Candidate != sha || len(cr.sum.Base) != 40 {
				t.Errorf("summary pins %s..%s, want candidate %s", cr.sum.Base, cr.sum.Candidate, sha)
			}
			stored := r.storedRecords(t)
			if len(stored) != 1 {
				t.Errorf("the record store holds %d records, want 1", len(stored))
			}
			for i, res := range cr.sum.Results {
				rec, raw := cr.record(t, i)
				if rec.BaseSHA != cr.sum.Base || rec.CandidateSHA != sha || rec.RetryCap != 2 {
					t.Errorf("record %d pins %s..%s cap %d", i, rec.BaseSHA, rec.CandidateSHA, rec.RetryCap)
				}
				if res.Seed.String() != "11" || rec.Seed.String() != "11" {
					t.Errorf("result %d seed %s, record seed %s, want 11", i, res.Seed, rec.Seed)
				}
				if !bytes.Equal(stored[res.RecordSHA256], raw) {
					t.Errorf("result %d: the store does not hold the record file under %s", i, res.RecordSHA256)
				}
				if tc.check != nil {
					tc.check(t, cr, rec, res)
				}
			}
			if _, err := os.Stat(filepath.Join(cr.out, "summary.json")); err != nil {
				t.Errorf("summary.json: %v", err)
			}
			if fs := r.freezes(t); len(fs) != 0 {
				t.Errorf("the ledger holds %d freezes, want none: %+v", len(fs), fs)
			}
		})
	}
}

// TestRunFreezeSkipAndVoid: mode none grants no freeze itself, but a
// freeze granted by hand (flakegate freeze grant --allow-new-flake) lets
// the next check of the triple skip it, counting a run down; a base whose
// run command changed voids the freeze, and the triple runs.
func TestRunFreezeSkipAndVoid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRTRepo(t, rtFiles(rtLibOK))
	r.candidate("flaky", map[string]string{"src/lib.sh": rtLibFlaky})
	first := r.check("base", "flaky", func(o *Options) { o.FreezeOwner = "alice" })
	first.mustLabels(t, "SCHEDULER", flakegate.VerdictPass)
	if fs := r.freezes(t); len(fs) != 0 {
		t.Fatalf("mode none granted %d freezes", len(fs))
	}
	s, err := filestore.Open(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first.sum.Results {
		_, raw := first.record(t, i)
		if _, err := flakegate.GrantRecord(ctx, s, raw, "bob", 2, false, "bob", time.Now()); err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
	}
	s.Close()

	second := r.check("base", "flaky")
	stored := r.storedRecords(t)
	second.mustLabels(t, "SCHEDULER", flakegate.VerdictPass)
	for i, res := range second.sum.Results {
		if !res.Skipped || res.RunsLeft == nil || *res.RunsLeft != 1 || res.Owner != "bob" || res.RecordSHA256 != first.sum.Results[i].RecordSHA256 {
			t.Errorf("result %d: skipped %t runs_left %v owner %q record %s", i, res.Skipped, res.RunsLeft, res.Owner, res.RecordSHA256)
		}
		if len(res.Attempts) != 0 || res.FrozenCandidate != first.sum.Candidate {
			t.Errorf("result %d: %d attempts, frozen candidate %q", i, len(res.Attempts), res.FrozenCandidate)
		}
		if raw, err := os.ReadFile(res.Record); err != nil || !strings.HasSuffix(res.Record, ".frozen.json") || !bytes.Equal(raw, stored[res.RecordSHA256]) {
			t.Errorf("result %d: frozen record copy %q: %v", i, res.Record, err)
		}
	}
	fs := r.freezes(t)
	if len(fs) != 1 {
		t.Fatalf("%d freezes left, want 1", len(fs))
	}
	for _, f := range fs {
		if f.Owner != "bob" || f.ExpiresAfterRuns != 1 {
			t.Errorf("freeze %+v: want owner bob, 1 run left", f)
		}
	}

	// Same code, same property; only the base's run command changes.
	r.rebase("base", "base2", map[string]string{"flakegate.yaml": strings.Replace(rtConfig(""), `run: [sh, "{path}", "{seed}"]`, `run: [sh, "-e", "{path}", "{seed}"]`, 1)})
	r.rebase("base2", "flaky2", map[string]string{"src/lib.sh": rtLibFlaky})
	third := r.check("base2", "flaky2")
	// The flaky counters are past their first failure: the runs pass.
	third.mustLabels(t, "PASS", flakegate.VerdictPass)
	for i, res := range third.sum.Results {
		if res.Skipped || res.CandidateAttempts != 1 || !strings.Contains(res.Reason, "freeze voided: the run command changed") {
			t.Errorf("result %d: skipped %t, %d attempts, reason %q", i, res.Skipped, res.CandidateAttempts, res.Reason)
		}
	}
	if fs := r.freezes(t); len(fs) != 0 {
		t.Errorf("%d freezes survive the void", len(fs))
	}
	audit := r.audit(t)
	if n := strings.Count(audit, `"action":"void"`); n != 1 || !strings.Contains(audit, "the run command changed") {
		t.Errorf("audit log has %d void events:\n%s", n, audit)
	}
	if n := strings.Count(audit, `"action":"skip"`); n != 1 {
		t.Errorf("audit log has %d skip events, want 1:\n%s", n, audit)
	}
}

func (r *rtRepo) audit(t *testing.T) string {
	t.Helper()
	s, err := filestore.Open(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lines, err := s.AuditLines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// TestRunShards: --shard 1/2 and 2/2 each label their part of the
// triples; fleet.MergeShards puts them back into the unsharded summary.
func TestRunShards(t *testing.T) {
	t.Parallel()
	files := rtFiles(rtLibOK)
	files["flakegate.yaml"] = strings.Replace(rtConfig(""), "seeds: [11]", "seeds: [11, 12]", 1)
	r := newRTRepo(t, files)
	r.candidate("cand", map[string]string{"src/lib.sh": rtLibRed})
	var sums []*flakegate.Summary
	seen := map[string]int{}
	for i := 1; i <= 2; i++ {
		cr := r.check("base", "cand", func(o *Options) { o.Shard = &fleet.ShardSpec{Index: i, Count: 2} })
		if cr.err != nil || cr.sum == nil {
			t.Fatalf("shard %d/2:\n%s", i, cr)
		}
		sh := cr.sum.Shard
		if sh == nil || sh.Index != i || sh.Count != 2 || sh.Triples != 2 {
			t.Fatalf("shard %d/2: shard %+v", i, sh)
		}
		for j, res := range cr.sum.Results {
			if res.Label != flakegate.Property {
				t.Errorf("shard %d result %d: %s", i, j, res.Label)
			}
			cr.record(t, j)
			seen[res.Seed.String()]++
		}
		sums = append(sums, cr.sum)
	}
	if seen["11"] != 1 || seen["12"] != 1 || len(seen) != 2 {
		t.Errorf("the shards ran seeds %v, want 11 and 12 once each", seen)
	}
	merged, err := fleet.MergeShards(sums, []string{"1.json", "2.json"})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Verdict != flakegate.VerdictReject || len(merged.Results) != 2 || merged.Results[0].Seed.String() != "11" || merged.Results[1].Seed.String() != "12" {
		t.Errorf("merged: verdict %s, results %+v", merged.Verdict, merged.Results)
	}
	if _, err := fleet.MergeShards(sums[:1], []string{"1.json"}); err == nil {
		t.Error("a merge missing shard 2 was accepted")
	}
}

// rtLibRegress breaks every seed but the listed 11.
const rtLibRegress = "ok() { [ \"$1\" = 11 ]; }\n"

// TestRunDrawnSeedsAndCorpus: random_seeds draws seeds beside the listed
// one; a drawn seed that fails enters the failure corpus, and the next
// check of the property on another base runs it again (seed_origin
// "corpus") besides its own drawn seeds.
func TestRunDrawnSeedsAndCorpus(t *testing.T) {
	t.Parallel()
	files := rtFiles(rtLibOK)
	files["flakegate.yaml"] = rtConfig("random_seeds: 1\n")
	r := newRTRepo(t, files)
	r.candidate("c1", map[string]string{"src/lib.sh": rtLibRegress})
	first := r.check("base", "c1")
	first.mustLabels(t, "PASS,PROPERTY", flakegate.VerdictReject)
	drawn := map[string]bool{}
	for i, res := range first.sum.Results {
		rec, _ := first.record(t, i)
		want := map[bool]string{true: "", false: "drawn"}[i == 0]
		if res.SeedOrigin != want || rec.SeedOrigin != want {
			t.Errorf("result %d seed %s: origin %q, record %q, want %q", i, res.Seed, res.SeedOrigin, rec.SeedOrigin, want)
		}
		if i > 0 {
			drawn[res.Seed.String()] = true
		}
	}
	if len(drawn) != 1 || drawn["11"] {
		t.Fatalf("drawn seeds %v", drawn)
	}
	// The base moves on; the regression comes back on top of it.
	r.rebase("base", "base2", map[string]string{"README.md": "base two\n"})
	r.rebase("base2", "c2", map[string]string{"src/lib.sh": rtLibRegress})
	second := r.check("base2", "c2")
	if second.err != nil || second.sum == nil || second.sum.Verdict != flakegate.VerdictReject {
		t.Fatalf("second check:\n%s", second)
	}
	corpus := map[string]bool{}
	for i, res := range second.sum.Results {
		if res.SeedOrigin != "corpus" {
			continue
		}
		rec, _ := second.record(t, i)
		if rec.SeedOrigin != "corpus" || res.Label != flakegate.Property || rec.BaseSeedResult != "pass" {
			t.Errorf("corpus seed %s: record origin %q, label %s, base %s", res.Seed, rec.SeedOrigin, res.Label, rec.BaseSeedResult)
		}
		corpus[res.Seed.String()] = true
	}
	if !maps.Equal(corpus, drawn) {
		t.Errorf("the second base ran corpus seeds %v, want the first base's failed drawn seeds %v\n%s", corpus, drawn, second)
	}
}

// rtFakeGo is a stand-in for `go test -json` (the check's go batches run
// the go on PATH): it runs nothing and writes the events go test would
// for the tests its -run regexp names, in package ./p of module
// example.com/fast. A test passes, unless p/p.go says LEAK: then, as
// with a per-process counter, every test from the third on in one
// process fails. Fuzz targets (the planted known answers, known.go) come
// after the tests, log or fail with the nonce their source holds, and
// the package ends "fail", as go test's would. Each call is logged to
// $FG_STATE/go-calls.
const rtFakeGo = `#!/bin/sh
[ "$1" = test ] || { echo "fake go: not a test: $*" >&2; exit 2; }
echo "$*" >> "$FG_STATE/go-calls"
run= pkg= prev=
for a in "$@"; do
	[ "$prev" = -run ] && run=$a
	case $a in ./*) pkg=$a ;; esac
	prev=$a
done
dir=${pkg#./}
imp=example.com/fast/$dir
ev() { printf '{"Action":"%s","Package":"%s","Test":"%s"}\n' "$1" "$imp" "$2"; }
out() { printf '{"Action":"output","Package":"%s","Test":"%s","Output":"%s\\n"}\n' "$imp" "$1" "$2"; }
names=$(echo "$run" | sed 's/^^(//; s/)\$$//; s/^^//; s/\$$//' | tr '|' ' ')
leak=0
grep -q LEAK "$dir/p.go" && leak=1
n=0
for name in $names; do
	case $name in Test*) ;; *) continue ;; esac
	n=$((n + 1))
	ev run "$name"
	if [ $leak = 1 ] && [ $n -ge 3 ]; then
		out "$name" "    p_test.go:9: Take refused"
		ev fail "$name"
	else
		ev pass "$name"
	fi
done
for name in $names; do
	case $name in Fuzz*) ;; *) continue ;; esac
	line=$(grep -h -A1 "^func $name(f \*testing.F)" "$dir"/*_test.go | tail -n 1)
	nonce=$(echo "$line" | sed 's/.*, *\([^)]*\))$/\1/')
	ev run "$name"
	out "$name" "    known_test.go:4: corpus $nonce"
	case $line in *Logf*) ev pass "$name" ;; *) ev fail "$name" ;; esac
done
printf '{"Action":"fail","Package":"%s"}\n' "$imp"
exit 1
`

// rtGoBatchConfig is a config of three go test properties of package p
// that share a seed and a command: one batch per attempt.
func rtGoBatchConfig() string {
	cfg := `version: 1
retry_cap: 2
workers: 1
flake_probe_runs: 0
sandbox:
  mode: none
  env: [FG_STATE]
properties:
`
	for _, name := range []string{"TestA", "TestB", "TestC"} {
		cfg += `  - path: p/p_test.go
    name: ` + name + `
    seeds: [7]
    run: [go, test, -count=1, -run, "^{name}$", ./p, "-seed={seed}"]
    wall_budget: 10s
`
	}
	return cfg
}

// TestRunGoBatch: three go tests batched in one go test process per
// attempt (a fake go on PATH answers for go: no compiler runs). The
// candidate's Take fails from its third call in a process: each test
// alone passes, but in the batch TestC fails, and its retry is the batch
// again, so it fails again: PROPERTY, not SCHEDULER. The planted known
// answers (known.go) are judged in every batch. Not parallel: the batch
// runs the go on flakegate's own PATH, which the test sets.
func TestRunGoBatch(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(rtFakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	test := "package p\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\nvar _ = flag.Int(\"seed\", 0, \"the seed\")\n\n"
	for _, name := range []string{"TestA", "TestB", "TestC"} {
		test += "func " + name + "(t *testing.T) {\n\tif !Take() {\n\t\tt.Fatal(\"Take refused\")\n\t}\n}\n\n"
	}
	r := newRTRepo(t, map[string]string{
		"flakegate.yaml": rtGoBatchConfig(),
		"go.mod":         "module example.com/fast\n\ngo 1.21\n",
		"p/p.go":         "package p\n\n// Take takes one.\nfunc Take() bool { return true }\n",
		"p/p_test.go":    test,
	})
	r.candidate("leak", map[string]string{"p/p.go": "package p\n\nvar n int\n\n// Take takes one; from the third on it refuses (LEAK).\nfunc Take() bool { n++; return n < 3 }\n"})
	cr := r.check("base", "leak", func(o *Options) { o.Env[0] = "PATH=" + os.Getenv("PATH") })
	cr.mustLabels(t, "PASS,PASS,PROPERTY", flakegate.VerdictReject)
	for i, res := range cr.sum.Results {
		rec, raw := cr.record(t, i)
		if res.Name != []string{"TestA", "TestB", "TestC"}[i] || rec.BaseSeedResult != "pass" {
			t.Errorf("result %d: name %q base %s", i, res.Name, rec.BaseSeedResult)
		}
		tr, err := os.ReadFile(rec.TranscriptPath)
		if err != nil || !bytes.Contains(tr, []byte(`"batch"`)) {
			t.Errorf("result %d: the transcript names no batch (%v):\n%s", i, err, tr)
		}
		if i == 2 {
			if rec.CandidateResult != "fail" || !slices.Equal(rec.RetryResults, []string{"fail", "fail"}) || res.CandidateAttempts != 3 ||
				!strings.Contains(rec.Attempts[0].OutputTail, "Take refused") {
				t.Errorf("TestC: candidate %s retries %v attempts %d\n%s", rec.CandidateResult, rec.RetryResults, res.CandidateAttempts, raw)
			}
			continue
		}
		if rec.CandidateResult != "pass" || len(rec.RetryResults) != 0 {
			t.Errorf("result %d: candidate %s retries %v", i, rec.CandidateResult, rec.RetryResults)
		}
	}
	// One process per attempt: the candidate batch, the base batch and
	// two retries, each of all three tests and the planted fuzz targets.
	calls, err := os.ReadFile(filepath.Join(r.state, "go-calls"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 4 {
		t.Fatalf("go ran %d times, want 4:\n%s", len(lines), calls)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "test -json -count=1 -timeout=0 -run ^(TestA|TestB|TestC|Fuzz") || !strings.Contains(l, " ./p -seed=7") {
			t.Errorf("go %s", l)
		}
	}
}

// TestExplainWatchAndSite: what check --explain-watch and doctor read
// of a base, in process: the watched paths of each property (with a
// ledger inside the work tree), and the site a check would set up, whose
// prepare fails under mode none.
func TestExplainWatchAndSite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRTRepo(t, map[string]string{
		"flakegate.yaml":    rtConfig("watch: [\"tools/ci/**\"]\nprepare:\n  run: [sh, -c, \"true\"]\n"),
		"props/prop.sh":     rtProp,
		"src/lib.sh":        rtLibOK,
		"fixtures/data.txt": "alpha\n",
		"tools/gen.sh":      rtGen,
	})
	b, err := sitepkg.OpenBase(ctx, sitepkg.BaseOptions{Dir: r.dir, Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if b.SHA != r.git("rev-parse", "base") || b.ConfigPath != "flakegate.yaml" || b.Config.Sandbox.Mode != "none" {
		t.Fatalf("base %s config %s mode %q", b.SHA, b.ConfigPath, b.Config.Sandbox.Mode)
	}
	if _, err := sitepkg.OpenBase(ctx, sitepkg.BaseOptions{Dir: r.dir, Base: " "}); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Errorf("a blank base: %v", err)
	}
	lists, err := ExplainWatch(ctx, b, filepath.Join(r.dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].Property != "props/prop.sh" || !slices.Equal(lists[0].Prepare, []string{"sh", "-c", "true"}) {
		t.Fatalf("lists %+v", lists)
	}
	why := map[string]string{}
	for _, w := range lists[0].Watch {
		why[w.Glob] = w.Why
	}
	for glob, want := range map[string]string{
		"props/prop.sh":  "the property file",
		"tools/gen.sh":   "the fixture generator",
		"flakegate.yaml": "the config",
		"tools/ci/**":    "",
	} {
		got, ok := why[glob]
		if !ok || want != "" && got != want {
			t.Errorf("watch %s: %q (listed %t), want %q; all %v", glob, got, ok, want, why)
		}
	}
	if !slices.ContainsFunc(lists[0].Watch, func(w grade.WatchItem) bool { return strings.Contains(w.Why, "the ledger") }) {
		t.Errorf("a ledger inside the work tree is not watched: %v", why)
	}

	s := NewSite(b, SiteOptions{Env: []string{"PATH=" + os.Getenv("PATH"), "FG_STATE=/x", "SECRET_TOKEN=hunter2-token-abcdef123456"}, Secrets: []string{"s3cret-value-0123456789"}})
	defer s.Close()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if env := s.Env(); !slices.Contains(env, "FG_STATE=/x") || slices.ContainsFunc(env, func(e string) bool { return strings.Contains(e, "hunter2") }) {
		t.Errorf("attempts' environment %v", env)
	}
	if got := s.Redact("a s3cret-value-0123456789 and hunter2-token-abcdef123456"); got != "a [redacted] and [redacted]" {
		t.Errorf("redact: %q", got)
	}
	if s.SandboxFor(r.dir) != nil {
		t.Error("mode none has a sandbox")
	}
	// No caller probes the sandbox of mode none (doctor and check --plan
	// stop before; the check itself skips it): Trees and the prepare
	// follow Setup directly.
	if _, err := s.Trees(ctx); err != nil {
		t.Error(err)
	}
	res, done := s.PrepareBase(ctx)
	defer done()
	if res.Err != nil || res.Busy != nil || len(res.Runs) != 1 || res.Runs[0].Where != "prepare" ||
		!strings.Contains(res.Runs[0].Failed, "a prepare needs attempts on overlays") {
		t.Errorf("prepare base: err %v busy %v runs %+v", res.Err, res.Busy, res.Runs)
	}
	if v := batch.Vars(&b.Config.Properties[0], "11"); v.Seed != "11" || v.Path != "props/prop.sh" || v.Fixture != "fixtures/data.txt" {
		t.Errorf("template variables %+v", v)
	}
}

// TestRunRefuses: what stops a check before any attempt, with the code
// the CLI turns into its exit status (EINVALID: 2; EINTERNAL: 3).
func TestRunRefuses(t *testing.T) {
	t.Parallel()
	r := newRTRepo(t, rtFiles(rtLibOK))
	r.candidate("cand", map[string]string{"README.md": "changed\n"})
	r.rebase("base", "nocfg", map[string]string{"flakegate.yaml": ""})
	r.rebase("base", "badcfg", map[string]string{"flakegate.yaml": "version: 1\nretry_cap: many\n"})
	for _, tc := range []struct {
		name string
		edit func(*Options)
		code string
		say  string
	}{
		{"no store opener", func(o *Options) { o.OpenStore = nil }, flakegate.EINTERNAL, "no store opener"},
		{"blank base", func(o *Options) { o.Base = "  " }, flakegate.EINVALID, "no base revision"},
		{"unknown base", func(o *Options) { o.Base = "no-such-rev" }, flakegate.EINVALID, "no-such-rev"},
		{"unknown candidate", func(o *Options) { o.Candidate = "no-such-cand" }, flakegate.EINVALID, "no-such-cand"},
		{"no config at the base", func(o *Options) { o.Base = "nocfg" }, flakegate.EINVALID, "flakegate.yaml"},
		{"a bad config at the base", func(o *Options) { o.Base = "badcfg" }, flakegate.EINVALID, "retry_cap"},
		// Not refused: the attempts run in worktrees of their own, and the
		// diff is between commits, so an out folder in the main work tree
		// is neither seen nor graded.
		{"the out folder in the work tree", func(o *Options) { o.OutDir = filepath.Join(r.dir, "out") }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := r.check("base", "cand", tc.edit)
			if tc.code == "" {
				cr.mustLabels(t, "PASS", flakegate.VerdictPass)
				if _, err := os.Stat(filepath.Join(cr.out, "summary.json")); err != nil {
					t.Error(err)
				}
				return
			}
			if cr.err == nil || cr.sum != nil {
				t.Fatalf("not refused:\n%s", cr)
			}
			if code := flakegate.ErrorCode(cr.err); code != tc.code || !strings.Contains(cr.err.Error(), tc.say) {
				t.Errorf("error %q (code %s), want code %s saying %q", cr.err, code, tc.code, tc.say)
			}
		})
	}
}
