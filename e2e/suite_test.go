package e2e_test

import (
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// impactOff is "impact: false\n" unless extra config lines set impact:
// the fixtures whose tests count every test of a suite on every seed
// turn impact (on by default) off; TestCheckImpact* keep the default.
func impactOff(extra string) string {
	if strings.Contains(extra, "impact:") {
		return ""
	}
	return "impact: false\n"
}

// suiteModule is a Go module of 30 plain tests in three packages (a, b,
// c: TestA00..TestC09, each checking its package's Value), gated by one
// suites: entry and no properties.
func suiteModule(cfgExtra string) map[string]string {
	files := map[string]string{
		"go.mod":    "module example.com/suite\n\ngo 1.21\n",
		"README.md": "suite module\n",
		"flakegate.yaml": `version: 1
retry_cap: 2
flake_probe_runs: 0
` + cfgExtra + impactOff(cfgExtra) + `suites:
  - path: "./..."
    framework: go
    seeds: [1, 2]
    wall_budget: 120s
`,
	}
	for _, pkg := range []string{"a", "b", "c"} {
		files[pkg+"/"+pkg+".go"] = "package " + pkg + "\n\n// Value is i.\nfunc Value(i int) int { return i }\n"
		var tb strings.Builder
		tb.WriteString("package " + pkg + "\n\nimport \"testing\"\n")
		for i := range 10 {
			fmt.Fprintf(&tb, "\nfunc Test%s%02d(t *testing.T) {\n\tif Value(%d) != %d {\n\t\tt.Fatal(\"wrong value\")\n\t}\n}\n", strings.ToUpper(pkg), i, i, i)
		}
		files[pkg+"/"+pkg+"_test.go"] = tb.String()
	}
	return files
}

// suiteLabels maps "name seed" to each result's label.
func suiteLabels(cr *checkRun) map[string]string {
	out := map[string]string{}
	for _, r := range cr.summary.Results {
		out[r.Name+" "+r.Seed.String()] = string(r.Label)
	}
	return out
}

// notPass lists the results that are not PASS, as "name seed LABEL".
func notPass(cr *checkRun) []string {
	if cr.summary == nil {
		return []string{"no summary"}
	}
	var out []string
	for _, r := range cr.summary.Results {
		if r.Label != flakegate.Pass {
			out = append(out, r.Name+" "+r.Seed.String()+" "+string(r.Label))
		}
	}
	slices.Sort(out)
	return out
}

// TestCheckGoSuite: a suite of 30 plain tests is 60 triples (two order
// seeds), one go test process per package and seed. A harmless patch is
// all PASS, exit 0; a regression is PROPERTY for exactly the tests it
// breaks, with each seed; records and results carry the suite and order.
func TestCheckGoSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, suiteModule(""))
	r.candidate("docs", map[string]string{"README.md": "suite module, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if cr.code != 0 || len(cr.summary.Results) != 60 || len(notPass(cr)) != 0 {
		t.Fatalf("harmless: want 60 PASS, exit 0; not pass %v\n%s", notPass(cr), cr)
	}
	for _, res := range cr.summary.Results {
		if res.Suite != "./..." {
			t.Fatalf("result %s has suite %q, want ./...", res.Name, res.Suite)
		}
	}
	rec := cr.record(t, 0)
	if rec.Suite != "./..." || rec.Order == nil || rec.Order.Framework != "go" || rec.Order.Tests != 10 || !slices.Contains(rec.Order.Flags, "-shuffle="+rec.Seed.String()) {
		t.Fatalf("record's suite %q order %+v", rec.Suite, rec.Order)
	}
	if n := strings.Count(cr.stderr, "] batch of 10 (go, seed"); n != 6 {
		t.Errorf("want 6 batches of 10 (3 packages x 2 seeds), got %d:\n%s", n, cr.stderr)
	}

	r.candidate("broken", map[string]string{"b/b.go": "package b\n\n// Value is i, but 3 and 7 are off by one.\nfunc Value(i int) int {\n\tif i == 3 || i == 7 {\n\t\treturn i + 1\n\t}\n\treturn i\n}\n"})
	cr = r.check("--base", "base", "--candidate", "broken")
	want := []string{"TestB03 1 PROPERTY", "TestB03 2 PROPERTY", "TestB07 1 PROPERTY", "TestB07 2 PROPERTY"}
	if cr.code != 1 || !slices.Equal(notPass(cr), want) || len(cr.summary.Results) != 60 {
		t.Fatalf("regression: want exit 1 and %v, got %v\n%s", want, notPass(cr), cr)
	}
}

// runOrder is the order `go test -shuffle=seed -v` runs the tests of pkg
// in, in dir (the host's go, on the base's files).
func runOrder(t *testing.T, dir, pkg, seed string) []string {
	t.Helper()
	cmd := exec.Command("go", "test", "-count=1", "-v", "-shuffle="+seed, pkg)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -shuffle=%s %s: %v\n%s", seed, pkg, err, out)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^=== RUN   (\w+)$`).FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	return names
}

const orderGo = "package ord\n\nvar cache = map[string]int{}\n\n// Prime fills the cache.\nfunc Prime() { cache[\"k\"] = 1 }\n\n// Get reads the cache, or computes the value.\nfunc Get() int {\n\tif v, ok := cache[\"k\"]; ok {\n\t\treturn v\n\t}\n\treturn 1\n}\n"

const orderTest = "package ord\n\nimport \"testing\"\n\nfunc TestPrime(t *testing.T) { Prime() }\n\nfunc TestRead(t *testing.T) {\n\tif Get() != 1 {\n\t\tt.Fatal(\"the cache holds a wrong value\")\n\t}\n}\n\n" +
	"func TestOne(t *testing.T) {}\n\nfunc TestTwo(t *testing.T) {}\n\nfunc TestThree(t *testing.T) {}\n"

// timingGo's Work takes 3 s the first time the candidate's code ever
// runs it (a file in $FG_STATE remembers), a few microseconds after.
const timingGo = `package fl

import (
	"os"
	"path/filepath"
	"time"
)

// Work does the work.
func Work() {
	f := filepath.Join(os.Getenv("FG_STATE"), "timing-first-run")
	if _, err := os.Stat(f); err != nil {
		os.WriteFile(f, nil, 0o666)
		time.Sleep(3 * time.Second)
	}
}
`

const timingTest = `package fl

import (
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	done := make(chan struct{})
	go func() { Work(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Work missed its 1s deadline")
	}
}
`

// TestCheckGoSuiteOrderAndNewTests: on one module of 36 tests and two
// order seeds (which split TestPrime's and TestRead's order),
//   - an order-dependent regression (TestPrime primes a cache wrongly for
//     TestRead) is PROPERTY for exactly the seeds whose order runs
//     TestPrime first, PASS for the others;
//   - a timing-dependent flake (a first run over its deadline) is
//     SCHEDULER;
//   - a patch adding a test in a new file of package a keeps a's base
//     tests graded (PASS, not CONTAMINATED), and the new test runs
//     new_test_runs times ("5 of 5 passed");
//   - a new test that fails 1 run in 5 rejects (reject_flaky_new_tests).
func TestCheckGoSuiteOrderAndNewTests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	files := suiteModule("reject_flaky_new_tests: true\nsandbox:\n  rw: [\"@FG_STATE@\"]\n  env: [FG_STATE]\n")
	files["ord/ord.go"], files["ord/ord_test.go"] = orderGo, orderTest
	files["fl/fl.go"], files["fl/fl_test.go"] = "package fl\n\n// Work does the work.\nfunc Work() {}\n", timingTest
	r := newRepo(t, files)
	seeds := []string{"1", "2"} // the module's seeds: 1 runs TestPrime first, 2 runs TestRead first
	exposed := map[string]bool{}
	for _, s := range seeds {
		order := runOrder(t, r.dir, "./ord", s)
		exposed[s] = slices.Index(order, "TestPrime") < slices.Index(order, "TestRead")
	}
	var wantOrder []string
	for _, s := range seeds {
		if exposed[s] {
			wantOrder = append(wantOrder, "TestRead "+s+" PROPERTY")
		}
	}
	if len(wantOrder) == 0 || len(wantOrder) == len(seeds) {
		t.Fatalf("seeds %v do not split the two orders: %v", seeds, exposed)
	}

	r.candidate("order", map[string]string{"ord/ord.go": strings.Replace(orderGo, `cache["k"] = 1`, `cache["k"] = 2`, 1)})
	cr := r.check("--base", "base", "--candidate", "order")
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, wantOrder) || len(cr.summary.Results) != 36*len(seeds) {
		t.Fatalf("order: want exit 1 and %v, got %v\n%s", wantOrder, got, cr)
	}

	// One check holds two patches that label apart: the timing flake of
	// package fl and a new test file of package a.
	newTest := "package a\n\nimport \"testing\"\n\nfunc TestANew(t *testing.T) {\n\tif Value(42) != 42 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"
	r.candidate("timing-newfile", map[string]string{"fl/fl.go": timingGo,
		"a/a.go": "package a\n\n// Value is i (documented).\nfunc Value(i int) int { return i }\n", "a/new_test.go": newTest})
	cr = r.check("--base", "base", "--candidate", "timing-newfile")
	if got := notPass(cr); cr.code != 0 || !slices.Equal(got, []string{"TestDeadline 1 SCHEDULER"}) || len(cr.summary.Results) != 36*len(seeds) {
		t.Fatalf("timing and new file: want exit 0, [TestDeadline 1 SCHEDULER] and every other base test PASS, got %v\n%s", got, cr)
	}
	nt := cr.summary.NewTests
	if len(nt) != 1 || nt[0].Name != "TestANew" || nt[0].Path != "a/new_test.go" || nt[0].Suite != "./..." || nt[0].Runs != 5 || nt[0].Passed != 5 {
		t.Fatalf("new tests: %+v", nt)
	}
	if !strings.Contains(cr.stderr, "new test a/new_test.go::TestANew: 5 of 5 passed") {
		t.Errorf("no new-test line:\n%s", cr.stderr)
	}

	// A new test file whose init hides a regression is
	// TestCheckGoSuiteNewFileCannotHide's, whole.

	flakyNew := `package c

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestCNew(t *testing.T) {
	f := filepath.Join(os.Getenv("FG_STATE"), "new-test-runs")
	b, _ := os.ReadFile(f)
	n, _ := strconv.Atoi(string(b))
	n++
	os.WriteFile(f, []byte(strconv.Itoa(n)), 0o666)
	if n == 3 {
		t.Fatal("the third run fails")
	}
}
`
	r.candidate("flakynew", map[string]string{"c/new_test.go": flakyNew})
	cr = r.check("--base", "base", "--candidate", "flakynew")
	nt = cr.summary.NewTests
	if cr.code != 1 || cr.summary.Verdict != "reject" || len(notPass(cr)) != 0 || len(nt) != 1 || nt[0].Passed != 4 || nt[0].Runs != 5 || strings.Join(nt[0].Results, ",") != "pass,pass,fail,pass,pass" {
		t.Fatalf("flaky new test: want exit 1, all triples PASS, 4 of 5 passed; got %v %+v\n%s", notPass(cr), nt, cr)
	}
	// With --json stdout is the summary: stderr still says why the exit
	// code is 1 though every triple passed, on its last line.
	lines := strings.Split(strings.TrimRight(cr.stderr, "\n"), "\n")
	if want := "verdict: reject: a new test did not pass every run (reject_flaky_new_tests): c/new_test.go::TestCNew passed 4 of 5 runs (exit 1)"; lines[len(lines)-1] != want {
		t.Errorf("stderr's last line is %q, want %q", lines[len(lines)-1], want)
	}
}

// TestCheckGoSuiteNewFileCannotHide: a patch that breaks Value and adds a
// test file whose init sets it back does not pass: the base's tests run
// on the base's test files over the candidate's code, without the new
// file (check/suite.go), so they fail: PROPERTY. Its own new test runs
// on the candidate's tree, where the init does run, and passes 5 of 5.
// A test that a property names too is gated once, as the property, on
// the same graded tree.
func TestCheckGoSuiteNewFileCannotHide(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, map[string]string{
		"go.mod": "module example.com/hide\n\ngo 1.21\n",
		"a/a.go": "package a\n\n// Value is i.\nfunc Value(i int) int { return i }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif Value(1) != 1 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n\n" +
			"func TestTwo(t *testing.T) {\n\tif Value(2) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
		"flakegate.yaml": "version: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: ./a\n    framework: go\n    seeds: [1]\n    wall_budget: 60s\n" +
			"properties:\n  - path: a/a_test.go\n    name: TestOne\n    seeds: [1]\n    run: [go, test, -count=1, -run, \"^{name}$\", ./a]\n    wall_budget: 60s\n",
	})
	r.candidate("hide", map[string]string{
		"a/a.go":         "package a\n\n// Offset is a regression.\nvar Offset = 1\n\n// Value is i plus Offset.\nfunc Value(i int) int { return i + Offset }\n",
		"a/hide_test.go": "package a\n\nimport \"testing\"\n\nfunc init() { Offset = 0 }\n\nfunc TestHidden(t *testing.T) {\n\tif Value(3) != 3 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
	})
	cr := r.check("--base", "base", "--candidate", "hide")
	// TestOne is a property too: gated once, as the property, which runs
	// on the base's test files of its package as the suite's tests do
	// (the graded tree: the new file is not there, PROPERTY); TestTwo is
	// the suite's, graded without the new file.
	if got, want := notPass(cr), []string{"TestOne 1 PROPERTY", "TestTwo 1 PROPERTY"}; cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("want exit 1 and %v, got %v\n%s", want, got, cr)
	}
	if res := cr.summary.Results; len(res) != 2 || res[0].Name != "TestOne" || res[0].Suite != "" || res[1].Suite != "./a" {
		t.Errorf("want TestOne once, as the property, then TestTwo of suite ./a: %+v", res)
	}
	if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Name != "TestHidden" || nt[0].Passed != 5 {
		t.Errorf("new tests: %+v", nt)
	}
}

// TestCheckGoSuiteBaseSkips: a go suite's test that the base's own run
// skips (t.Skip; the fill runs every go suite once on the base and
// records what it skipped) passes on no tree, so it is not gated: a
// harmless patch exits 0, the check says which test it left out, and
// doctor counts it. A test whose subtest skips is gated as any other. A
// test the candidate's code makes skip is INCOMPLETE, not left out.
func TestCheckGoSuiteBaseSkips(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, map[string]string{
		"go.mod":    "module example.com/skips\n\ngo 1.21\n",
		"README.md": "skips\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
impact: false
suites:
  - path: "./..."
    framework: go
    seeds: [1, 2]
    wall_budget: 120s
`,
		"a/a.go": "package a\n\n// Ready says the package can run.\nfunc Ready() bool { return true }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\n" +
			"func TestRuns(t *testing.T) {\n\tif !Ready() {\n\t\tt.Skip(\"not ready\")\n\t}\n}\n\n" +
			"func TestNeedsDatabase(t *testing.T) {\n\tt.Skip(\"needs a database\")\n}\n\n" +
			"func TestSubSkips(t *testing.T) {\n\tt.Run(\"x\", func(t *testing.T) { t.Skip(\"not this one\") })\n}\n",
	})
	r.candidate("docs", map[string]string{"README.md": "skips, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	want := map[string]string{"TestRuns 1": "PASS", "TestRuns 2": "PASS", "TestSubSkips 1": "PASS", "TestSubSkips 2": "PASS"}
	if got := suiteLabels(cr); cr.code != 0 || !maps.Equal(got, want) {
		t.Fatalf("harmless: want %v, exit 0; got %v\n%s", want, got, cr)
	}
	if !strings.Contains(cr.stderr, `suites[0]: 1 listed test is not gated: the base skips it or expects it to fail, so no run of it passes ("a/a_test.go::TestNeedsDatabase" skipped)`) {
		t.Errorf("the check does not say which test the base skips:\n%s", cr.stderr)
	}
	r.git("checkout", "-q", "--detach", "base") // doctor reads the config at HEAD, and counts with the fill of that commit
	if code, out := r.run("doctor"); !strings.Contains(out, "suites[0] (go ./...): the base lists 2 tests (0 excluded, 1 the base skips): 4 triples with 2 order seeds") {
		t.Errorf("doctor: exit %d, want the count to leave out what the base skips\n%s", code, out)
	}

	r.candidate("unready", map[string]string{"a/a.go": "package a\n\n// Ready says the package can run.\nfunc Ready() bool { return false }\n"})
	cr = r.check("--base", "base", "--candidate", "unready")
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, []string{"TestRuns 1 INCOMPLETE", "TestRuns 2 INCOMPLETE"}) {
		t.Fatalf("a candidate that makes TestRuns skip: want it INCOMPLETE for both seeds, exit 1; got %v\n%s", got, cr)
	}
}
