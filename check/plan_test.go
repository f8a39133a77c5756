package check_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/check"
	fgconfig "github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/golden"
	"github.com/flakegate/flakegate/plan"
	"github.com/flakegate/flakegate/suites"
)

// TestPlanCost: the jest project, 32 properties of 5 seeds at 14 s
// a process, is 160 triples, 320 processes and about 75 minutes: a
// warning that names the knobs. A grouping of triples into processes
// (batches) changes the processes and the time, not the triples.
func TestPlanCost(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nretry_cap: 2\nflake_probe_runs: 3\nproperties:\n")
	measured := map[string]float64{}
	for i := range 32 {
		fmt.Fprintf(&b, "  - {path: t/p%d.test.js, name: p%d, seeds: [1, 2, 3], random_seeds: 2, run: [node, \"{path}\"], wall_budget: 5m}\n", i, i)
		measured[fmt.Sprintf("t/p%d.test.js::p%d", i, i)] = 14
	}
	cfg, err := fgconfig.Load([]byte(b.String()), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := check.PlanCost(cfg, plan.Timings{Seconds: measured, Source: "flakegate init --measure"}, "")
	if c.Triples != 160 || c.Attempts != 320 || c.Processes != 320 || c.MaxAttempts != 160*7 || c.Seconds != 320*14 || !c.Warn || c.Measured != 32 || c.Unmeasured != 0 {
		t.Fatalf("cost %+v", c)
	}
	text := strings.Join(c.Lines(), "\n")
	for _, want := range []string{"cost: 160 triples; 320 attempts in 320 processes", "estimate: about 1h14m40s when every triple passes (1h14m40s of attempts at 1 worker; from flakegate init --measure)",
		"warning: the estimate is over 10m0s", "seeds or random_seeds", "batches", "exclude"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
	// Without timings, each process counts its wall budget: an upper bound.
	c = check.PlanCost(cfg, plan.Timings{}, "")
	if c.Seconds != 320*300 || c.Measured != 0 || !strings.Contains(strings.Join(c.Lines(), "\n"), "at most") {
		t.Errorf("unmeasured: %+v\n%s", c, strings.Join(c.Lines(), "\n"))
	}
	// One process per property (a batch of its 5 triples).
	old := check.ProcessGroups
	defer func() { check.ProcessGroups = old }()
	check.ProcessGroups = func(_ *fgconfig.Config, ts []plan.Triple) [][]plan.Triple {
		by := map[int][]plan.Triple{}
		var order []int
		for _, tr := range ts {
			if _, ok := by[tr.Property]; !ok {
				order = append(order, tr.Property)
			}
			by[tr.Property] = append(by[tr.Property], tr)
		}
		var out [][]plan.Triple
		for _, p := range order {
			out = append(out, by[p])
		}
		return out
	}
	c = check.PlanCost(cfg, plan.Timings{Seconds: measured, Source: "x"}, "")
	if c.Triples != 160 || c.Attempts != 320 || c.Processes != 64 || c.Seconds != 64*14 {
		t.Errorf("batched: %+v", c)
	}
}

// TestPlanCostAlike: a property without a timing takes the mean of the
// timed ones that run the same program; one running another program
// counts its wall_budget.
func TestPlanCostAlike(t *testing.T) {
	cfg, err := fgconfig.Load([]byte("version: 1\nproperties:\n"+
		"  - {path: a_test.go, name: TestA, seeds: [1], run: [go, test, -run, \"^{name}$\", .], wall_budget: 5m}\n"+
		"  - {path: a_test.go, name: TestB, seeds: [1], run: [go, test, -run, \"^{name}$\", .], wall_budget: 5m}\n"+
		"  - {path: t.py, name: test_c, seeds: [1], run: [python3, -m, pytest, \"{path}::{name}\"], wall_budget: 1m}\n"), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := check.PlanCost(cfg, plan.Timings{Seconds: map[string]float64{"a_test.go::TestA": 4}, Source: "flakegate init"}, "")
	// TestA and TestB share a go test process (a batch, as a check runs
	// them): 2 processes for them (candidate and base), 2 for test_c.
	if c.Measured != 1 || c.Alike != 1 || c.Unmeasured != 1 || c.Processes != 4 || c.Seconds != 2*4+2*60 {
		t.Fatalf("cost %+v", c)
	}
	if l := c.Lines()[1]; !strings.Contains(l, "at most 2m8s") || !strings.Contains(l, "1 property timed (from flakegate init), 1 property estimated from them, 1 property counted at its whole wall_budget") {
		t.Errorf("line %q", l)
	}
}

// TestPlanCostFromACheck: timings a check kept (seconds per process by
// ProcessKey, its setup and fill) make the estimate: a suite's go tests
// take their package's timing, the setup is added, a fill only for a base
// the last check did not fill from, and the replay cache halves the
// attempts (in the estimate itself when the last check was of this base
// and stored its replays). Without any timing the estimate is an upper bound from the
// budgets, said so plainly, with no warning to cut seeds.
func TestPlanCostFromACheck(t *testing.T) {
	cfg, err := fgconfig.Load([]byte("version: 1\nworkers: 2\nsuites:\n  - {path: ./..., framework: go, seeds: [1, 2, 3], wall_budget: 30m}\n"), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := &cfg.Suites[0]
	for i, f := range []string{"a/a_test.go", "a/a_test.go", "b/b_test.go"} {
		cfg.Properties = append(cfg.Properties, fgconfig.Property{Path: f, Name: fmt.Sprintf("Test%d", i), Seeds: st.Seeds,
			WallBudget: st.WallBudget, Suite: st, Framework: "go", Batch: true, Index: i,
			Run: []string{"go", "test", "-shuffle={seed}", "-run", "^{name}$", "./" + f[:1]}})
	}
	none := check.PlanCost(cfg, plan.Timings{}, "b1")
	text := strings.Join(none.Lines(), "\n")
	if !none.UpperBound || none.Warn || !strings.Contains(text, "at most") || !strings.Contains(text, "an upper bound from the wall budgets, not a forecast") || strings.Contains(text, "warning") {
		t.Errorf("unmeasured: %+v\n%s", none, text)
	}
	tm := plan.Timings{Source: "the check of base b1", Seconds: map[string]float64{"suite ./... a": 2, "suite ./... b": 1},
		Check: &plan.CheckTimes{Base: "b1", Setup: 5, Fill: 40, FillBase: "b1"}}
	c := check.PlanCost(cfg, tm, "b1")
	// 2 packages x 3 seeds = 6 groups of 2 processes: (2*2 + 2*1) * 3 = 18 s
	// busy, 9 s at 2 workers; 5 s of setup; no fill (this base is filled).
	if c.UpperBound || c.Measured != 3 || c.Processes != 12 || c.AttemptSeconds != 9 || c.Seconds != 14 || c.FillSeconds != 0 || c.CachedSeconds != 10 {
		t.Errorf("measured: %+v", c)
	}
	if l := c.Lines()[1]; !strings.Contains(l, "estimate: about 14s when every triple passes (9s of attempts at 2 workers, 5s of setup") ||
		!strings.Contains(l, "from the check of base b1") || !strings.Contains(l, "about 10s once the replay cache holds") {
		t.Errorf("line %q", l)
	}
	// The last check of this base stored its replays: the next one runs
	// the candidate's half.
	tm.Check.Replays = true
	c = check.PlanCost(cfg, tm, "b1")
	if !c.ReplaysCached || c.Seconds != 10 || c.UncachedSeconds != 14 ||
		!strings.Contains(c.Lines()[1], "estimate: about 10s when every triple passes (5s of attempts at 2 workers") ||
		!strings.Contains(c.Lines()[1], "the base's replays come from the replay cache (the last check, of this base, stored them): about 14s if they do not") {
		t.Errorf("replays cached: %+v\n%s", c, c.Lines()[1])
	}
	c = check.PlanCost(cfg, tm, "b2")
	if c.FillSeconds != 40 || c.Seconds != 54 || !strings.Contains(c.Lines()[1], "40s to fill the Go build cache from this base") {
		t.Errorf("a new base: %+v\n%s", c, c.Lines()[1])
	}
	// A candidate's process compiles what the patch changed, a base
	// replay's finds it built: each side's own timing counts, and the
	// replay cache takes the base's away.
	tm.Candidate = map[string]float64{"suite ./... a": 3, "suite ./... b": 2}
	tm.Base = map[string]float64{"suite ./... a": 1, "suite ./... b": 0.5}
	c = check.PlanCost(cfg, tm, "b1")
	// (3+1 + 2+0.5) * 3 seeds = 19.5 s busy, 10 s at 2 workers; the
	// candidate's 15 s, 8 s at 2 workers.
	if c.UncachedSeconds != 15 || c.Seconds != 13 || c.CachedSeconds != 13 {
		t.Errorf("sides: %+v", c)
	}
}

// TestPlanLinesGolden: what a person reads of the plan, before anything
// was measured, after init's trial, after a check of this base, and for
// a new base.
func TestPlanLinesGolden(t *testing.T) {
	cfg, err := fgconfig.Load([]byte("version: 1\nworkers: 2\nproperties:\n"+
		"  - {path: t/a_test.go, name: TestA, seeds: [1, 2, 3], random_seeds: 2, run: [go, test, -run, \"^{name}$\", ./t], wall_budget: 5m}\n"+
		"  - {path: t/b.py, name: test_b, seeds: [1, 2, 3], run: [python3, -m, pytest, \"{path}::{name}\"], wall_budget: 1m}\n"), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tc := range []struct {
		name string
		t    plan.Timings
		base string
	}{
		{"nothing measured", plan.Timings{}, "b1"},
		{"after init", plan.Timings{Source: "flakegate init, 2026-12-06 14:00 UTC", Seconds: map[string]float64{"t/a_test.go::TestA": 1.5}}, ""},
		{"after a check of this base", plan.Timings{Source: "the check of base b1, 2026-12-06 14:10 UTC",
			Seconds: map[string]float64{"t/a_test.go::TestA": 1.5, "t/b.py::test_b": 0.8},
			Check:   &plan.CheckTimes{Base: "b1", Setup: 3, Fill: 25, FillBase: "b1", Replays: true}}, "b1"},
		{"a new base", plan.Timings{Source: "the check of base b1, 2026-12-06 14:10 UTC",
			Seconds: map[string]float64{"t/a_test.go::TestA": 1.5, "t/b.py::test_b": 0.8},
			Check:   &plan.CheckTimes{Base: "b1", Setup: 3, Fill: 25, FillBase: "b1", Replays: true}}, "b2"},
	} {
		fmt.Fprintf(&b, "# %s\n%s\n\n", tc.name, strings.Join(check.PlanCost(cfg, tc.t, tc.base).Lines(), "\n"))
	}
	golden.Assert(t, "plan-lines.golden", []byte(b.String()))
}

// TestPlanImpactLine: with impact: true and a suite, the plan says that
// its counts are every test's and what a check runs of them.
func TestPlanImpactLine(t *testing.T) {
	cfg, err := fgconfig.Load([]byte("version: 1\nproperties:\n"+
		"  - {path: t/a_test.go, name: TestA, seeds: [1], run: [go, test, -run, \"^{name}$\", ./t], wall_budget: 5m}\n"), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := check.PlanCost(cfg, plan.Timings{}, "b1")
	c.Impact = true
	if strings.Contains(strings.Join(c.Lines(), "\n"), "impact:") {
		t.Fatalf("impact without a suite: %q", c.Lines())
	}
	c.Suites = []suites.PlanSuite{{Index: 0, Framework: "go", Path: "./...", Tests: 3, Triples: 9}}
	if !slices.Contains(c.Lines(), plan.ImpactLine) {
		t.Fatalf("no impact line: %q", c.Lines())
	}
}
