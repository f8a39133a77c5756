package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
)

// printVerdictLine writes the verdict and its one-line reason on stderr,
// last, in every output mode: with --json stdout is the summary, and a
// log that shows only stderr must still say why the exit code is 1.
func printVerdictLine(w io.Writer, sum *flakegate.Summary) {
	fmt.Fprintln(w, termsafe.Line(verdictLine(sum)))
}

// labelCounts is each label's count, "36 PASS", in the table's order.
func labelCounts(labels map[flakegate.Label]int) []string {
	var out []string
	for _, l := range flakegate.Labels {
		if n := labels[l]; n > 0 {
			out = append(out, fmt.Sprintf("%d %s", n, l))
		}
	}
	return out
}

// verdictLine is "verdict: reject: WHY (exit 1)" or "verdict: pass: WHAT
// (exit 0)": each rule that made the verdict, in the order SetVerdict
// applies them.
func verdictLine(sum *flakegate.Summary) string {
	labels := map[flakegate.Label]int{}
	frozen, rejects := 0, 0
	for _, r := range sum.Results {
		switch {
		case r.Skipped:
			frozen++
		default:
			labels[r.Label]++
			if r.Label.Reject() {
				rejects++
			}
		}
	}
	counts := labelCounts(labels)
	if frozen > 0 {
		counts = append(counts, fmt.Sprintf("%d SCHEDULER skipped (frozen)", frozen))
	}
	if len(counts) == 0 {
		counts = append(counts, "no triple")
	}
	if sum.Verdict != flakegate.VerdictReject {
		line := "verdict: pass: " + strings.Join(counts, ", ")
		if n := len(sum.NewTests); n > 0 {
			line += fmt.Sprintf("; %d new %s passed every run", n, plural(n, "test", "tests"))
		}
		return line + " (exit 0)"
	}
	var why []string
	if rejects > 0 {
		why = append(why, fmt.Sprintf("%d of %d %s a reject label (%s)", rejects, len(sum.Results), plural(rejects, "triple has", "triples have"), strings.Join(counts, ", ")))
	}
	if n := sum.NewFlakes(); n > 0 && sum.RejectNewFlakes {
		why = append(why, fmt.Sprintf("%d SCHEDULER %s a new or unknown flake: this base was never seen failing the seed, so the patch may have introduced it (reject_new_flakes)",
			n, plural(n, "result is", "results are")))
	}
	if sum.RejectFlakyNewTests {
		var flaky []string
		for _, t := range sum.NewTests {
			if t.Flaky() {
				flaky = append(flaky, fmt.Sprintf("%s passed %d of %d runs", t.Path+"::"+t.Name, t.Passed, t.Runs))
			}
		}
		if len(flaky) > 3 {
			flaky = append(flaky[:3], fmt.Sprintf("and %d more", len(flaky)-3))
		}
		if len(flaky) > 0 {
			why = append(why, "a new test did not pass every run (reject_flaky_new_tests): "+strings.Join(flaky, ", "))
		}
	}
	if len(why) == 0 {
		why = append(why, strings.Join(counts, ", "))
	}
	return "verdict: reject: " + strings.Join(why, "; ") + " (exit 1)"
}
