// The budget: what the unaffected tests no longer cost is spent on the
// affected ones. Each affected test runs with more order seeds, enough
// that a flake of the target's rate shows with the target's chance, and
// never more than the whole suite once per seed would have cost.

package impact

import (
	"fmt"
	"math"
	"time"
)

// Cost is what a suite costs, measured on the base.
type Cost struct {
	// Seeds is how many order seeds each test runs with without impact
	// (the suite's listed and drawn seeds).
	Seeds int
	// Units are the processes of one run of the suite: a Go package, or
	// the one pytest, vitest or jest process of the suite.
	Units []Unit
	// NewTestRuns is new_test_runs: how many runs each new test gets.
	NewTestRuns int
}

// Unit is one process of a run of the suite.
type Unit struct {
	ID string
	// Start is what a run of it costs besides its tests' own time: the
	// process's start, its (cached) build, the framework's collection.
	Start time.Duration
	Tests []TestCost
}

// TestCost is one test: what a run of it costs, and what impact said.
type TestCost struct {
	ID       string
	Duration time.Duration // one run on the base
	Affected bool          // the change can reach it
	New      bool          // the candidate adds it: it runs NewTestRuns times, with or without impact
}

// Target is the flake the runs of an affected test aim to show.
type Target struct {
	Rate   float64 // a flake that fails this share of runs (1/3)
	Chance float64 // shows in at least this share of checks (0.99)
}

// DefaultTarget is a 1-in-3 flake, shown in 99% of checks: 12 runs.
var DefaultTarget = Target{Rate: 1.0 / 3, Chance: 0.99}

// Plan is how many runs each test gets.
type Plan struct {
	// Runs is how many runs (order seeds) each affected test gets: what
	// the target wants, but never fewer than the suite's seeds nor more
	// than the suite's cost allows; 0 when no test is affected.
	Runs int
	// Extra is how many order seeds beyond the suite's own that is.
	Extra int
	// Want is what the target asks for.
	Want int
	// Cost is what Runs runs of the affected tests cost: per run, the
	// starts of the units that hold one and the affected tests' times.
	Cost time.Duration
	// SuiteCost is the whole suite once per seed (new tests left out:
	// they cost the same either way).
	SuiteCost time.Duration
	// Affected, Unaffected and New count the tests.
	Affected, Unaffected, New int
	// PerTest is the runs of each test by ID: Runs for an affected test,
	// 0 for an unaffected one (its base result stands), NewTestRuns for a
	// new one.
	PerTest map[string]int
}

// Chance is the chance that a flake failing rate of runs shows in an
// affected test's runs: 1 - (1-rate)^Runs.
func (p Plan) Chance(rate float64) float64 {
	if p.Runs == 0 || rate <= 0 {
		return 0
	}
	return 1 - math.Pow(1-rate, float64(p.Runs))
}

// Want is how many runs show a flake of the target's rate with its
// chance: the least n with 1 - (1-Rate)^n >= Chance.
func (t Target) Want() int {
	n := int(math.Ceil(math.Log(1-t.Chance)/math.Log(1-t.Rate) - 1e-9))
	return max(n, 1)
}

// Budget plans the runs of a suite's tests. Bad input (no seed, a
// negative time, a rate or chance outside (0, 1), a test named twice, a
// new test marked affected) is an error.
func Budget(c Cost, target Target) (Plan, error) {
	if err := c.check(target); err != nil {
		return Plan{}, err
	}
	p := Plan{Want: target.Want(), PerTest: map[string]int{}}
	var full, run time.Duration // one run of the whole suite, one run of its affected tests
	for _, u := range c.Units {
		full += u.Start
		reached := false
		for _, t := range u.Tests {
			switch {
			case t.New:
				p.New++
				p.PerTest[t.ID] = c.NewTestRuns
				continue
			case t.Affected:
				p.Affected++
				run += t.Duration
				reached = true
			default:
				p.Unaffected++
				p.PerTest[t.ID] = 0
			}
			full += t.Duration
		}
		if reached {
			run += u.Start
		}
	}
	p.SuiteCost = full * time.Duration(c.Seeds)
	if p.Affected == 0 {
		return p, nil
	}
	p.Runs = p.Want
	if run > 0 {
		afford := int64(p.SuiteCost / run) // >= Seeds: the affected tests are part of the suite
		p.Runs = int(min(int64(p.Want), afford))
	}
	p.Runs = max(p.Runs, c.Seeds)
	p.Extra = p.Runs - c.Seeds
	p.Cost = run * time.Duration(p.Runs)
	for _, u := range c.Units {
		for _, t := range u.Tests {
			if t.Affected {
				p.PerTest[t.ID] = p.Runs
			}
		}
	}
	return p, nil
}

// check refuses what Budget cannot plan.
func (c Cost) check(target Target) error {
	bad := func(format string, args ...any) error {
		return invalid("budget", format, args...)
	}
	if c.Seeds < 1 {
		return bad("a suite runs with at least one seed, not %d", c.Seeds)
	}
	if c.NewTestRuns < 0 {
		return bad("new_test_runs is %d", c.NewTestRuns)
	}
	if !(target.Rate > 0 && target.Rate < 1) || !(target.Chance > 0 && target.Chance < 1) {
		return bad("a target's rate and chance lie between 0 and 1 (rate %v, chance %v)", target.Rate, target.Chance)
	}
	seen := map[string]bool{}
	for _, u := range c.Units {
		if u.Start < 0 {
			return bad("unit %q starts in %v", u.ID, u.Start)
		}
		for _, t := range u.Tests {
			switch {
			case seen[t.ID]:
				return bad("test %q is named twice", t.ID)
			case t.Duration < 0:
				return bad("test %q takes %v", t.ID, t.Duration)
			case t.New && t.Affected:
				return bad("test %q is new, so the base has no result of it to keep or compare: it cannot be affected", t.ID)
			}
			seen[t.ID] = true
		}
	}
	return nil
}

// String says the plan as a summary line can: "3 of 10 tests affected,
// 12 runs each (9 seeds more): a 1-in-3 flake shows in 99.2% of
// checks; 7 unaffected (inputs identical to the base's)".
func (p Plan) String() string {
	if p.Affected == 0 {
		return fmt.Sprintf("no test affected: %d unaffected (inputs identical to the base's)", p.Unaffected)
	}
	return fmt.Sprintf("%d of %d tests affected, %d runs each (%d seeds more): a 1-in-3 flake shows in %.1f%% of checks; %d unaffected (inputs identical to the base's)",
		p.Affected, p.Affected+p.Unaffected, p.Runs, p.Extra, 100*p.Chance(1.0/3), p.Unaffected)
}
