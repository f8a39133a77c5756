package grade

import (
	"context"
	"slices"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// TestGraderEdits: a test's taken-back edits grade its run only when its
// base version did not pass on the patch's code (failed or could not
// run) while the base seed passed, and an attempt ran.
func TestGraderEdits(t *testing.T) {
	edits := []Edit{{"tests/test_calc.py", TestFile}}
	for _, tc := range []struct {
		name            string
		edits           []Edit
		skipped         bool
		candidate, base string
		want            bool
	}{
		{"fails, base passes", edits, false, attempt.Fail, attempt.Pass, true},
		{"errored, base passes", edits, false, attempt.Errored, attempt.Pass, true},
		{"passes", edits, false, attempt.Pass, attempt.Pass, false},
		{"fails on the base too", edits, false, attempt.Fail, attempt.Fail, false},
		{"no attempt", edits, false, "", attempt.Pass, false},
		{"skipped", edits, true, attempt.Fail, attempt.Pass, false},
		{"no edits", nil, false, attempt.Fail, attempt.Pass, false},
	} {
		if got := GraderEdits(tc.edits, tc.skipped, tc.candidate, tc.base); (got != nil) != tc.want {
			t.Errorf("%s: GraderEdits = %v, want edits %t", tc.name, got, tc.want)
		}
	}
}

// TestAddGraderKeys: the edits join diff_paths once, watch_paths but for
// the property file, grader_edits, and candidate_result says fail.
func TestAddGraderKeys(t *testing.T) {
	rec := &flakegate.RunRecord{PropertyPath: "tests/test_calc.py", DiffPaths: []string{"calc.py", "tests/data.json"},
		WatchPaths: []string{"flakegate.yaml"}, CandidateResult: attempt.Errored}
	AddGraderKeys(rec, []Edit{{"tests/test_calc.py", TestFile}, {"tests/data.json", TestFolder}})
	if !slices.Equal(rec.DiffPaths, []string{"calc.py", "tests/data.json", "tests/test_calc.py"}) ||
		!slices.Equal(rec.WatchPaths, []string{"flakegate.yaml", "tests/data.json"}) ||
		!slices.Equal(rec.GraderEdits, []string{"tests/test_calc.py", "tests/data.json"}) || rec.CandidateResult != attempt.Fail {
		t.Errorf("diff %v watch %v grader_edits %v candidate %q", rec.DiffPaths, rec.WatchPaths, rec.GraderEdits, rec.CandidateResult)
	}
	none := &flakegate.RunRecord{CandidateResult: attempt.Errored}
	if AddGraderKeys(none, nil); none.CandidateResult != attempt.Errored || none.GraderEdits != nil {
		t.Errorf("no edits changed the record: %+v", none)
	}
}

// TestGraderReason: the reason names each edit (the test itself when
// the patch changes it, a file by what it is where its name does not
// say it) and what the base version did.
func TestGraderReason(t *testing.T) {
	p := &config.Property{Path: "tests/test_calc.py", Name: "test_high"}
	for _, tc := range []struct {
		edits     []Edit
		candidate string
		changed   bool
		want      string
	}{
		{[]Edit{{"tests/test_calc.py", TestFile}}, attempt.Fail, true,
			"the patch changes tests/test_calc.py::test_high, and its base version fails on the patch's code: split that edit into another review"},
		{[]Edit{{"tests/test_calc.py", TestFile}, {"tests/conftest.py", Conftest}}, attempt.Fail, true,
			"the patch changes tests/test_calc.py::test_high, tests/conftest.py, and the base's version of tests/test_calc.py::test_high fails on the patch's code: split that edit into another review"},
		{[]Edit{{"go.mod", GoMod}, {"go.work", GoWork}, {"pytest.ini", PytestIni}, {"tests/__snapshots__/a.snap", Snapshot}}, attempt.Errored, false,
			"the patch changes go.mod's go, toolchain or godebug lines, go.work, pytest.ini, tests/__snapshots__/a.snap (a snapshot), and the base's version of tests/test_calc.py::test_high cannot run on the patch's code (it does not build, or is not collected: the patch changes what it uses): split that edit into another review"},
	} {
		if got := GraderReason(p, tc.edits, tc.candidate, tc.changed); got != tc.want {
			t.Errorf("GraderReason(%v) =\n%q\nwant\n%q", tc.edits, got, tc.want)
		}
	}
}

// TestChangedTests: of the tests in the files the graded tree took back,
// the ones the patch changes, by ChangedKey (a go test by its package
// folder, another by its file); a test of a file the patch did not edit
// is not looked at.
func TestChangedTests(t *testing.T) {
	ctx := context.Background()
	base := map[string]string{
		"pkg/a_test.go":       "package pkg\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n",
		"pkg/b_test.go":       "package pkg\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
		"tests/test_calc.py":  "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n",
		"tests/test_other.py": "def test_o():\n    assert 1\n",
	}
	cand := map[string]string{
		"pkg/a_test.go":       "package pkg\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) { t.Log(1) }\n",
		"tests/test_calc.py":  "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 3\n",
		"tests/test_other.py": "def test_o():\n    assert 0\n",
	}
	g, shas := gitRepo(t, base, cand)
	gr := &Grader{Git: g, BaseSHA: shas[0], CandSHA: shas[1], Graded: &Graded{Taken: []Edit{{"pkg/a_test.go", TestFile}, {"tests/test_calc.py", TestFile}}}}
	tests := []Test{{config.FrameworkGo, "pkg/a_test.go", "TestA"}, {config.FrameworkGo, "pkg/b_test.go", "TestB"}, {config.FrameworkGo, "pkg/b_test.go", "TestC"},
		{config.FrameworkPytest, "tests/test_calc.py", "test_a"}, {config.FrameworkPytest, "tests/test_calc.py", "test_b"},
		{config.FrameworkPytest, "tests/test_other.py", "test_o"}}
	got, err := gr.ChangedTests(ctx, tests)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{ChangedKey(config.FrameworkGo, "pkg/x_test.go", "TestB"): true, ChangedKey(config.FrameworkPytest, "tests/test_calc.py", "test_b"): true}
	if len(got) != len(want) {
		t.Errorf("changed %q, want %q", keys(got), keys(want))
	}
	for k := range want {
		if !got[k] {
			t.Errorf("changed %q lacks %q", keys(got), k)
		}
	}
	if got, err := (&Grader{}).ChangedTests(ctx, tests); err != nil || len(got) != 0 || got == nil {
		t.Errorf("without a graded tree: %v, %v", got, err)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
