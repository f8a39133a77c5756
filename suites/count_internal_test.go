package suites

import (
	"errors"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// TestCountAndPlan: doctor's count of a suite (excluded, skipped,
// gated), its line, and check --plan's counts and lines.
func TestCountAndPlan(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./...", Seeds: []flakegate.Seed{"1"}, RandomSeeds: 1, Exclude: []string{"TestX"}}
	l := &List{Tests: []Test{{File: "a_test.go", Name: "TestA"}, {File: "a_test.go", Name: "TestX"}, {File: "a_test.go", Name: "TestS"}},
		Skips: map[string]string{"a_test.go::TestS": "skipped"}}
	c := CountOf(2, s, l, nil)
	if c.Tests != 1 || c.Excluded != 1 || c.Skipped != 1 || c.Seeds != 2 {
		t.Errorf("count %+v", c)
	}
	if got, want := c.Line(), "suites[2] (go ./...): the base lists 1 test (1 excluded, 1 the base skips): 2 triples with 2 order seeds"; got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
	if e := errors.New("listing failed"); CountOf(0, s, nil, e).Err != e {
		t.Error("a failed listing's error is lost")
	}
	cfg := &config.Config{Suites: []config.Suite{*s, {Framework: config.FrameworkPytest, Path: "tests", Seeds: []flakegate.Seed{"1"}}}}
	cfg.Properties = []config.Property{{Name: "own", Suite: &cfg.Suites[0]}, {Name: "a", Suite: &cfg.Suites[0]}, {Name: "b", Suite: &cfg.Suites[1]}, {Name: "c", Suite: &cfg.Suites[1]}}
	plan := Plan(cfg, 1)
	want := []PlanSuite{{Index: 0, Framework: "go", Path: "./...", Tests: 1, Triples: 2}, {Index: 1, Framework: "pytest", Path: "tests", Tests: 2, Triples: 2}}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan %+v", plan)
	}
	lines := PlanLines(plan, "bwrap", "")
	if len(lines) != 2 || lines[1] != "suites: suites[0] (go ./...) 1 test, 2 triples; suites[1] (pytest tests) 2 tests, 2 triples" {
		t.Errorf("lines %q", lines)
	}
	if got := PlanLines(nil, "", "not listed: no sandbox"); len(got) != 1 || got[0] != "suites: not listed: no sandbox; their triples are not counted below (flakegate doctor says what the sandbox needs)" {
		t.Errorf("not listed %q", got)
	}
	if PlanLines(nil, "bwrap", "") != nil {
		t.Error("no suites, lines")
	}
}
