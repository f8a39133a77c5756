package e2e_test

import (
	"strings"
	"testing"
)

// TestDoctorListsSuites: doctor lists each suite in the base tree, in
// the sandbox, and says its test count; a suite whose listing fails is a
// fail line (exit 1).
func TestDoctorListsSuites(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, map[string]string{
		"go.mod":    "module example.com/d\n\ngo 1.21\n",
		"d_test.go": "package d\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n\nfunc TestSlow(t *testing.T) {}\n",
		"flakegate.yaml": "version: 1\nsuites:\n  - path: \"./...\"\n    framework: go\n    seeds: [1, 2]\n    wall_budget: 60s\n    exclude: [\"TestSlow\"]\n" +
			"  - path: ./missing\n    framework: go\n    seeds: [1]\n    wall_budget: 60s\n",
	})
	code, out := r.run("doctor")
	if code != 1 || !strings.Contains(out, "ok   suites: suites[0] (go ./...): the base lists 2 tests (1 excluded): 4 triples with 2 order seeds") ||
		!strings.Contains(out, "fail suites: suites[1] (go ./missing): ") {
		t.Fatalf("doctor: exit %d, want 1, suites[0] listed and suites[1] failing\n%s", code, out)
	}
	// Every count includes the suites: the config line says they are
	// listed below, and a last line adds their triples to the properties'.
	for _, want := range []string{
		"is valid: 0 properties (0 listed triples) and 2 suites, whose tests a check lists on the base (the suites lines below count them)",
		"ok   triples: a check gates 4 listed triples: 0 of the properties, 4 of the suites' 2 tests (not counting suites[1], whose listing failed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q\n%s", want, out)
		}
	}
}
