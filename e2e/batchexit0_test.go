package e2e_test

import (
	"strings"
	"testing"
)

// TestCheckGoBatchForgedFailExit0: a test prints framed test2json lines
// for a failing TestGhost (a member its package does not have). Before
// known answers such a batch exited 0, and TestGhost was an error (go
// test exits 1 when a test fails: a failure in a batch that exits 0 is
// output the code under test wrote). Now the batch's planted failure
// makes it exit 1 in every batch, and a batch that exits 0 is the test
// process's own report whatever it says. The forged failure is then a
// failure (on the base too: PROPERTY), never a pass, and the candidate
// batch, whose report is not every member passing, keeps nothing in the
// page cache for its retry to find.
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
	if got := strings.Join(cr.labels(), ","); got != "PASS,PROPERTY" {
		t.Fatalf("labels %s, want PASS,PROPERTY\n%s", got, cr)
	}
	rec := cr.record(t, 1)
	if rec.CandidateResult != "fail" || rec.BaseSeedResult != "fail" {
		t.Errorf("TestGhost: candidate %s, base %s; want fail and fail", rec.CandidateResult, rec.BaseSeedResult)
	}
	bs := transcriptBatches(t, rec.TranscriptPath)
	if len(bs) == 0 || bs[0].ExitCode != 1 || len(bs[0].KnownAnswers) != 2 {
		t.Errorf("the batch: %+v; want exit 1 and its two known answers", bs)
	}
}
