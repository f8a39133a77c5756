package impact_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/flakegate/flakegate/impact"
)

// Example_go is how a check decides a go suite: the listings of both
// trees and the base's test log gathered through runners bound to each
// tree and its sandbox, the trees compared, every package decided, and
// the affected packages given the runs the budget allows.
func Example_go() {
	ctx := context.Background()
	var baseDir, candDir string            // the base's worktree and the graded candidate's
	var runBase, runCand impact.Runner     // each runs an argv in the sandbox, in its tree
	var durations map[string]time.Duration // each package's time in the base's run
	base, err := impact.ListGo(ctx, runBase, "./...")
	if err != nil {
		return // every test is affected
	}
	cand, err := impact.ListGo(ctx, runCand, "./...")
	if err != nil {
		return
	}
	logged, err := runBase(ctx, impact.GoTestlogArgv(base.Packages(), "-shuffle=1"))
	if err != nil {
		return
	}
	reads, _ := impact.ReadGoTestlogs(bytes.NewReader(logged), base)
	trees, err := impact.Compare(ctx, baseDir, candDir)
	if err != nil {
		return
	}
	verdicts, err := impact.Go(impact.GoInput{Trees: trees, Base: base, Candidate: cand, Reads: reads})
	if err != nil {
		return
	}
	cost := impact.Cost{Seeds: 3, NewTestRuns: 5}
	for _, v := range verdicts {
		cost.Units = append(cost.Units, impact.Unit{ID: v.Unit,
			Tests: []impact.TestCost{{ID: v.Unit, Duration: durations[v.Unit], Affected: v.Affected}}})
	}
	plan, err := impact.Budget(cost, impact.DefaultTarget)
	if err != nil {
		return
	}
	fmt.Println(plan)
}
