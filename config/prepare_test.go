package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

func TestLoadPrepare(t *testing.T) {
	raw := `version: 1
prepare:
  run: [pip, install, --no-build-isolation, -e, .]
  budget: 2m
  network: true
properties:
  - path: a.py
    seeds: [1]
    run: [x, "{seed}"]
    wall_budget: 1s
  - path: b_test.go
    seeds: [1]
    run: [go, test, "-run=^TestB$", "-rapid.seed={seed}", .]
    wall_budget: 1s
    prepare: {run: [go, build, ./...]}
`
	cfg, err := config.Load([]byte(raw), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	top := cfg.Prepare
	if top == nil || strings.Join(top.Run, " ") != "pip install --no-build-isolation -e ." || top.Budget != 2*time.Minute || !top.Network {
		t.Fatalf("top-level prepare: %+v", top)
	}
	if cfg.Properties[0].Prepare != top {
		t.Errorf("property 0 does not inherit the top-level prepare")
	}
	own := cfg.Properties[1].Prepare
	if own == nil || strings.Join(own.Run, " ") != "go build ./..." || own.Budget != config.DefaultPrepareBudget || own.Network {
		t.Errorf("property 1's own prepare: %+v", own)
	}
}

func TestLoadPrepareErrors(t *testing.T) {
	base := "version: 1\n%sproperties:\n  - path: a.py\n    seeds: [1]\n    run: [x, \"{seed}\"]\n    wall_budget: 1s\n%s"
	for _, tc := range []struct {
		name, top, prop string
		want            []string
	}{
		{"unknown key", "prepare:\n  run: [make]\n  cache: yes\n", "", []string{"flakegate.yaml:4", "prepare.cache", "unknown key"}},
		{"no run", "prepare:\n  budget: 1m\n", "", []string{"flakegate.yaml:3", "prepare.run", "missing"}},
		{"empty run", "prepare:\n  run: []\n", "", []string{"flakegate.yaml:3", "prepare.run", "empty"}},
		{"empty program", "prepare:\n  run: [\"\"]\n", "", []string{"flakegate.yaml:3", "prepare.run[0]"}},
		{"shell string", "prepare:\n  run: make all\n", "", []string{"flakegate.yaml:3", "prepare.run", "argv"}},
		{"bad budget", "prepare:\n  run: [make]\n  budget: soon\n", "", []string{"flakegate.yaml:4", "prepare.budget", "duration"}},
		{"zero budget", "prepare:\n  run: [make]\n  budget: 0s\n", "", []string{"flakegate.yaml:4", "prepare.budget", "out of range"}},
		{"network not bool", "prepare:\n  run: [make]\n  network: yes please\n", "", []string{"flakegate.yaml:4", "prepare.network", "true or false"}},
		{"placeholder", "prepare:\n  run: [make, \"{seed}\"]\n", "", []string{"flakegate.yaml:3", "prepare.run", "{seed}"}},
		{"not a mapping", "prepare: [make]\n", "", []string{"flakegate.yaml:2", "prepare"}},
		{"property unknown key", "", "    prepare: {run: [make], env: [X]}\n", []string{"flakegate.yaml:7", "properties[0].prepare.env", "unknown key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := strings.Replace(strings.Replace(base, "%s", tc.top, 1), "%s", tc.prop, 1)
			_, err := config.Load([]byte(yaml), "flakegate.yaml")
			if err == nil {
				t.Fatalf("accepted:\n%s", yaml)
			}
			if flakegate.ErrorCode(err) != flakegate.EINVALID {
				t.Errorf("code %s", flakegate.ErrorCode(err))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
