package check

import (
	"encoding/json"
	"slices"
	"testing"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
)

// TestGraderRecord: the record of a test whose base version did not pass
// on the patch's code, where the patch edited the test or its data (an
// edit the graded tree took back), names the edits in diff_paths,
// grader_edits and (for data) watch_paths, says candidate_result "fail"
// (also for an attempt that errored), and the table labels the stored
// bytes CONTAMINATED, as the check does; the reason names the edit. A
// base test that passes, one that fails on the base too, or one the
// patch did not edit keeps its own label and no grader key.
func TestGraderRecord(t *testing.T) {
	type testCase struct {
		name              string
		edits             []grade.Edit
		candidate, base   string
		changed           bool
		label             flakegate.Label
		graderEdits, diff []string
		watch             []string
		reason            string
	}
	own := grade.Edit{Path: "tests/test_calc.py", Kind: grade.TestFile}
	data := grade.Edit{Path: "tests/data/golden.json", Kind: grade.TestFolder}
	run := func(t *testing.T, tc testCase) {
		p := &config.Property{Path: "tests/test_calc.py", Name: "test_high", Framework: config.FrameworkPytest}
		ps := &propState{prop: p, candPropertySHA256: "p", candFixtureSHA256: config.NoFixtureSHA256, baseFixtureSHA256: config.NoFixtureSHA256,
			watch: []string{"flakegate.yaml"}, graderEdits: tc.edits}
		c := &checker{candSHA: "c", diff: []string{"calc.py"}}
		c.cfg = &config.Config{RetryCap: 2}
		c.baseSHA, c.iso = "b", &sitepkg.Isolation{Mode: sitepkg.IsolationNone}
		c.suite.changed = map[string]bool{}
		if tc.changed {
			c.suite.changed[changedKey(p.Framework, p.Path, p.Name)] = true
		}
		r := &tripleRun{c: c, j: &job{ps: ps, seed: "1"}, t: transcriptRun{Tally: batch.Tally{Candidate: tc.candidate, Base: tc.base, Retries: []string{},
			BudgetOK: true, Complete: true}, attempts: []flakegate.Attempt{{Side: "candidate", Result: tc.candidate}}}}
		raw, _, err := encodeRecord(r.runRecord())
		if err != nil {
			t.Fatal(err)
		}
		d := flakegate.ClassifyBytes(raw)
		if d.Label != tc.label {
			t.Fatalf("label %s (row %d: %s), want %s\n%s", d.Label, d.Row, d.Reason, tc.label, raw)
		}
		var rec flakegate.RunRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.GraderEdits, tc.graderEdits) || !slices.Equal(rec.DiffPaths, tc.diff) || !slices.Equal(rec.WatchPaths, tc.watch) {
			t.Errorf("grader_edits %v diff_paths %v watch_paths %v, want %v %v %v", rec.GraderEdits, rec.DiffPaths, rec.WatchPaths, tc.graderEdits, tc.diff, tc.watch)
		}
		if tc.graderEdits != nil && rec.CandidateResult != attempt.Fail {
			t.Errorf("candidate_result %q, want fail", rec.CandidateResult)
		}
		if got := r.reason(d, ""); tc.reason != "" && got != tc.reason {
			t.Errorf("reason %q\nwant   %q", got, tc.reason)
		}
	}
	for _, tc := range []testCase{
		{name: "its own body changed", edits: []grade.Edit{own}, candidate: attempt.Fail, base: attempt.Pass, changed: true, label: flakegate.Contaminated,
			graderEdits: []string{own.Path}, diff: []string{"calc.py", own.Path}, watch: []string{"flakegate.yaml"},
			reason: "the patch changes tests/test_calc.py::test_high, and its base version fails on the patch's code: split that edit into another review"},
		{name: "its file, not itself", edits: []grade.Edit{own}, candidate: attempt.Fail, base: attempt.Pass, label: flakegate.Contaminated,
			graderEdits: []string{own.Path}, diff: []string{"calc.py", own.Path}, watch: []string{"flakegate.yaml"},
			reason: "the patch changes tests/test_calc.py, and the base's version of tests/test_calc.py::test_high fails on the patch's code: split that edit into another review"},
		{name: "its data", edits: []grade.Edit{data}, candidate: attempt.Fail, base: attempt.Pass, label: flakegate.Contaminated,
			graderEdits: []string{data.Path}, diff: []string{"calc.py", data.Path}, watch: []string{"flakegate.yaml", data.Path},
			reason: "the patch changes tests/data/golden.json (a file of a test folder), and the base's version of tests/test_calc.py::test_high fails on the patch's code: split that edit into another review"},
		{name: "does not build", edits: []grade.Edit{own}, candidate: attempt.Errored, base: attempt.Pass, label: flakegate.Contaminated,
			graderEdits: []string{own.Path}, diff: []string{"calc.py", own.Path}, watch: []string{"flakegate.yaml"},
			reason: "the patch changes tests/test_calc.py, and the base's version of tests/test_calc.py::test_high cannot run on the patch's code (it does not build, or is not collected: the patch changes what it uses): split that edit into another review"},
		{name: "passes", edits: []grade.Edit{own}, candidate: attempt.Pass, base: attempt.Pass, label: flakegate.Pass,
			diff: []string{"calc.py"}, watch: []string{"flakegate.yaml"}},
		{name: "fails on the base too", edits: []grade.Edit{own}, candidate: attempt.Fail, base: attempt.Fail, label: flakegate.Property,
			diff: []string{"calc.py"}, watch: []string{"flakegate.yaml"}},
		{name: "not edited", candidate: attempt.Fail, base: attempt.Pass, label: flakegate.Property,
			diff: []string{"calc.py"}, watch: []string{"flakegate.yaml"}},
		{name: "errored, not edited", candidate: attempt.Errored, base: attempt.Pass, label: flakegate.Incomplete,
			diff: []string{"calc.py"}, watch: []string{"flakegate.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
