package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// Issue 41: the base's tests run in the base's world. A test file the
// patch edits is graded test by test: the base's version of the file
// runs on the patch's code (PASS where it passes), the tests the patch
// adds to it or changes are new tests, and a base test that fails where
// the patch edited its file or its data is CONTAMINATED, its record
// naming the edit (grader_edits, diff_paths) so that classify and the
// spec's listing say the same.

// graderReason is the reason a base test the patch edited gets when it
// fails on the patch's code.
func graderReason(test string) string {
	return "the patch changes " + test + ", and its base version fails on the patch's code: split that edit into another review"
}

// classifyRecord runs `flakegate classify` on result i's record and
// returns the label it prints; it checks the record's hash is the
// summary's.
func classifyRecord(t *testing.T, r *repo, cr *checkRun, i int) string {
	t.Helper()
	res := cr.summary.Results[i]
	code, out := r.run("classify", res.Record)
	if code != 0 {
		t.Fatalf("classify %s: exit %d\n%s", res.Record, code, out)
	}
	var d struct {
		Label        string `json:"label"`
		RecordSHA256 string `json:"record_sha256"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &d); err != nil {
		t.Fatalf("classify's output: %v\n%s", err, out)
	}
	if d.RecordSHA256 != res.RecordSHA256 {
		t.Errorf("classify hashes the record %s, the summary says %s", d.RecordSHA256, res.RecordSHA256)
	}
	return d.Label
}

// listingLabel is the label the spec's listing gives record file f, run
// through testdata/vectors/gen.py --decide; ok is false where the spec
// is not on this machine ($FLAKEGATE_SPEC, else beside the repository).
func listingLabel(t *testing.T, f string) (string, bool) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(self))
	spec := os.Getenv("FLAKEGATE_SPEC")
	if spec == "" {
		spec = filepath.Join(filepath.Dir(root), "shared", "spec", "flake-freeze-ledger.txt")
	}
	if _, err := os.Stat(spec); err != nil {
		return "", false
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var compact strings.Builder
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	compact.Write(b)
	cmd := exec.Command("python3", filepath.Join(root, "testdata", "vectors", "gen.py"), "--decide", "--spec", spec)
	cmd.Stdin = strings.NewReader(compact.String() + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen.py --decide: %v\n%s", err, out)
	}
	var d struct {
		Label string `json:"label"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("gen.py --decide's output: %v\n%s", err, out)
	}
	return d.Label, true
}

// graderEdits reads the record's grader_edits (the patch's edits the
// graded tree took back, listed where the test's base version failed).
func graderEdits(t *testing.T, cr *checkRun, i int) []string {
	t.Helper()
	raw, err := os.ReadFile(cr.summary.Results[i].Record)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		GraderEdits []string `json:"grader_edits"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.GraderEdits
}

// labelsAgree checks that classify and the spec's listing (where the
// spec is here) give result i's record the check's label.
func labelsAgree(t *testing.T, r *repo, cr *checkRun, i int, listingToo bool) {
	t.Helper()
	res := cr.summary.Results[i]
	if got := classifyRecord(t, r, cr, i); got != string(res.Label) {
		t.Errorf("%s: classify of its stored record says %s, the check %s", res.Name, got, res.Label)
	}
	if !listingToo {
		return
	}
	if got, ok := listingLabel(t, res.Record); ok && got != string(res.Label) {
		t.Errorf("%s: the spec's listing says %s of its record, the check %s", res.Name, got, res.Label)
	}
}

// resultOf is the result of test name with seed, and its index.
func resultOf(t *testing.T, cr *checkRun, name, seed string) (flakegate.Result, int) {
	t.Helper()
	for i, res := range cr.summary.Results {
		if res.Name == name && res.Seed.String() == seed {
			return res, i
		}
	}
	t.Fatalf("no result for %s seed %s\n%s", name, seed, cr)
	return flakegate.Result{}, -1
}

// TestCheckGraderGoEditedTestFile: on a Go suite, a patch that fixes a
// bug and appends its regression test to the existing a/a_test.go (the
// everyday patch, which made all 20 triples of that file CONTAMINATED
// before) exits 0: the base's tests of the file run on the patch's code
// and PASS, and the appended test is a new test, 5 of 5. A patch that
// breaks Value for 3 and weakens TestA03 in the same file to hide it
// exits 1: TestA03's base version fails, CONTAMINATED, its reason naming
// the edited test; its record lists a/a_test.go in grader_edits and
// diff_paths, classify and the spec's listing agree, and nothing of it
// is frozen or SCHEDULER. The other tests of the file PASS.
func TestCheckGraderGoEditedTestFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	files := suiteModule("reject_flaky_new_tests: true\n")
	files["a/a.go"] = "package a\n\n// Value is i.\nfunc Value(i int) int {\n\tif i < 0 {\n\t\treturn 0 // a bug\n\t}\n\treturn i\n}\n"
	r := newRepo(t, files)

	appended := files["a/a_test.go"] + "\nfunc TestANegative(t *testing.T) {\n\tif Value(-4) != -4 {\n\t\tt.Fatal(\"negative\")\n\t}\n}\n"
	r.candidate("fix", map[string]string{"a/a.go": "package a\n\n// Value is i.\nfunc Value(i int) int { return i }\n", "a/a_test.go": appended})
	cr := r.check("--base", "base", "--candidate", "fix")
	if got := notPass(cr); cr.code != 0 || len(got) != 0 || len(cr.summary.Results) != 60 {
		t.Fatalf("a fix with a test appended to a/a_test.go: want exit 0 and 60 PASS, got %v\n%s", got, cr)
	}
	nt := cr.summary.NewTests
	if len(nt) != 1 || nt[0].Name != "TestANegative" || nt[0].Path != "a/a_test.go" || nt[0].Passed != 5 || nt[0].Runs != 5 {
		t.Fatalf("new tests: want TestANegative 5 of 5, got %+v\n%s", nt, cr)
	}
	res, i := resultOf(t, cr, "TestA03", "1")
	if rec := cr.record(t, i); slices.Contains(rec.DiffPaths, "a/a_test.go") || graderEdits(t, cr, i) != nil {
		t.Errorf("a passing base test of the edited file: diff_paths %v grader_edits %v, want neither to name a/a_test.go (the graded tree holds the base's)", rec.DiffPaths, graderEdits(t, cr, i))
	}
	labelsAgree(t, r, cr, i, true)
	_ = res

	weakened := strings.Replace(files["a/a_test.go"], "if Value(3) != 3 {", "if Value(3) != 4 {", 1)
	r.candidate("hide", map[string]string{"a/a.go": "package a\n\n// Value is i, but 3 is off by one.\nfunc Value(i int) int {\n\tif i == 3 {\n\t\treturn 4\n\t}\n\treturn i\n}\n", "a/a_test.go": weakened})
	cr = r.check("--base", "base", "--candidate", "hide")
	if got, want := notPass(cr), []string{"TestA03 1 CONTAMINATED", "TestA03 2 CONTAMINATED"}; cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("a regression hidden by a weakened test of the same file: want exit 1 and %v, got %v\n%s", want, got, cr)
	}
	res, i = resultOf(t, cr, "TestA03", "1")
	if res.Reason != graderReason("a/a_test.go::TestA03") {
		t.Errorf("reason %q, want %q", res.Reason, graderReason("a/a_test.go::TestA03"))
	}
	rec := cr.record(t, i)
	if edits := graderEdits(t, cr, i); !slices.Equal(edits, []string{"a/a_test.go"}) || !slices.Contains(rec.DiffPaths, "a/a_test.go") || rec.CandidateResult != "fail" || len(rec.Attempts) == 0 {
		t.Errorf("record: grader_edits %v diff_paths %v candidate_result %q, %d attempts", edits, rec.DiffPaths, rec.CandidateResult, len(rec.Attempts))
	}
	labelsAgree(t, r, cr, i, true)
	if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Name != "TestA03" || nt[0].Passed != 5 {
		t.Errorf("the weakened TestA03 is a changed test, run on the patch's tree: want it 5 of 5, got %+v", nt)
	}
	for _, res := range cr.summary.Results {
		if res.Label == flakegate.Scheduler || res.Freeze {
			t.Errorf("%s seed %s: %s freeze=%v", res.Name, res.Seed, res.Label, res.Freeze)
		}
	}
}

const graderCalcPy = "def clamp(x, lo, hi):\n    if lo > hi:\n        lo, hi = lo, lo  # a bug: the bounds are not swapped\n    return max(lo, min(x, hi))\n"

const graderTestPy = "from calc import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\ndef test_high():\n    assert clamp(11, 0, 10) == 10\n\n\ndef test_low():\n    assert clamp(-1, 0, 10) == 0\n"

// TestCheckGraderPytestEditedTestFile: on a pytest suite, a patch that
// fixes a bug and appends its regression test to the existing
// tests/test_calc.py exits 0: the base's tests of the file PASS on the
// patch's code and the appended test is a new test, 5 of 5. A patch that
// breaks clamp above the range and weakens test_high in the same file
// exits 1: test_high's base version fails, CONTAMINATED, naming
// tests/test_calc.py::test_high; classify and the spec's listing agree.
func TestCheckGraderPytestEditedTestFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := newRepo(t, map[string]string{
		"README.md":          "calc\n",
		"calc.py":            graderCalcPy,
		"tests/test_calc.py": graderTestPy,
		"flakegate.yaml":     "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nreject_flaky_new_tests: true\nimpact: false\nsuites:\n  - path: tests\n    framework: pytest\n    seeds: [1, 2]\n    wall_budget: 120s\n",
	})
	fixed := strings.Replace(graderCalcPy, "lo, hi = lo, lo  # a bug: the bounds are not swapped", "lo, hi = hi, lo", 1)
	r.candidate("fix", map[string]string{"calc.py": fixed, "tests/test_calc.py": graderTestPy + "\n\ndef test_swapped():\n    assert clamp(5, 10, 0) == 5\n"})
	cr := r.check("--base", "base", "--candidate", "fix")
	if got := notPass(cr); cr.code != 0 || len(got) != 0 || len(cr.summary.Results) != 6 {
		t.Fatalf("a fix with a test appended to tests/test_calc.py: want exit 0 and 6 PASS, got %v\n%s", got, cr)
	}
	if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Name != "test_swapped" || nt[0].Path != "tests/test_calc.py" || nt[0].Passed != 5 {
		t.Fatalf("new tests: want test_swapped 5 of 5, got %+v\n%s", nt, cr)
	}
	_, i := resultOf(t, cr, "test_high", "1")
	labelsAgree(t, r, cr, i, true)

	broken := strings.Replace(graderCalcPy, "return max(lo, min(x, hi))", "return max(lo, x)", 1)
	r.candidate("hide", map[string]string{"calc.py": broken, "tests/test_calc.py": strings.Replace(graderTestPy, "clamp(11, 0, 10) == 10", "clamp(11, 0, 10) >= 10", 1)})
	cr = r.check("--base", "base", "--candidate", "hide")
	if got, want := notPass(cr), []string{"test_high 1 CONTAMINATED", "test_high 2 CONTAMINATED"}; cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("a regression hidden by a weakened test of the same file: want exit 1 and %v, got %v\n%s", want, got, cr)
	}
	res, i := resultOf(t, cr, "test_high", "2")
	if want := graderReason("tests/test_calc.py::test_high"); res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	if edits := graderEdits(t, cr, i); !slices.Equal(edits, []string{"tests/test_calc.py"}) {
		t.Errorf("grader_edits %v", edits)
	}
	labelsAgree(t, r, cr, i, true)
}

// TestCheckGraderJSEditedTestFile: on a vitest suite, a patch that adds
// an export and appends its test to the existing tests/calc.test.js
// exits 0 (the base's tests of the file PASS, the appended test is a new
// test, 5 of 5); a patch that breaks neg and weakens the neg test in the
// same file exits 1: neg's base version fails, CONTAMINATED with every
// seed, naming tests/calc.test.js::neg; classify and the spec's listing
// agree.
func TestCheckGraderJSEditedTestFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real vitest")
	}
	fw := jsFrameworks[1]
	r := jsSuiteRepo(t, fw)
	calcTest := r.git("show", "base:tests/calc.test.js")
	appended := calcTest + "\ntest(\"adds zero\", () => {\n  expect(add(2, 0)).toBe(2);\n});\n"
	r.candidate("fix", map[string]string{"src/calc.js": fw.source(jsSuiteCalc + "export const half = (a) => a / 2;\n"), "tests/calc.test.js": appended})
	cr := r.check("--base", "base", "--candidate", "fix")
	if got := notPass(cr); cr.code != 0 || len(got) != 0 || len(cr.summary.Results) != 6*len(jsSuiteSeeds) {
		t.Fatalf("a test appended to tests/calc.test.js: want exit 0 and every triple PASS, got %v\n%s", got, cr)
	}
	if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Name != "adds zero" || nt[0].Passed != 5 {
		t.Fatalf("new tests: want \"adds zero\" 5 of 5, got %+v\n%s", nt, cr)
	}

	weakened := strings.Replace(calcTest, "expect(neg(2)).toBe(-2);", "expect(Math.abs(neg(2))).toBe(2);", 1)
	r.candidate("hide", map[string]string{"src/calc.js": fw.source(strings.Replace(jsSuiteCalc, "-a", "a", 1)), "tests/calc.test.js": weakened})
	cr = r.check("--base", "base", "--candidate", "hide")
	var want []string
	for _, s := range jsSuiteSeeds {
		want = append(want, "neg "+s+" CONTAMINATED")
	}
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("a regression hidden by a weakened test of the same file: want exit 1 and %v, got %v\n%s", want, got, cr)
	}
	res, i := resultOf(t, cr, "neg", "1")
	if w := graderReason("tests/calc.test.js::neg"); res.Reason != w {
		t.Errorf("reason %q, want %q", res.Reason, w)
	}
	labelsAgree(t, r, cr, i, true)
	if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Name != "neg" || nt[0].Passed != 5 {
		t.Errorf("the weakened neg is a changed test, run on the patch's tree: want it 5 of 5, got %+v", nt)
	}
}

// TestCheckGraderGoLibraryOfTests: in a go suite, a library package that
// only other packages' tests import, but that the suite gates itself (its
// own tests are listed: go-cmp's cmpopts beside cmp), is code under test:
// a harmless change to it exits 0, its users' tests PASS on it (before,
// they were CONTAMINATED by every patch to the library). A test-helper
// package the suite does not gate (internal/footest, no tests of its
// own) is still watched: weakening it beside a regression is
// CONTAMINATED, naming it.
func TestCheckGraderGoLibraryOfTests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	files := map[string]string{
		"go.mod":                      "module example.com/lib\n\ngo 1.22\n",
		"opts/opts.go":                "package opts\n\n// Twice is 2x.\nfunc Twice(x int) int { return 2 * x }\n",
		"opts/opts_test.go":           "package opts\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n",
		"internal/footest/footest.go": "package footest\n\n// Check fails t unless got is want.\nfunc Check(t interface{ Fatal(...any) }, got, want int) {\n\tif got != want {\n\t\tt.Fatal(got, want)\n\t}\n}\n",
		"core/core.go":                "package core\n\n// Add is a+b.\nfunc Add(a, b int) int { return a + b }\n",
		"core/core_test.go": "package core\n\nimport (\n\t\"testing\"\n\n\t\"example.com/lib/internal/footest\"\n\t\"example.com/lib/opts\"\n)\n\n" +
			"func TestAdd(t *testing.T) { footest.Check(t, Add(2, 3), 5) }\n\nfunc TestAddTwice(t *testing.T) { footest.Check(t, Add(opts.Twice(1), 1), 3) }\n",
		"flakegate.yaml": "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: \"./...\"\n    framework: go\n    seeds: [1]\n    wall_budget: 120s\n",
	}
	r := newRepo(t, files)
	r.candidate("opts", map[string]string{"opts/opts.go": "package opts\n\n// Twice is x+x.\nfunc Twice(x int) int { return x + x }\n"})
	cr := r.check("--base", "base", "--candidate", "opts")
	if got := notPass(cr); cr.code != 0 || len(got) != 0 || len(cr.summary.Results) != 3 {
		t.Fatalf("a harmless change to a library the suite gates: want exit 0 and 3 PASS, got %v\n%s", got, cr)
	}
	r.candidate("weak", map[string]string{
		"core/core.go":                "package core\n\n// Add is a+b, but not for 2.\nfunc Add(a, b int) int {\n\tif a == 2 {\n\t\treturn a\n\t}\n\treturn a + b\n}\n",
		"internal/footest/footest.go": "package footest\n\n// Check passes.\nfunc Check(t interface{ Fatal(...any) }, got, want int) {}\n",
	})
	cr = r.check("--base", "base", "--candidate", "weak")
	if got, want := notPass(cr), []string{"TestAdd 1 CONTAMINATED", "TestAddTwice 1 CONTAMINATED"}; cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("a weakened test helper beside a regression: want exit 1 and %v, got %v\n%s", want, got, cr)
	}
	if res, _ := resultOf(t, cr, "TestAdd", "1"); !strings.Contains(res.Reason, "internal/footest/footest.go (a Go package of the module only tests import") {
		t.Errorf("reason %q", res.Reason)
	}
}

// TestCheckGraderGoAPIChange: a patch that renames the function package
// a's tests use and renames it in a/a_test.go too: the base's test file
// does not build against the patch's code, so every test of a is
// CONTAMINATED, its reason one line that says so (no compiler output),
// never INCOMPLETE; the renamed tests are new tests (5 of 5); the other
// packages PASS.
func TestCheckGraderGoAPIChange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	files := suiteModule("")
	r := newRepo(t, files)
	r.candidate("rename", map[string]string{
		"a/a.go":      strings.ReplaceAll(files["a/a.go"], "Value", "Val"),
		"a/a_test.go": strings.ReplaceAll(files["a/a_test.go"], "Value(", "Val("),
	})
	cr := r.check("--base", "base", "--candidate", "rename")
	var want []string
	for _, s := range []string{"1", "2"} {
		for i := range 10 {
			want = append(want, fmt.Sprintf("TestA%02d %s CONTAMINATED", i, s))
		}
	}
	slices.Sort(want)
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("an API change with its tests: want exit 1 and a's 20 triples CONTAMINATED, got %v\n%s", got, cr)
	}
	res, i := resultOf(t, cr, "TestA04", "1")
	if w := "the patch changes a/a_test.go::TestA04, and its base version cannot run on the patch's code (it does not build, or is not collected: the patch changes what it uses): split that edit into another review"; res.Reason != w {
		t.Errorf("reason %q, want %q", res.Reason, w)
	}
	if rec := cr.record(t, i); rec.CandidateResult != "fail" || len(rec.Attempts) == 0 || rec.Attempts[0].Result != "error" {
		t.Errorf("candidate_result %q, attempts %+v", rec.CandidateResult, rec.Attempts)
	}
	labelsAgree(t, r, cr, i, true)
	if nt := cr.summary.NewTests; len(nt) != 10 || nt[0].Passed != 5 {
		t.Errorf("new tests: want a's 10 renamed tests, 5 of 5, got %+v", nt)
	}
}
