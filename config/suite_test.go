package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadSuites(t *testing.T) {
	cfg, err := Load([]byte(`version: 1
new_test_runs: 7
reject_flaky_new_tests: true
impact: true
suites:
  - path: "./..."
    framework: go
    seeds: [1, 2, 3]
    wall_budget: 5m
    exclude: ["TestSlow*"]
    fixture: "testdata/**"
  - path: tests
    framework: pytest
    random_seeds: 2
    wall_budget: 60
    pythonpath: [src, "./lib/"]
  - path: ./web/
    framework: vitest
    seeds: [4]
    wall_budget: 2m
  - path: "."
    framework: jest
    seeds: [5, 6]
    wall_budget: 2m
`), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Properties) != 0 || len(cfg.Suites) != 4 || cfg.NewTestRuns != 7 || !cfg.RejectFlakyNewTests || !cfg.Impact {
		t.Fatalf("got %+v", cfg)
	}
	g := cfg.Suites[0]
	if g.Path != "./..." || g.Framework != "go" || len(g.Seeds) != 3 || g.WallBudget != 5*time.Minute || g.FixtureRoot != "testdata" || !g.Excluded("TestSlowDisk") || g.Excluded("TestFast") {
		t.Fatalf("go suite: %+v", g)
	}
	if p := cfg.Suites[1]; p.Path != "tests" || p.RandomSeeds != 2 || p.Index != 1 || strings.Join(p.PythonPath, ",") != "src,lib" {
		t.Fatalf("pytest suite: %+v", p)
	}
	if v, j := cfg.Suites[2], cfg.Suites[3]; v.Path != "web" || v.Framework != "vitest" || j.Path != "." || j.Framework != "jest" || len(j.Seeds) != 2 {
		t.Fatalf("js suites: %+v %+v", v, j)
	}
	def, err := Load([]byte("version: 1\nsuites: [{path: ./p, framework: go, seeds: [1], wall_budget: 1m}]\n"), "f.yaml")
	if err != nil || def.NewTestRuns != DefaultNewTestRuns || def.RejectFlakyNewTests || !def.Impact {
		t.Fatalf("defaults: %+v %v", def, err)
	}
}

func TestLoadSuiteErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"suites: []", "suites: empty"},
		{"suites: [{path: ./..., framework: go, wall_budget: 1m}]", "suites[0].seeds: missing"},
		{"suites: [{path: ./..., framework: go, seeds: [\"a\"], wall_budget: 1m}]", "want an integer"},
		{"suites: [{path: ./..., framework: go, seeds: [99999999999999999999], wall_budget: 1m}]", "fits in 64 bits"},
		{"suites: [{path: /abs, framework: go, seeds: [1], wall_budget: 1m}]", "package pattern"},
		{"suites: [{path: ./../x, framework: go, seeds: [1], wall_budget: 1m}]", "not a package pattern"},
		{"suites: [{path: ./..., framework: mocha, seeds: [1], wall_budget: 1m}]", "not a suite framework"},
		{"suites: [{path: ../web, framework: vitest, seeds: [1], wall_budget: 1m}]", "suites[0].path"},
		{"suites: [{path: ., framework: jest, seeds: [1.5], wall_budget: 1m}]", "want an integer"},
		{"suites: [{path: ., framework: jest, seeds: [2147483648], wall_budget: 1m}]", "from -2147483648 to 2147483647"},
		{"suites: [{path: ./..., framework: go, seeds: [1]}]", "wall_budget: missing"},
		{"suites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m, fixture: \"**/x\"}]", "starts with a wildcard"},
		{"suites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m, exclude: [\"[\"]}]", "not a name pattern"},
		{"suites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m, shuffle: on}]", "shuffle"},
		{"suites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m}, {path: ./..., framework: go, seeds: [2], wall_budget: 1m}]", "list each suite once"},
		{"new_test_runs: 0\nsuites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m}]", "new_test_runs"},
		{"reject_flaky_new_tests: yes please\nsuites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m}]", "reject_flaky_new_tests"},
		{"new_test_runs: 3", "properties: missing"},
		{"impact: sometimes\nsuites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m}]", "impact"},
		{"suites: [{path: ./..., framework: go, seeds: [1], wall_budget: 1m, pythonpath: [src]}]", "only a pytest suite takes pythonpath"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: []}]", "pythonpath: empty"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: [../up]}]", "climbs out of the repository"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: [/abs]}]", "is absolute"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: [\"a:b\"]}]", "holds a ':'"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: [src, ./src]}]", "listed twice"},
		{"suites: [{path: tests, framework: pytest, seeds: [1], wall_budget: 1m, pythonpath: src}]", "suites[0].pythonpath"},
	} {
		_, err := Load([]byte("version: 1\n"+c.yaml+"\n"), "f.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.yaml, err, c.want)
		}
	}
}
