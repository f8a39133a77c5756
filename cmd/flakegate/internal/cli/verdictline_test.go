package cli

import (
	"testing"

	"github.com/flakegate/flakegate"
)

// TestVerdictLine: the line says which rule made the verdict, for each
// rule SetVerdict applies.
func TestVerdictLine(t *testing.T) {
	pass := flakegate.Result{Label: flakegate.Pass}
	sched := flakegate.Result{Label: flakegate.Scheduler, FlakeOrigin: "new"}
	frozen := flakegate.Result{Label: flakegate.Scheduler, Skipped: true}
	prop := flakegate.Result{Label: flakegate.Property}
	flaky := flakegate.NewTest{Path: "t_test.go", Name: "TestNew", Runs: 5, Passed: 3}
	for _, tc := range []struct {
		name string
		sum  flakegate.Summary
		want string
	}{
		{"pass", flakegate.Summary{Results: []flakegate.Result{pass, pass, sched, frozen}},
			"verdict: pass: 1 SCHEDULER, 2 PASS, 1 SCHEDULER skipped (frozen) (exit 0)"},
		{"labels", flakegate.Summary{Results: []flakegate.Result{pass, prop, prop}},
			"verdict: reject: 2 of 3 triples have a reject label (2 PROPERTY, 1 PASS) (exit 1)"},
		{"new flake", flakegate.Summary{Results: []flakegate.Result{pass, sched}, RejectNewFlakes: true},
			"verdict: reject: 1 SCHEDULER result is a new or unknown flake: this base was never seen failing the seed, so the patch may have introduced it (reject_new_flakes) (exit 1)"},
		{"new test", flakegate.Summary{Results: []flakegate.Result{pass, pass}, NewTests: []flakegate.NewTest{flaky}, RejectFlakyNewTests: true},
			"verdict: reject: a new test did not pass every run (reject_flaky_new_tests): t_test.go::TestNew passed 3 of 5 runs (exit 1)"},
		{"nothing ran", flakegate.Summary{}, "verdict: pass: no triple (exit 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.sum.SetVerdict()
			if got := verdictLine(&tc.sum); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
