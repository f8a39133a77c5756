package site

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// TestPrepareFailed: why a prepare failed, check's and replay's alike: a
// sandbox limit before the result, the budget, an exit code, or the
// reason of a prepare that never ran, with secrets redacted; a pass is
// no failure.
func TestPrepareFailed(t *testing.T) {
	iso := &Isolation{Mode: IsolationBwrap, Secrets: []string{"s3cret"}}
	p := &config.Prepare{Run: []string{"make"}, Budget: 90 * time.Second}
	for _, c := range []struct {
		out  attempt.Outcome
		want string
	}{
		{attempt.Outcome{Result: attempt.Pass}, ""},
		{attempt.Outcome{Result: attempt.Fail, ExitCode: 2}, "prepare failed: exit 2: the tail"},
		{attempt.Outcome{Result: attempt.Timeout, ExitCode: -1}, "prepare failed: ran past its budget 1m30s: the tail"},
		{attempt.Outcome{Result: attempt.Pass, Limit: "disk"}, "prepare failed: sandbox disk reached: the tail"},
		{attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Reason: "cannot start make: s3cret"}, "prepare failed: cannot start make: [redacted]: the tail"},
	} {
		if got := iso.PrepareFailed(c.out, p, "the tail"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.out, got, c.want)
		}
	}
}

// TestPrepareTreeNeedsOverlays: without the sandbox on overlays as root
// a prepare fails with its reason, and nothing is built or kept.
func TestPrepareTreeNeedsOverlays(t *testing.T) {
	root := t.TempDir()
	iso := &Isolation{Mode: IsolationNone}
	pt, err := iso.PrepareTree(context.Background(), nil, root, &config.Prepare{Run: []string{"true"}}, "sha", &Tree{Side: "candidate", Dir: t.TempDir()})
	if err != nil || pt.OK || !strings.Contains(pt.Reason, "needs attempts on overlays") || pt.Exit != -1 {
		t.Fatalf("%+v %v", pt, err)
	}
}
