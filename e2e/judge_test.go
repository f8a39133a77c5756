package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// The two-test repository: props/multi.sh holds two tests, alpha and
// beta, each run by name. A candidate library decides how each behaves.
const (
	multiScript = `#!/bin/sh
# Two properties in one file, selected by name.
. ./src/lib.sh
case "$1" in
alpha) alpha "$2" ;;
beta) beta "$2" ;;
*) echo "no test $1"; exit 2 ;;
esac
`
	// multiFlaky: both tests fail their first attempt per seed, then pass;
	// each test counts its own attempts.
	multiFlaky = `flaky() {
	n=$(cat "$FG_STATE/flaky-$1-$2" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/flaky-$1-$2"
	[ "$n" -ge 1 ] && echo "ok $1"
}
alpha() { flaky alpha "$1"; }
beta() { flaky beta "$1"; }
`
	multiOK = "alpha() { echo ok alpha; }\nbeta() { echo ok beta; }\n"
	// multiBaseFlaky fails the second run of each test and seed (a flake
	// the base has: the base replay passes, the first probe run fails).
	multiBaseFlaky = `flaky() {
	n=$(cat "$FG_STATE/base-$1-$2" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/base-$1-$2"
	[ "$n" -ne 1 ] && echo "ok $1"
}
alpha() { flaky alpha "$1"; }
beta() { flaky beta "$1"; }
`
	// multiBetaRed breaks beta only.
	multiBetaRed = "alpha() { echo ok alpha; }\nbeta() { echo 'beta: falsified'; return 1; }\n"
)

// multiConfig is the two-test repository's config; the flake probe is
// off, as in config.
func multiConfig(run string) string {
	return `version: 1
retry_cap: 2
workers: 1
flake_probe_runs: 0
freeze:
  expires_after_runs: 4
sandbox:
  rw: ["@FG_STATE@"]
  env: [FG_STATE]
properties:
  - path: props/multi.sh
    name: alpha
    seeds: [21]
    run: ` + run + `
    wall_budget: 5s
    pass_marker: "^ok alpha$"
  - path: props/multi.sh
    name: beta
    seeds: [21]
    run: ` + run + `
    wall_budget: 5s
    pass_marker: "^ok beta$"
`
}

const multiRun = `[sh, "{path}", "{name}", "{seed}"]`

func multiFiles(lib string) map[string]string {
	return map[string]string{
		"flakegate.yaml": multiConfig(multiRun),
		"props/multi.sh": multiScript,
		"src/lib.sh":     lib,
		"README.md":      "two tests in one file\n",
	}
}

// rebase commits files on top of the tag from, tags the commit as tag and
// leaves HEAD there.
func (r *repo) rebase(from, tag string, files map[string]string) string {
	r.t.Helper()
	r.git("checkout", "-q", "--detach", from)
	sha := r.commit(tag, files)
	r.git("tag", tag)
	return sha
}

// run runs the flakegate binary in the repo and returns its exit code and
// combined output.
func (r *repo) run(args ...string) (int, string) {
	r.t.Helper()
	cmd := exec.Command(flakegateBin, args...)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), "FG_STATE="+r.state)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return code, string(out)
}

// TestCheckTwoTestsOneFile: two entries of one file, told apart by name,
// get their own labels, records, JUnit cases and freezes.
func TestCheckTwoTestsOneFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	// The flake is the base's (the probe sees it fail): --freeze-owner
	// freezes only such a flake.
	files := multiFiles(multiBaseFlaky)
	files["flakegate.yaml"] = strings.Replace(multiConfig(multiRun), "flake_probe_runs: 0\n", "", 1)
	r := newRepo(t, files)
	r.candidate("red", map[string]string{"src/lib.sh": multiBetaRed})
	r.candidate("flaky", map[string]string{"src/lib.sh": multiFlaky})

	junit := filepath.Join(t.TempDir(), "junit.xml")
	red := r.check("--base", "base", "--candidate", "red", "--junit", junit)
	if red.code != 1 || strings.Join(red.labels(), ",") != "PASS,PROPERTY" {
		t.Fatalf("beta broken\n%s", red)
	}
	for i, name := range []string{"alpha", "beta"} {
		res := red.summary.Results[i]
		rec := red.record(t, i)
		if res.Name != name || rec.Name != name || rec.RunSHA256 == "" || rec.PropertyEntrySHA256 == "" {
			t.Errorf("result %d: name %q, record name %q run %q entry %q", i, res.Name, rec.Name, rec.RunSHA256, rec.PropertyEntrySHA256)
		}
	}
	if red.summary.Results[0].Record == red.summary.Results[1].Record {
		t.Errorf("both tests wrote one record file")
	}
	if !strings.Contains(red.summary.Results[1].Reproduce, "--name beta") {
		t.Errorf("reproduce %q does not name the test", red.summary.Results[1].Reproduce)
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="alpha seed=21" classname="props/multi.sh"`, `name="beta seed=21" classname="props/multi.sh"`, "beta: falsified"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("junit lacks %q:\n%s", want, raw)
		}
	}

	first := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if first.code != 0 || strings.Join(first.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("both flaky\n%s", first)
	}
	code, out := r.run("freeze", "list", "--json")
	var fs []flakegate.Freeze
	if code != 0 || json.Unmarshal([]byte(out), &fs) != nil || len(fs) != 2 || fs[0].Name != "alpha" || fs[1].Name != "beta" ||
		fs[0].Seed != fs[1].Seed || fs[0].FixtureSHA256 != fs[1].FixtureSHA256 || fs[0].RunSHA256 == "" {
		t.Fatalf("freeze list: exit %d\n%s", code, out)
	}
	// Revoke beta's freeze: alpha stays skipped, beta runs (and passes
	// now that its counter is past the first failure).
	code, out = r.run("freeze", "revoke", "--property", "props/multi.sh", "--name", "beta", "--seed", "21",
		"--fixture-sha256", fs[1].FixtureSHA256, "--by", "bob")
	if code != 0 {
		t.Fatalf("revoke beta: exit %d\n%s", code, out)
	}
	next := r.check("--base", "base", "--candidate", "flaky")
	if next.code != 0 || strings.Join(next.labels(), ",") != "SCHEDULER(skipped),PASS" {
		t.Fatalf("after revoking beta's freeze\n%s", next)
	}
	if res := next.summary.Results[0]; res.Name != "alpha" || res.RunsLeft == nil || *res.RunsLeft != 3 {
		t.Errorf("alpha's skip: %+v", res)
	}
	if !strings.Contains(next.stderr, "SCHEDULER skipped (frozen) props/multi.sh::alpha seed 21") || strings.Contains(next.stderr, "FROZEN") {
		t.Errorf("the frozen skip is not named SCHEDULER skipped (frozen):\n%s", next.stderr)
	}
}

// TestCheckFreezeVoidedByCommand: a freeze is bound to the argv template;
// a base whose run command changed voids it (with an audit event) and the
// triple runs.
func TestCheckFreezeVoidedByCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	// The flake is the base's (the probe sees it fail): --freeze-owner
	// freezes only such a flake.
	probed := func(run string) string { return strings.Replace(multiConfig(run), "flake_probe_runs: 0\n", "", 1) }
	files := multiFiles(multiBaseFlaky)
	files["flakegate.yaml"] = probed(multiRun)
	r := newRepo(t, files)
	r.candidate("flaky", map[string]string{"src/lib.sh": multiFlaky})
	first := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if first.code != 0 || strings.Join(first.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("first check\n%s", first)
	}
	// Same base code, same property file; only the command changes.
	r.rebase("base", "base2", map[string]string{"flakegate.yaml": probed(`[sh, "-e", "{path}", "{name}", "{seed}"]`)})
	r.rebase("base2", "flaky2", map[string]string{"src/lib.sh": multiFlaky})
	cr := r.check("--base", "base2", "--candidate", "flaky2")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("after the command changed\n%s", cr)
	}
	for _, res := range cr.summary.Results {
		if res.Skipped || !strings.Contains(res.Reason, "freeze voided: the run command changed") {
			t.Errorf("result %s: skipped %t, reason %q", res.Name, res.Skipped, res.Reason)
		}
	}
	code, out := r.run("freeze", "list")
	if code != 0 || !strings.Contains(out, "no freezes") {
		t.Errorf("freeze list after the void: exit %d\n%s", code, out)
	}
	audit, err := os.ReadFile(filepath.Join(r.dir, ".git", "flakegate", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), `"action":"void"`); n != 2 || !strings.Contains(string(audit), "the run command changed") {
		t.Errorf("audit log has %d void events:\n%s", n, audit)
	}
}

// TestCheckDrawnSeeds: random_seeds draws the same seeds for every
// candidate of one base; each is recorded, reported and reproducible like
// a listed seed.
func TestCheckDrawnSeeds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config("random_seeds: 2\n"), "seeds: [11, 12]", "seeds: [11]", 1)
	r := newRepo(t, files)
	r.candidate("a", map[string]string{"README.md": "a\n"})
	r.candidate("b", map[string]string{"README.md": "b\n"})
	drawn := func(cr *checkRun) []string {
		t.Helper()
		if cr.code != 0 || len(cr.summary.Results) != 3 {
			t.Fatalf("check\n%s", cr)
		}
		var seeds []string
		for i, res := range cr.summary.Results[1:] {
			rec := cr.record(t, i+1)
			if res.SeedOrigin != "drawn" || rec.SeedOrigin != "drawn" || rec.Seed != res.Seed || res.Label != flakegate.Pass {
				t.Errorf("drawn result %+v, record seed %s origin %q", res, rec.Seed, rec.SeedOrigin)
			}
			if !strings.Contains(res.Reproduce, "--seed "+res.Seed.String()) {
				t.Errorf("reproduce %q lacks the seed", res.Reproduce)
			}
			seeds = append(seeds, res.Seed.String())
		}
		if cr.summary.Results[0].Seed != "11" || cr.summary.Results[0].SeedOrigin != "" {
			t.Errorf("listed seed: %+v", cr.summary.Results[0])
		}
		return seeds
	}
	a1 := drawn(r.check("--base", "base", "--candidate", "a"))
	a2 := drawn(r.check("--base", "base", "--candidate", "a"))
	b := drawn(r.check("--base", "base", "--candidate", "b"))
	if strings.Join(a1, ",") != strings.Join(a2, ",") || a1[0] == a1[1] {
		t.Errorf("candidate a drew %v, then %v", a1, a2)
	}
	// Seeds are drawn for the base, not the candidate: another commit
	// on the same base (a reworded one too) draws the same seeds.
	if strings.Join(a1, ",") != strings.Join(b, ",") {
		t.Errorf("candidates a and b of one base drew %v and %v", a1, b)
	}
	// A drawn seed replays from its reproduce line.
	cr := r.check("--base", "base", "--candidate", "b")
	checkReproduce(t, cr.summary.Results[2], 0)
}

// TestCheckReproduceLasts: a reproduce line replays its commit in a
// checkout of its own, so it still reproduces after later checks of
// other commits have reset the check's worktrees.
func TestCheckReproduceLasts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("red", map[string]string{"src/lib.sh": libRed})
	red := r.check("--base", "base", "--candidate", "red")
	if red.code != 1 || red.summary.Results[0].Label != flakegate.Property {
		t.Fatalf("red candidate\n%s", red)
	}
	line := red.summary.Results[0].Reproduce
	if !strings.Contains(line, "--repo") || !strings.Contains(line, "--rev "+red.summary.Candidate) || !strings.Contains(line, "--config-rev "+red.summary.Base) {
		t.Fatalf("reproduce line %q does not pin the commits", line)
	}
	for _, c := range []string{"docs1", "docs2", "docs3"} {
		r.candidate(c, map[string]string{"README.md": c + "\n"})
		if cr := r.check("--base", "base", "--candidate", c); cr.code != 0 {
			t.Fatalf("%s\n%s", c, cr)
		}
	}
	checkReproduce(t, red.summary.Results[0], 1)
	// It cleaned up after itself: no worktree of its own is left.
	if out := r.git("worktree", "list"); strings.Contains(out, "flakegate-replay-") {
		t.Errorf("the replay checkout is still registered:\n%s", out)
	}
}

// TestCheckRunContaminated: by default the diff alone decides and nothing
// runs; --run-contaminated runs the attempts, and the label stays.
func TestCheckRunContaminated(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	// The generator is watched (an edited property is not: the graded
	// tree runs the base's).
	r.candidate("cand", map[string]string{"tools/gen.sh": genScript + "# weakened\n"})
	// Both checks write to the same output folder: each is read before
	// the next runs.
	for _, c := range []struct {
		flags    []string
		attempts int
	}{{nil, 0}, {[]string{"--run-contaminated"}, 2}} {
		c := struct {
			cr       *checkRun
			attempts int
		}{r.check(append([]string{"--base", "base", "--candidate", "cand"}, c.flags...)...), c.attempts}
		if c.cr.code != 1 || strings.Join(c.cr.labels(), ",") != "CONTAMINATED,CONTAMINATED" {
			t.Fatalf("check\n%s", c.cr)
		}
		for i, res := range c.cr.summary.Results {
			rec := c.cr.record(t, i)
			if len(rec.Attempts) != c.attempts || res.CandidateAttempts+res.BaseAttempts != c.attempts {
				t.Errorf("%d attempts (%d+%d), want %d", len(rec.Attempts), res.CandidateAttempts, res.BaseAttempts, c.attempts)
			}
			verifyTranscript(t, res.Record, rec)
			if (c.attempts == 0) != (res.AttemptsSkipped != "") {
				t.Errorf("attempts_skipped %q with %d attempts", res.AttemptsSkipped, c.attempts)
			}
		}
	}
}

// TestCheckExplainWatch lists the watched paths without running anything.
func TestCheckExplainWatch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	files := exampleFiles(t, "pytest-hypothesis")
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "properties:", "watch: [\"tools/ci/**\"]\nproperties:", 1)
	r := newRepo(t, files)
	code, out := r.run("check", "--base", "base", "--explain-watch")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"tests/test_retry_budget.py::test_delays_within_cap_and_monotonic (pytest)",
		"tests/conftest.py", "conftest.py ", "pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "tools/ci/**", "flakegate.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("--explain-watch lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "flakegate", "worktrees")); err == nil {
		t.Errorf("--explain-watch made worktrees")
	}
}

// needTool skips (or, on CI, fails) a test whose tool is missing.
func needTool(t *testing.T, tool string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end with a real test framework")
	}
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed", tool)
		}
		t.Skipf("%s is not installed", tool)
	}
}

// TestCheckPytestRegressionsHidden: regressions dressed up by pytest's
// own machinery are rejected. A conftest.py the patch adds to mark the
// failing test xfail is not in the graded tree (the base's conftest
// files run): the regression is PROPERTY. Product code that calls
// pytest.xfail() makes every run "xfailed": INCOMPLETE, never PASS; one
// that skips (not a watched file) makes every run "1 skipped":
// INCOMPLETE, never PASS.
func TestCheckPytestRegressionsHidden(t *testing.T) {
	t.Parallel()
	needTool(t, "pytest")
	files := exampleFiles(t, "pytest-hypothesis")
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "random_seeds: 1", "random_seeds: 0", 1)
	r := newRepo(t, files)
	broken := strings.Replace(files["retry_budget.py"], "d = min(d, cap_ms)", "pass", 1)
	xfail := `import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xfail(reason="known flaky", strict=False))
`
	r.candidate("xfail", map[string]string{"retry_budget.py": broken, "tests/conftest.py": xfail})
	xfailing := strings.Replace(broken, "    delays = []", "    import pytest\n    pytest.xfail(\"known flaky\")\n    delays = []", 1)
	r.candidate("xfail-code", map[string]string{"retry_budget.py": xfailing})
	skipping := strings.Replace(broken, "    delays = []", "    import pytest\n    pytest.skip(\"known flaky\")\n    delays = []", 1)
	r.candidate("skip", map[string]string{"retry_budget.py": skipping})

	cr := r.check("--base", "base", "--candidate", "xfail")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY,PROPERTY" {
		t.Fatalf("xfail conftest\n%s", cr)
	}
	if rec := cr.record(t, 0); contains(rec.DiffPaths, "tests/conftest.py") || len(rec.Attempts) == 0 {
		t.Errorf("diff_paths %v (the graded tree has no tests/conftest.py), %d attempts", rec.DiffPaths, len(rec.Attempts))
	}

	xf := r.check("--base", "base", "--candidate", "xfail-code")
	if xf.code != 1 || strings.Join(xf.labels(), ",") != "INCOMPLETE,INCOMPLETE,INCOMPLETE" {
		t.Fatalf("xfailed by the code under test\n%s", xf)
	}
	if a := xf.record(t, 0).Attempts[0]; a.Result != "error" || !strings.Contains(xf.summary.Results[0].Reason, "xfailed") {
		t.Errorf("the xfailed attempt: %s, reason %q", a.Result, xf.summary.Results[0].Reason)
	}

	sk := r.check("--base", "base", "--candidate", "skip")
	if sk.code != 1 || strings.Join(sk.labels(), ",") != "INCOMPLETE,INCOMPLETE,INCOMPLETE" {
		t.Fatalf("all skipped\n%s", sk)
	}
	if res := sk.summary.Results[0]; !strings.Contains(res.Reason, `"1 skipped in`) {
		t.Errorf("the reason does not quote pytest's summary: %q", res.Reason)
	}
}

// TestCheckPytestDerandomizeRefused: a hypothesis profile that sets
// derandomize ignores --hypothesis-seed; the config is refused (exit 2).
func TestCheckPytestDerandomizeRefused(t *testing.T) {
	t.Parallel()
	needTool(t, "pytest")
	files := exampleFiles(t, "pytest-hypothesis")
	files["conftest.py"] = strings.Replace(files["conftest.py"], "deadline=None,", "deadline=None,\n        derandomize=True,", 1)
	r := newRepo(t, files)
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	code, out := r.run("check", "--base", "base", "--candidate", "docs")
	if code != 2 || !strings.Contains(out, "conftest.py:") || !strings.Contains(out, "derandomize") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestCheckGoTestMainRejected: a TestMain that exits 0 without running a
// test, in a test file the patch adds to the package, is not in the
// graded tree (the base's test files run): the regression it would hide
// is PROPERTY. (A product init that exits 0 is INCOMPLETE, not a pass:
// TestCheckWrappedGoTestNeedsEvidence.)
func TestCheckGoTestMainRejected(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	files := exampleFiles(t, "go-rapid")
	files["flakegate.yaml"] = strings.NewReplacer("random_seeds: 1", "random_seeds: 0", "seeds: [1400, 1401, 1402]", "seeds: [1400]").Replace(files["flakegate.yaml"])
	r := newRepo(t, files)
	broken := strings.Replace(files["backoff.go"], "if d > limit {", "if false && d > limit {", 1)
	testMain := "package backoff\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"
	r.candidate("main", map[string]string{"backoff.go": broken, "main_test.go": testMain})
	cr := r.check("--base", "base", "--candidate", "main")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
		t.Fatalf("TestMain exits 0\n%s", cr)
	}
	if rec := cr.record(t, 0); contains(rec.DiffPaths, "main_test.go") || !strings.Contains(rec.Attempts[0].OutputTail, "--- FAIL: TestScheduleProperties") {
		t.Errorf("diff_paths %v (the graded tree has no main_test.go); the first attempt:\n%s", rec.DiffPaths, rec.Attempts[0].OutputTail)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
