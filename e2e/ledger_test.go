package e2e_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// TestCheckFreezeAndSkip: --freeze-owner grants a freeze for each
// SCHEDULER result whose flake is the base's; the next check skips exactly those triples, counts the
// runs down and runs them again when the freeze is used up.
func TestCheckFreezeAndSkip(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	// The flake is the base's (the probe sees it fail): --freeze-owner
	// freezes only such a flake.
	files := baseFiles(libBaseFlaky)
	files["flakegate.yaml"] = strings.Replace(probeConfig(""), "expires_after_runs: 3", "expires_after_runs: 2", 1)
	r := newRepo(t, files)
	r.candidate("cand", map[string]string{"src/lib.sh": libFlaky})

	first := r.check("--base", "base", "--candidate", "cand", "--freeze-owner", "alice")
	if first.code != 0 || strings.Join(first.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("first check\n%s", first)
	}
	for _, res := range first.summary.Results {
		if res.Owner != "alice" || res.RunsLeft == nil || *res.RunsLeft != 2 {
			t.Errorf("granted freeze: owner %q, runs_left %v", res.Owner, res.RunsLeft)
		}
	}
	for _, want := range []int{1, 0} {
		cr := r.check("--base", "base", "--candidate", "cand")
		if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER(skipped),SCHEDULER(skipped)" {
			t.Fatalf("check with a freeze\n%s", cr)
		}
		for i, res := range cr.summary.Results {
			if res.RunsLeft == nil || *res.RunsLeft != want || res.Owner != "alice" || res.RecordSHA256 != first.summary.Results[i].RecordSHA256 {
				t.Errorf("skipped result %+v, want runs_left %d", res, want)
			}
			if res.Record == "" {
				t.Errorf("skipped result names no record")
			} else if _, err := os.Stat(res.Record); err != nil {
				t.Errorf("frozen record copy: %v", err)
			}
		}
	}
	// The freezes are used up: the triples run again. The flaky counter
	// has passed its first failure, so they pass now.
	last := r.check("--base", "base", "--candidate", "cand")
	if last.code != 0 || strings.Join(last.labels(), ",") != "PASS,PASS" {
		t.Fatalf("after the freezes expired\n%s", last)
	}
}

// TestCheckFreezeNotForRejects: --freeze-owner never freezes a reject, and
// a frozen triple whose property the candidate edits is not skipped: the
// base's property runs on the candidate's code (the graded tree), and a
// red library with the edited property is CONTAMINATED, never the
// freeze's skip.
func TestCheckFreezeNotForRejects(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	r.candidate("edits-property", map[string]string{"src/lib.sh": libRed, "props/prop.sh": propScript + "# edited\n"})
	r.candidate("red", map[string]string{"src/lib.sh": libRed})

	red := r.check("--base", "base", "--candidate", "red", "--freeze-owner", "bob")
	if red.code != 1 {
		t.Fatalf("red candidate\n%s", red)
	}
	for _, res := range red.summary.Results {
		if res.Owner != "" || res.RunsLeft != nil {
			t.Errorf("a PROPERTY result got a freeze: %+v", res)
		}
	}
	if cr := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "bob"); cr.code != 0 {
		t.Fatalf("flaky candidate\n%s", cr)
	}
	cr := r.check("--base", "base", "--candidate", "edits-property")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED,CONTAMINATED" {
		t.Fatalf("a freeze hid an edited property\n%s", cr)
	}
}

// TestCheckLedgerInRepo: a file ledger inside the work tree is watched
// like the config.
func TestCheckLedgerInRepo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	files := baseFiles(libOK)
	files["ledger/README"] = "the team's freeze ledger\n"
	r := newRepo(t, files)
	r.candidate("cand", map[string]string{"ledger/ledger.json": "{}\n"})
	r.candidate("clean", map[string]string{"README.md": "x\n"})
	ledger := filepath.Join(r.dir, "ledger")

	cr := r.check("--base", "base", "--candidate", "cand", "--ledger", ledger)
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED,CONTAMINATED" {
		t.Fatalf("a candidate editing the ledger\n%s", cr)
	}
	rec := cr.record(t, 0)
	if !strings.Contains(strings.Join(rec.WatchPaths, " "), "ledger/") {
		t.Errorf("watch_paths %v lack the ledger", rec.WatchPaths)
	}
	if ok := r.check("--base", "base", "--candidate", "clean", "--ledger", ledger); ok.code != 0 {
		t.Fatalf("a clean candidate with an in-repo ledger\n%s", ok)
	}
}

// TestCheckWorkersAndReports: workers: 2 runs triples on two worktree
// pairs, and the report flags write their files.
func TestCheckWorkersAndReports(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.NewReplacer("workers: 1", "workers: 2", "seeds: [11, 12]", "seeds: [11, 12, 13, 14, 15]").Replace(config(""))
	r := newRepo(t, files)
	r.candidate("cand", map[string]string{"src/lib.sh": libFlaky})
	out := t.TempDir()
	junit := filepath.Join(out, "junit.xml")
	md := filepath.Join(out, "summary.md")
	stepSummary := filepath.Join(out, "step-summary.md")
	cr := r.checkEnv([]string{"GITHUB_STEP_SUMMARY=" + stepSummary}, "--base", "base", "--candidate", "cand",
		"--out", filepath.Join(out, "records"), "--junit", junit, "--markdown", md, "--github")
	if cr.code != 0 || len(cr.summary.Results) != 5 {
		t.Fatalf("check\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		rec := cr.record(t, i)
		if res.Label != flakegate.Scheduler || rec.CandidateEnv.Workers != 2 || rec.BaseEnv.Workers != 2 {
			t.Errorf("result %d: %s, env %+v", i, res.Label, rec.CandidateEnv)
		}
		if !strings.HasPrefix(res.Record, filepath.Join(out, "records")) {
			t.Errorf("record %s is not under --out", res.Record)
		}
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(raw, new(struct{})); err != nil {
		t.Errorf("junit is not XML: %v", err)
	}
	for _, f := range []string{md, stepSummary, filepath.Join(out, "records", "summary.json")} {
		if b, err := os.ReadFile(f); err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
	if !strings.Contains(cr.stderr, "::") {
		t.Errorf("--github with --json printed no annotation on stderr:\n%s", cr.stderr)
	}
}
