package impact_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/flakegate/flakegate/impact"
)

// goSuite is a Go suite of n packages of one test each, each taking d,
// the first affected of them affected.
func goSuite(seeds, n, affected int, d time.Duration) impact.Cost {
	c := impact.Cost{Seeds: seeds, NewTestRuns: 5}
	for i := range n {
		c.Units = append(c.Units, impact.Unit{ID: fmt.Sprintf("./p%d", i),
			Tests: []impact.TestCost{{ID: fmt.Sprintf("p%d.TestF", i), Duration: d, Affected: i < affected}}})
	}
	return c
}

func TestBudget(t *testing.T) {
	type testCase struct {
		name                 string
		cost                 impact.Cost
		target               impact.Target
		runs, extra          int
		cost100              int // Cost as a share of SuiteCost, in hundredths
		chance               float64
		affected, unaffected int
	}
	run := func(t *testing.T, tc testCase) {
		p, err := impact.Budget(tc.cost, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if p.Runs != tc.runs || p.Extra != tc.extra || p.Affected != tc.affected || p.Unaffected != tc.unaffected {
			t.Errorf("runs %d (extra %d), affected %d, unaffected %d; want %d (%d), %d, %d", p.Runs, p.Extra, p.Affected, p.Unaffected,
				tc.runs, tc.extra, tc.affected, tc.unaffected)
		}
		if got := int(math.Round(100 * float64(p.Cost) / float64(p.SuiteCost))); got != tc.cost100 {
			t.Errorf("cost %v of %v (%d%%), want %d%%", p.Cost, p.SuiteCost, got, tc.cost100)
		}
		if got := p.Chance(1.0 / 3); math.Abs(got-tc.chance) > 0.0005 {
			t.Errorf("chance of a 1-in-3 flake %.4f, want %.4f", got, tc.chance)
		}
		for _, u := range tc.cost.Units {
			for _, x := range u.Tests {
				want := 0
				switch {
				case x.New:
					want = tc.cost.NewTestRuns
				case x.Affected:
					want = tc.runs
				}
				if p.PerTest[x.ID] != want {
					t.Errorf("%s gets %d runs, want %d", x.ID, p.PerTest[x.ID], want)
				}
			}
		}
	}
	pytest := impact.Cost{Seeds: 3, NewTestRuns: 5, Units: []impact.Unit{{ID: "tests", Start: 2 * time.Second}}}
	for i := range 10 {
		pytest.Units[0].Tests = append(pytest.Units[0].Tests, impact.TestCost{ID: fmt.Sprintf("t%d", i), Duration: 100 * time.Millisecond, Affected: i == 0})
	}
	pytest.Units[0].Tests = append(pytest.Units[0].Tests, impact.TestCost{ID: "new", Duration: time.Second, New: true})
	for _, tc := range []testCase{
		// 3 seeds of 10 packages is 30 package runs; 12 runs of one is 0.4 of that.
		{name: "one package of ten", cost: goSuite(3, 10, 1, 500*time.Millisecond), target: impact.DefaultTarget,
			runs: 12, extra: 9, cost100: 40, chance: 1 - math.Pow(2.0/3, 12), affected: 1, unaffected: 9},
		{name: "four packages of ten: the suite's cost allows 7 runs", cost: goSuite(3, 10, 4, 500*time.Millisecond), target: impact.DefaultTarget,
			runs: 7, extra: 4, cost100: 93, chance: 1 - math.Pow(2.0/3, 7), affected: 4, unaffected: 6},
		{name: "every package", cost: goSuite(3, 10, 10, 500*time.Millisecond), target: impact.DefaultTarget,
			runs: 3, extra: 0, cost100: 100, chance: 1 - math.Pow(2.0/3, 3), affected: 10, unaffected: 0},
		{name: "none", cost: goSuite(3, 10, 0, 500*time.Millisecond), target: impact.DefaultTarget,
			runs: 0, cost100: 0, chance: 0, affected: 0, unaffected: 10},
		{name: "more seeds than the target wants", cost: goSuite(20, 10, 1, 500*time.Millisecond), target: impact.DefaultTarget,
			runs: 20, extra: 0, cost100: 10, chance: 1 - math.Pow(2.0/3, 20), affected: 1, unaffected: 9},
		{name: "a rarer flake wants more runs", cost: goSuite(3, 100, 1, 500*time.Millisecond), target: impact.Target{Rate: 0.1, Chance: 0.99},
			runs: 44, extra: 41, cost100: 15, chance: 1 - math.Pow(2.0/3, 44), affected: 1, unaffected: 99},
		// One pytest process of 2 s and ten tests of 0.1 s: 9 s for 3 seeds; a run of one test costs 2.1 s.
		{name: "a process's start counts", cost: pytest, target: impact.DefaultTarget,
			runs: 4, extra: 1, cost100: 93, chance: 1 - math.Pow(2.0/3, 4), affected: 1, unaffected: 9},
		{name: "times not measured", cost: goSuite(3, 10, 1, 0), target: impact.DefaultTarget,
			runs: 12, extra: 9, cost100: 0, chance: 1 - math.Pow(2.0/3, 12), affected: 1, unaffected: 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cost100 == 0 && tc.name == "times not measured" {
				// Cost and SuiteCost are both 0: the share is NaN.
				p, err := impact.Budget(tc.cost, tc.target)
				if err != nil || p.Runs != tc.runs || p.Cost != 0 || p.SuiteCost != 0 {
					t.Fatalf("%+v, %v", p, err)
				}
				return
			}
			run(t, tc)
		})
	}
}

func TestBudgetRefusesBadInput(t *testing.T) {
	ok := goSuite(3, 2, 1, time.Second)
	for _, tc := range []struct {
		name   string
		edit   func(c *impact.Cost, t *impact.Target)
		reason string
	}{
		{"no seed", func(c *impact.Cost, _ *impact.Target) { c.Seeds = 0 }, "at least one seed"},
		{"a negative time", func(c *impact.Cost, _ *impact.Target) { c.Units[0].Tests[0].Duration = -1 }, "takes"},
		{"a negative start", func(c *impact.Cost, _ *impact.Target) { c.Units[0].Start = -1 }, "starts in"},
		{"a rate of 1", func(_ *impact.Cost, t *impact.Target) { t.Rate = 1 }, "between 0 and 1"},
		{"a chance of 0", func(_ *impact.Cost, t *impact.Target) { t.Chance = 0 }, "between 0 and 1"},
		{"a NaN rate", func(_ *impact.Cost, t *impact.Target) { t.Rate = math.NaN() }, "between 0 and 1"},
		{"a test named twice", func(c *impact.Cost, _ *impact.Target) { c.Units[1].Tests[0].ID = c.Units[0].Tests[0].ID }, "named twice"},
		{"a new test affected", func(c *impact.Cost, _ *impact.Target) { c.Units[0].Tests[0].New = true }, "is new"},
		{"negative new_test_runs", func(c *impact.Cost, _ *impact.Target) { c.NewTestRuns = -1 }, "new_test_runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.Units = []impact.Unit{{ID: ok.Units[0].ID, Tests: append([]impact.TestCost(nil), ok.Units[0].Tests...)},
				{ID: ok.Units[1].ID, Tests: append([]impact.TestCost(nil), ok.Units[1].Tests...)}}
			target := impact.DefaultTarget
			tc.edit(&c, &target)
			_, err := impact.Budget(c, target)
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %v, want one saying %q", err, tc.reason)
			}
		})
	}
}

func TestTargetWant(t *testing.T) {
	for _, tc := range []struct {
		target impact.Target
		want   int
	}{
		{impact.DefaultTarget, 12}, // (2/3)^12 < 0.8%, (2/3)^11 > 1%
		{impact.Target{Rate: 0.5, Chance: 0.75}, 2},
		{impact.Target{Rate: 0.5, Chance: 0.5}, 1},
		{impact.Target{Rate: 0.9, Chance: 0.01}, 1},
		{impact.Target{Rate: 0.1, Chance: 0.99}, 44},
	} {
		if got := tc.target.Want(); got != tc.want {
			t.Errorf("%+v wants %d runs, not %d", tc.target, tc.want, got)
		}
	}
}

// genCost draws a suite: up to 6 units of up to 6 tests, some affected,
// some new.
func genCost(t *rapid.T) impact.Cost {
	c := impact.Cost{Seeds: rapid.IntRange(1, 12).Draw(t, "seeds"), NewTestRuns: rapid.IntRange(0, 10).Draw(t, "newRuns")}
	units := rapid.IntRange(1, 6).Draw(t, "units")
	for u := range units {
		unit := impact.Unit{ID: fmt.Sprint("u", u), Start: time.Duration(rapid.IntRange(0, 5000).Draw(t, "start")) * time.Millisecond}
		for k := range rapid.IntRange(0, 6).Draw(t, "tests") {
			tc := impact.TestCost{ID: fmt.Sprint("u", u, "t", k), Duration: time.Duration(rapid.IntRange(0, 3000).Draw(t, "d")) * time.Millisecond}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 1:
				tc.Affected = true
			case 2:
				tc.New = true
			}
			unit.Tests = append(unit.Tests, tc)
		}
		c.Units = append(c.Units, unit)
	}
	return c
}

func genTarget(t *rapid.T) impact.Target {
	return impact.Target{Rate: rapid.Float64Range(0.01, 0.9).Draw(t, "rate"), Chance: rapid.Float64Range(0.5, 0.999).Draw(t, "chance")}
}

// TestBudgetProperties: the plan never costs more than the suite once
// per seed; an affected test gets at least the suite's seeds, and what
// the target wants whenever the suite's cost allows that many; an
// unaffected test gets none, a new one new_test_runs; and the runs only
// grow with more budget and only shrink with more affected tests or a
// more frequent flake.
func TestBudgetProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, target := genCost(t), genTarget(t)
		p, err := impact.Budget(c, target)
		if err != nil {
			t.Fatal(err)
		}
		if p.Cost > p.SuiteCost {
			t.Fatalf("the plan costs %v, the suite %v", p.Cost, p.SuiteCost)
		}
		perRun := time.Duration(0)
		if p.Runs > 0 {
			perRun = p.Cost / time.Duration(p.Runs)
		}
		if p.Affected > 0 {
			if p.Runs < c.Seeds {
				t.Fatalf("%d runs, fewer than the %d seeds", p.Runs, c.Seeds)
			}
			if time.Duration(p.Want)*perRun <= p.SuiteCost && p.Runs < p.Want {
				t.Fatalf("the suite's cost %v allows %d runs of %v, the plan gives %d", p.SuiteCost, p.Want, perRun, p.Runs)
			}
			if p.Runs >= p.Want && p.Chance(target.Rate) < target.Chance {
				t.Fatalf("%d runs show a %v flake with chance %v < %v", p.Runs, target.Rate, p.Chance(target.Rate), target.Chance)
			}
		} else if p.Runs != 0 {
			t.Fatalf("no affected test, %d runs", p.Runs)
		}
		for _, u := range c.Units {
			for _, x := range u.Tests {
				want := map[bool]int{true: p.Runs, false: 0}[x.Affected]
				if x.New {
					want = c.NewTestRuns
				}
				if got, ok := p.PerTest[x.ID]; !ok || got != want {
					t.Fatalf("%s (affected %v, new %v) gets %d runs, want %d", x.ID, x.Affected, x.New, got, want)
				}
			}
		}
		checkMonotonic(t, c, target, p)
	})
}

// checkMonotonic changes one thing of c and compares the runs.
func checkMonotonic(t *rapid.T, c impact.Cost, target impact.Target, p impact.Plan) {
	runs := func(c impact.Cost, target impact.Target) int {
		q, err := impact.Budget(c, target)
		if err != nil {
			t.Fatal(err)
		}
		return q.Runs
	}
	clone := func() impact.Cost {
		d := c
		d.Units = nil
		for _, u := range c.Units {
			d.Units = append(d.Units, impact.Unit{ID: u.ID, Start: u.Start, Tests: append([]impact.TestCost(nil), u.Tests...)})
		}
		return d
	}
	more := clone()
	more.Seeds++
	if r := runs(more, target); p.Affected > 0 && r < p.Runs {
		t.Fatalf("one more seed: %d runs, fewer than %d", r, p.Runs)
	}
	frequent := target
	frequent.Rate = math.Min(0.95, target.Rate*1.5)
	if r := runs(c, frequent); r > p.Runs {
		t.Fatalf("a more frequent flake (%v): %d runs, more than %d", frequent.Rate, r, p.Runs)
	}
	for ui, u := range c.Units {
		for ti, x := range u.Tests {
			if x.Affected || x.New {
				continue
			}
			reach := clone()
			reach.Units[ui].Tests[ti].Affected = true
			if r := runs(reach, target); p.Affected > 0 && r > p.Runs {
				t.Fatalf("%s affected too: %d runs, more than %d", x.ID, r, p.Runs)
			}
			longer := clone()
			longer.Units[ui].Tests[ti].Duration += time.Second
			if r := runs(longer, target); r < p.Runs {
				t.Fatalf("%s unaffected and longer: %d runs, fewer than %d", x.ID, r, p.Runs)
			}
			return
		}
	}
}
