package check_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

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
` + cfgExtra + `suites:
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
