// Per-test reports of a batch: one process ran many tests, and each
// test's result is read from the framework's own structured report
// (go test -json, pytest's JUnit XML), never from free text alone.

package evidence

import (
	"strconv"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// TestReport is what a batch's report says of one test.
type TestReport struct {
	// Result is attempt.Pass or attempt.Fail when the report gives exactly
	// one result for the test, attempt.Errored when it gives none that can
	// be trusted (Reason says why), "" when the test never started.
	Result string
	// Started is set when the report shows the test began (a run event),
	// Ended when it shows its result.
	Started, Ended bool
	// Elapsed is the test's own time, as the framework measured it.
	Elapsed time.Duration
	// Output is the test's own output, clipped to its last
	// attempt.DefaultTailBytes.
	Output string
	// Evidence is what the framework's own report carries from the
	// test's body besides its output, where it carries any: pytest's
	// recorded properties (record_property, "name=value" lines),
	// vitest's task meta (its JSON), jest's count of passing assertions
	// ("asserts=N"). A known answer's nonce is looked for in Output and
	// Evidence (batch/known.go).
	Evidence string
	Reason   string
	// Rerun is set when the test did not run because of another member
	// (pytest ends a whole session for one node it cannot find): it runs
	// again in a batch without that member.
	Rerun bool
}

// twice is the reason of a test reported more than once: the code under
// test can print a framework's result line, so a second report is a
// forgery or a framework fault, and never a pass.
func twice(what string, n int) string {
	return what + " is reported " + strconv.Itoa(n) + " times in the batch's report: a test's output may have forged one (never a pass)"
}

// tail keeps the last attempt.DefaultTailBytes of b.
func tail(b []byte) string {
	if len(b) > attempt.DefaultTailBytes {
		b = b[len(b)-attempt.DefaultTailBytes:]
	}
	return string(b)
}
