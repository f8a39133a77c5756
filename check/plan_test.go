package check_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/check"
	fgconfig "github.com/flakegate/flakegate/config"
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
	c := check.PlanCost(cfg, measured, "flakegate init --measure")
	if c.Triples != 160 || c.Attempts != 320 || c.Processes != 320 || c.MaxAttempts != 160*7 || c.Seconds != 320*14 || !c.Warn || c.Measured != 32 || c.Unmeasured != 0 {
		t.Fatalf("cost %+v", c)
	}
	text := strings.Join(c.Lines(), "\n")
	for _, want := range []string{"cost: 160 triples; 320 attempts in 320 processes", "estimate: about 1h14m40s when every triple passes (from flakegate init --measure)",
		"warning: the estimate is over 10m0s", "seeds or random_seeds", "batches", "exclude"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
	// Without timings, each process counts its wall budget: an upper bound.
	c = check.PlanCost(cfg, nil, "")
	if c.Seconds != 320*300 || c.Measured != 0 || !strings.Contains(strings.Join(c.Lines(), "\n"), "at most") {
		t.Errorf("unmeasured: %+v\n%s", c, strings.Join(c.Lines(), "\n"))
	}
	// One process per property (a batch of its 5 triples).
	old := check.ProcessGroups
	defer func() { check.ProcessGroups = old }()
	check.ProcessGroups = func(_ *fgconfig.Config, ts []check.PlanTriple) [][]check.PlanTriple {
		by := map[int][]check.PlanTriple{}
		var order []int
		for _, tr := range ts {
			if _, ok := by[tr.Property]; !ok {
				order = append(order, tr.Property)
			}
			by[tr.Property] = append(by[tr.Property], tr)
		}
		var out [][]check.PlanTriple
		for _, p := range order {
			out = append(out, by[p])
		}
		return out
	}
	c = check.PlanCost(cfg, measured, "x")
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
	c := check.PlanCost(cfg, map[string]float64{"a_test.go::TestA": 4}, "flakegate init")
	// TestA and TestB share a go test process (a batch, as a check runs
	// them): 2 processes for them (candidate and base), 2 for test_c.
	if c.Measured != 1 || c.Alike != 1 || c.Unmeasured != 1 || c.Processes != 4 || c.Seconds != 2*4+2*60 {
		t.Fatalf("cost %+v", c)
	}
	if l := c.Lines()[1]; !strings.Contains(l, "at most 2m8s") || !strings.Contains(l, "1 property timed (from flakegate init), 1 property estimated from them, 1 property counted at their wall_budget") {
		t.Errorf("line %q", l)
	}
}
