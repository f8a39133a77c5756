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

// TestLoadPrepareBounds: the prepare's own disk limit, its allowed
// destinations and the kept layers' bound (top level first, else the
// smallest of the properties', else the default).
func TestLoadPrepareBounds(t *testing.T) {
	raw := `version: 1
prepare:
  run: [pip, install, .]
  network: true
  allow: ["Registry.Internal:4873", "[::1]:8080"]
  limits: {disk: 2GiB}
  keep: 20GiB
properties:
  - path: a.py
    seeds: [1]
    run: [x, "{seed}"]
    wall_budget: 1s
`
	cfg, err := config.Load([]byte(raw), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Prepare
	if p.Disk != 2<<30 || strings.Join(p.Allow, ",") != "registry.internal:4873,[::1]:8080" || cfg.PrepareKeep() != 20<<30 {
		t.Fatalf("prepare %+v, keep %d", p, cfg.PrepareKeep())
	}
	own := strings.Replace(raw, "  keep: 20GiB\n", "", 1) + "    prepare: {run: [make], keep: 3GiB}\n  - path: b.py\n    seeds: [1]\n    run: [x, \"{seed}\"]\n    wall_budget: 1s\n    prepare: {run: [make], keep: 5GiB}\n"
	if cfg, err = config.Load([]byte(own), "flakegate.yaml"); err != nil {
		t.Fatal(err)
	}
	if cfg.PrepareKeep() != 3<<30 || cfg.Properties[0].Prepare.Disk != 0 {
		t.Errorf("keep %d, disk %d", cfg.PrepareKeep(), cfg.Properties[0].Prepare.Disk)
	}
	if cfg, err = config.Load([]byte(strings.Replace(raw, "  keep: 20GiB\n", "", 1)), "flakegate.yaml"); err != nil || cfg.PrepareKeep() != config.DefaultPrepareKeep {
		t.Errorf("default keep: %v %d", err, cfg.PrepareKeep())
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
		{"allow without network", "prepare:\n  run: [make]\n  allow: [pypi.org:443]\n", "", []string{"flakegate.yaml:4", "prepare.allow", "without network: true"}},
		{"allow no port", "prepare:\n  run: [make]\n  network: true\n  allow: [pypi.org]\n", "", []string{"flakegate.yaml:5", "prepare.allow[0]", "host:port"}},
		{"allow bad port", "prepare:\n  run: [make]\n  network: true\n  allow: [\"pypi.org:0\"]\n", "", []string{"flakegate.yaml:5", "prepare.allow[0]", "1 to 65535"}},
		{"allow glob", "prepare:\n  run: [make]\n  network: true\n  allow: [\"*.org:443\"]\n", "", []string{"prepare.allow[0]", "host:port"}},
		{"allow not a list", "prepare:\n  run: [make]\n  network: true\n  allow: pypi.org:443\n", "", []string{"flakegate.yaml:5", "prepare.allow", "list"}},
		{"limits unknown key", "prepare:\n  run: [make]\n  limits: {memory: 1GiB}\n", "", []string{"flakegate.yaml:4", "prepare.limits.memory", "unknown key"}},
		{"disk not a size", "prepare:\n  run: [make]\n  limits: {disk: lots}\n", "", []string{"flakegate.yaml:4", "prepare.limits.disk"}},
		{"disk too small", "prepare:\n  run: [make]\n  limits: {disk: 4KiB}\n", "", []string{"prepare.limits.disk", "below the smallest limit"}},
		{"keep not a size", "prepare:\n  run: [make]\n  keep: forever\n", "", []string{"flakegate.yaml:4", "prepare.keep"}},
		{"property keep too small", "", "    prepare: {run: [make], keep: 10}\n", []string{"properties[0].prepare.keep", "below the smallest limit"}},
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
