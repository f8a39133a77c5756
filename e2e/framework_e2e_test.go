package e2e_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheckWrappedPytestWatchesHelpers: a pytest property run through
// sh -c is still pytest (config.FrameworkOfArgv): a patch that keeps a
// real regression and weakens the tests/helpers.py the property imports
// is CONTAMINATED, not PASS (the graded tree runs the base's helper, the
// property fails, and the reason names the helper the patch changed);
// the regression alone is PROPERTY, a
// harmless patch PASSes on pytest's own evidence (its PASSED line, asked
// for through PYTEST_ADDOPTS), and a patch that makes the test skip is
// INCOMPLETE, not PASS.
func TestCheckWrappedPytestWatchesHelpers(t *testing.T) {
	t.Parallel()
	needProgram(t, "pytest")
	files := helperFiles()
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"],
		`run: [pytest, -q, -p, no:cacheprovider, "{path}::{name}"]`,
		`run: [sh, -c, "SEED={seed} exec /usr/bin/python3 -m pytest -q -p no:cacheprovider {path}::{name}"]`, 1)
	r := newRepo(t, files)
	regress := "def sort(xs):\n    return list(xs)\n"
	r.candidate("weakened", map[string]string{"calc.py": regress, "tests/helpers.py": "def check_sorted(xs, ys):\n    pass  # weakened\n"})
	r.candidate("regression", map[string]string{"calc.py": regress})
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	r.candidate("skips", map[string]string{"calc.py": "import pytest\n\n\ndef sort(xs):\n    pytest.skip(\"not today\")\n"})

	cr := r.check("--base", "base", "--candidate", "weakened")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED" {
		t.Fatalf("a weakened helper with a regression, through sh -c\n%s", cr)
	}
	if why := cr.summary.Results[0].Reason; !strings.Contains(why, "the patch changes tests/helpers.py (a file of a test folder), and the base's version of tests/test_calc.py::test_sorted fails on the patch's code") {
		t.Errorf("reason %q", why)
	}
	if cr := r.check("--base", "base", "--candidate", "regression"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
		t.Fatalf("the regression alone\n%s", cr)
	}
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Fatalf("a harmless patch\n%s", cr)
	}
	// Product code that skips the test exits 0 with "1 skipped": no evidence of a pass.
	cr = r.check("--base", "base", "--candidate", "skips")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE" || !strings.Contains(cr.summary.Results[0].Reason, "skipped") {
		t.Fatalf("a skipped test through sh -c\n%s", cr)
	}
}

// TestCheckUnrecognizedCommandOfATestFile: a Go or pytest test file run
// by a command flakegate cannot read (make, tox) without framework: is a
// configuration error naming the line and the fix, before anything runs.
func TestCheckUnrecognizedCommandOfATestFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	for _, tc := range []struct{ path, run, want string }{
		{"pkg/sort_test.go", "[make, test]", "flakegate.yaml:7: properties[0].run: pkg/sort_test.go is a Go test file"},
		{"tests/test_sort.py", "[tox, -e, py]", "flakegate.yaml:7: properties[0].run: tests/test_sort.py is a pytest test file"},
	} {
		r := newRepo(t, map[string]string{
			tc.path: "x\n",
			"flakegate.yaml": fmt.Sprintf(`version: 1
properties:
  - path: %s
    name: TestSort
    seeds: [1]
    wall_budget: 60s
    run: %s
`, tc.path, tc.run),
		})
		r.candidate("docs", map[string]string{"README.md": "docs\n"})
		cr := r.check("--base", "base", "--candidate", "docs")
		if cr.code != 2 || !strings.Contains(cr.stderr, tc.want) || !strings.Contains(cr.stderr, "add framework: ") {
			t.Errorf("%s run by %s\n%s", tc.path, tc.run, cr)
		}
	}
}

// goHelperModule: a module whose sorter package's five properties grade
// through internal/sorttest, a package only tests import.
func goHelperModule() map[string]string {
	var tests strings.Builder
	tests.WriteString("package sorter\n\nimport (\n\t\"flag\"\n\t\"testing\"\n\n\t\"example.com/m/internal/sorttest\"\n)\n\nvar seed = flag.Int64(\"seed\", 1, \"\")\n")
	var props strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&tests, "\nfunc TestProp%d(t *testing.T) {\n\tfor n := 0; n < 40; n++ {\n\t\txs := sorttest.Ints(*seed*%d+int64(n), n)\n\t\tsorttest.CheckSorted(t, xs, Sort(xs))\n\t}\n}\n", i, i)
		fmt.Fprintf(&props, "  - path: sorter/sort_test.go\n    name: TestProp%d\n    seeds: [1]\n    run: [go, test, -count=1, -run, \"^{name}$\", ./sorter, -args, \"-seed={seed}\"]\n    wall_budget: 120s\n", i)
	}
	return map[string]string{
		"go.mod":              "module example.com/m\n\ngo 1.21\n",
		"sorter/sort.go":      "package sorter\n\nimport \"sort\"\n\n// Sort returns xs in ascending order.\nfunc Sort(xs []int) []int {\n\tys := append([]int(nil), xs...)\n\tsort.Ints(ys)\n\treturn ys\n}\n",
		"sorter/sort_test.go": tests.String(),
		"internal/sorttest/sorttest.go": `// Package sorttest grades sorters; only tests import it.
package sorttest

import "testing"

// Ints is n pseudo-random ints from seed.
func Ints(seed int64, n int) []int {
	xs := make([]int, n)
	s := uint64(seed)*6364136223846793005 + 1442695040888963407
	for i := range xs {
		s = s*6364136223846793005 + 1442695040888963407
		xs[i] = int(s>>40)%1000 - 500
	}
	return xs
}

// CheckSorted fails t unless ys is xs in ascending order.
func CheckSorted(t *testing.T, xs, ys []int) {
	t.Helper()
	if len(xs) != len(ys) {
		t.Fatalf("length %d, want %d", len(ys), len(xs))
	}
	for i := 1; i < len(ys); i++ {
		if ys[i-1] > ys[i] {
			t.Fatalf("not sorted at %d: %v", i, ys)
		}
	}
}
`,
		"internal/cmp/cmp.go": "// Package cmp is product code the sorter could use.\npackage cmp\n\n// Less reports a < b.\nfunc Less(a, b int) bool { return a < b }\n",
		"cmd/tool/main.go":    "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/internal/cmp\"\n\t\"example.com/m/sorter\"\n)\n\nfunc main() { fmt.Println(sorter.Sort([]int{2, 1}), cmp.Less(1, 2)) }\n",
		"flakegate.yaml":      "version: 1\nretry_cap: 1\nworkers: 2\nproperties:\n" + props.String(),
	}
}

// TestCheckGoTestHelperPackage: a patch that keeps a regression in the
// sorter and weakens internal/sorttest, which only tests import, is
// CONTAMINATED for every property that uses it (the helper is watched
// like the package's own _test.go files); the regression alone is
// PROPERTY, and product code (internal/cmp, imported by cmd/tool) is not
// watched.
func TestCheckGoTestHelperPackage(t *testing.T) {
	t.Parallel()
	needProgram(t, "go")
	files := goHelperModule()
	r := newRepo(t, files)
	regress := strings.Replace(files["sorter/sort.go"], "\tsort.Ints(ys)\n", "\tif len(ys) > 3 {\n\t\tsort.Ints(ys[2:])\n\t\tys[0], ys[1] = ys[2], ys[0]\n\t} else {\n\t\tsort.Ints(ys)\n\t}\n", 1)
	weak := strings.Replace(files["internal/sorttest/sorttest.go"], "\t\tif ys[i-1] > ys[i] {", "\t\tif false && ys[i-1] > ys[i] {", 1)
	r.candidate("weakened", map[string]string{"sorter/sort.go": regress, "internal/sorttest/sorttest.go": weak})
	r.candidate("regression", map[string]string{"sorter/sort.go": regress})
	r.candidate("product", map[string]string{"internal/cmp/cmp.go": strings.Replace(files["internal/cmp/cmp.go"], "a < b", "b > a", 1)})

	cr := r.check("--base", "base", "--candidate", "weakened")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED,CONTAMINATED,CONTAMINATED,CONTAMINATED,CONTAMINATED" {
		t.Fatalf("a weakened test-helper package with a regression\n%s", cr)
	}
	for _, res := range cr.summary.Results {
		if !strings.Contains(res.Reason, "internal/sorttest/sorttest.go (a Go package of the module only tests import") {
			t.Errorf("reason %q", res.Reason)
		}
	}
	if cr := r.check("--base", "base", "--candidate", "regression"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY,PROPERTY,PROPERTY,PROPERTY" {
		t.Fatalf("the regression alone\n%s", cr)
	}
	if cr := r.check("--base", "base", "--candidate", "product"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS,PASS,PASS,PASS" {
		t.Fatalf("product code imported by cmd/tool is not watched\n%s", cr)
	}
	code, out := r.run("check", "--base", "base", "--explain-watch")
	if code != 0 || !strings.Contains(out, "internal/sorttest/*.go") || strings.Contains(out, "internal/cmp") {
		t.Errorf("--explain-watch: exit %d\n%s", code, out)
	}
}

// TestCheckWrappedGoTestNeedsEvidence: go test run through sh -c is go
// (config.FrameworkOfArgv), so its exit 0 needs its own "--- PASS: NAME"
// line (asked for with GOFLAGS=-v): product code that exits 0 before any
// test runs ("ok" from go test) is INCOMPLETE, not PASS; a harmless patch
// passes.
func TestCheckWrappedGoTestNeedsEvidence(t *testing.T) {
	t.Parallel()
	needProgram(t, "go")
	files := goHelperModule()
	files["flakegate.yaml"] = `version: 1
retry_cap: 1
properties:
  - path: sorter/sort_test.go
    name: TestProp1
    seeds: [1]
    run: [sh, -c, "cd sorter && exec go test -count=1 -run '^{name}$' . -args -seed={seed}"]
    wall_budget: 120s
`
	r := newRepo(t, files)
	r.candidate("exits", map[string]string{"sorter/exit.go": "package sorter\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n"})
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr := r.check("--base", "base", "--candidate", "exits")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE" || !strings.Contains(cr.summary.Results[0].Reason, `no "--- PASS: TestProp1" line`) {
		t.Fatalf("product code that exits 0 before the test, through sh -c\n%s", cr)
	}
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Fatalf("a harmless patch\n%s", cr)
	}
}
