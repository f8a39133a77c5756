package e2e_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// goCacheShare shares Go's build cache read-write with the sandbox, as
// TestCheckGoRapid does (a cold cache per attempt costs ~15 s here).
func goCacheShare(t *testing.T, files map[string]string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	block := "sandbox:\n  rw: [\"" + cache + "\"]\n  env: [GOCACHE]\n"
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "properties:", block+"properties:", 1)
	return []string{"GOCACHE=" + cache}
}

func needProgram(t *testing.T, prog string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	if _, err := exec.LookPath(prog); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed", prog)
		}
		t.Skipf("%s is not installed", prog)
	}
}

// TestCheckGoCandidateDoesNotCompile: a candidate whose package does not
// build never ran the test: INCOMPLETE, not PROPERTY, and the reason
// quotes the compiler.
func TestCheckGoCandidateDoesNotCompile(t *testing.T) {
	t.Parallel()
	needProgram(t, "go")
	files := exampleFiles(t, "go-rapid")
	env := goCacheShare(t, files)
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "random_seeds: 1", "random_seeds: 0", 1)
	r := newRepo(t, files)
	r.candidate("broken", map[string]string{"backoff.go": files["backoff.go"] + "\nfunc oops( {\n"})
	cr := r.checkEnv(env, "--base", "base", "--candidate", "broken")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE,INCOMPLETE" {
		t.Fatalf("a candidate that does not compile\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		if !strings.Contains(res.Reason, "go test: build failed: ") || !strings.Contains(res.Reason, "backoff.go:") || !strings.Contains(res.Reason, "syntax error") {
			t.Errorf("result %d: reason %q does not quote the compiler", i, res.Reason)
		}
		if rec := cr.record(t, i); rec.CandidateResult != "error" || rec.BaseSeedResult != "pass" {
			t.Errorf("record %d: candidate %s, base %s", i, rec.CandidateResult, rec.BaseSeedResult)
		}
	}
}

// pytestContinue makes the example's run keep going after a collection
// error, which exits 1 (as pytest-xdist does): one seed, no drawn seed.
func pytestContinue(files map[string]string) {
	cfg := files["flakegate.yaml"]
	cfg = strings.Replace(cfg, "random_seeds: 1", "random_seeds: 0", 1)
	cfg = strings.Replace(cfg, "seeds: [1400, 1401, 1402]", "seeds: [1400]", 1)
	cfg = strings.Replace(cfg, "run: [pytest, -q,", "run: [pytest, -q, --continue-on-collection-errors,", 1)
	// A node id that cannot be collected exits 4; select by -k instead.
	cfg = strings.Replace(cfg, `"{path}::{name}",`, `"{path}", -k, "{name}",`, 1)
	files["flakegate.yaml"] = cfg
}

// TestCheckPytestCollectionError: a syntax error in product code stops
// pytest collecting the property (exit 1 with
// --continue-on-collection-errors): INCOMPLETE quoting pytest's ERROR
// line. A real failure of the property is still PROPERTY.
func TestCheckPytestCollectionError(t *testing.T) {
	t.Parallel()
	needProgram(t, "pytest")
	files := exampleFiles(t, "pytest-hypothesis")
	pytestContinue(files)
	r := newRepo(t, files)
	src := files["retry_budget.py"]
	r.candidate("broken", map[string]string{"retry_budget.py": src + "\ndef oops(:\n"})
	r.candidate("buggy", map[string]string{"retry_budget.py": strings.Replace(src, "d = min(d, cap_ms)", "pass", 1)})

	cr := r.check("--base", "base", "--candidate", "broken")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE" {
		t.Fatalf("a collection error\n%s", cr)
	}
	res := cr.summary.Results[0]
	if !strings.Contains(res.Reason, `did not run: "ERROR collecting tests/test_retry_budget.py"`) || !strings.Contains(res.Reason, "SyntaxError") {
		t.Errorf("reason %q does not quote pytest", res.Reason)
	}
	if rec := cr.record(t, 0); rec.CandidateResult != "error" || rec.Attempts[0].ExitCode != 1 {
		t.Errorf("record: candidate %s, attempts %+v", rec.CandidateResult, rec.Attempts)
	}

	buggy := r.check("--base", "base", "--candidate", "buggy")
	if buggy.code != 1 || strings.Join(buggy.labels(), ",") != "PROPERTY" {
		t.Fatalf("a real failure\n%s", buggy)
	}
	if rec := buggy.record(t, 0); rec.CandidateResult != "fail" || rec.BaseSeedResult != "pass" {
		t.Errorf("record: %s/%s", rec.CandidateResult, rec.BaseSeedResult)
	}
}

// The fail-marker repository: props/check.sh runs the library's check; a
// failure must print "FALSIFIED".
const markerConfig = `version: 1
retry_cap: 1
workers: 1
properties:
  - path: props/check.sh
    seeds: [5]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 10s
    fail_marker: "^FALSIFIED "
`

// TestCheckFailMarker: with fail_marker, an exit 1 is a failure only when
// the output prints the marker; on either side an exit 1 without it is an
// error (INCOMPLETE), quoting the last line.
func TestCheckFailMarker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, map[string]string{
		"flakegate.yaml": markerConfig,
		"props/check.sh": ". ./src/lib.sh\ncheck \"$1\"\n",
		"src/lib.sh":     "check() { echo ok; }\n",
	})
	r.candidate("red", map[string]string{"src/lib.sh": "check() { echo \"FALSIFIED seed $1\"; exit 1; }\n"})
	r.candidate("crash", map[string]string{"src/lib.sh": "check() { cat ./src/missing.sh; exit 1; }\n"})
	if cr := r.check("--base", "base", "--candidate", "red"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
		t.Fatalf("a marked failure\n%s", cr)
	}
	cr := r.check("--base", "base", "--candidate", "crash")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE" {
		t.Fatalf("an exit 1 without the marker\n%s", cr)
	}
	if res := cr.summary.Results[0]; !strings.Contains(res.Reason, "candidate attempt 0: ") || !strings.Contains(res.Reason, `exit 1 without the fail marker "^FALSIFIED "; the last line is`) ||
		!strings.Contains(res.Reason, "missing.sh") {
		t.Errorf("reason %q", res.Reason)
	}

	// The base side too: a base that cannot run the test is not a base
	// failure, so a real candidate failure is INCOMPLETE, not PROPERTY.
	r.rebase("base", "base-broken", map[string]string{"src/lib.sh": "check() { cat ./src/missing.sh; exit 1; }\n"})
	r.rebase("base-broken", "red2", map[string]string{"src/lib.sh": "check() { echo \"FALSIFIED seed $1\"; exit 1; }\n"})
	cr = r.check("--base", "base-broken", "--candidate", "red2")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE" {
		t.Fatalf("a base that cannot run the test\n%s", cr)
	}
	if res := cr.summary.Results[0]; !strings.Contains(res.Reason, "base attempt 0: exit 1 without the fail marker") {
		t.Errorf("reason %q", res.Reason)
	}
	if rec := cr.record(t, 0); rec.CandidateResult != "fail" || rec.BaseSeedResult != "error" {
		t.Errorf("record: %s/%s", rec.CandidateResult, rec.BaseSeedResult)
	}
}

// TestCheckFixtureRunDecided: a FIXTURE triple runs no attempt by
// default; --run-decided (and its older name --run-contaminated) runs
// them, and the label stays FIXTURE.
func TestCheckFixtureRunDecided(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("fixture", map[string]string{"fixtures/data.txt": "alpha beta\n"})
	for _, flag := range []string{"", "--run-decided", "--run-contaminated"} {
		args := []string{"--base", "base", "--candidate", "fixture"}
		if flag != "" {
			args = append(args, flag)
		}
		cr := r.check(args...)
		if cr.code != 1 || strings.Join(cr.labels(), ",") != "FIXTURE,FIXTURE" {
			t.Fatalf("%s\n%s", flag, cr)
		}
		for i, res := range cr.summary.Results {
			rec := cr.record(t, i)
			ran := len(rec.Attempts) > 0
			if ran != (flag != "") || (rec.AttemptsSkipped == "") != ran || (res.AttemptsSkipped == "") != ran {
				t.Errorf("%s: result %d: %d attempts, attempts_skipped %q", flag, i, len(rec.Attempts), rec.AttemptsSkipped)
			}
		}
	}
}
