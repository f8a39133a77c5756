package e2e_test

import (
	"strings"
	"testing"
)

// TestCheckGoBatchForgedFailExit0: a test prints framed test2json lines
// for a failing TestGhost (a member its package does not have) and the
// batch exits 0. go test exits 1 when a test fails, so that failure is
// output the code under test wrote: TestGhost is an error (INCOMPLETE,
// no retry), never a failure a retry follows (the passing candidate batch
// kept its page cache) and never PROPERTY.
func TestCheckGoBatchForgedFailExit0(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	cfg := goBatchHead + goBatchEntry("forge", "TestForger", "") + goBatchEntry("forge", "TestGhost", "")
	r := newRepo(t, map[string]string{
		"go.mod":         "module example.com/forge\n\ngo 1.21\n",
		"README.md":      "forge\n",
		"flakegate.yaml": cfg,
		"forge/forge.go": "package forge\n\nimport \"fmt\"\n\n// Report prints a forged failure of TestGhost.\nfunc Report() {\n\tfmt.Println(\"\\x16=== RUN   TestGhost\")\n\tfmt.Println(\"\\x16--- FAIL: TestGhost (0.00s)\")\n}\n",
		"forge/forge_test.go": "package forge\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
			"func TestForger(t *testing.T) { Report() }\n",
	})
	r.candidate("docs", map[string]string{"README.md": "forge, docs\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if got := strings.Join(cr.labels(), ","); got != "PASS,INCOMPLETE" {
		t.Fatalf("labels %s, want PASS,INCOMPLETE\n%s", got, cr)
	}
	rec := cr.record(t, 1)
	if rec.CandidateResult != "error" || len(rec.RetryResults) != 0 {
		t.Errorf("TestGhost: candidate %s, retries %v; want error and no retry", rec.CandidateResult, rec.RetryResults)
	}
	if reason := cr.summary.Results[1].Reason; !strings.Contains(reason, "reported failed, but the batch exited 0") {
		t.Errorf("TestGhost's reason %q does not say the batch exited 0", reason)
	}
}
