package config_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/template"
)

const good = `version: 1
retry_cap: 3
workers: 2
freeze:
  expires_after_runs: 5
properties:
  - path: ./tests/props//test_retry.py
    fixture: tests/fixtures/retry/
    generator: tools/gen.py
    seeds: [1400, 1401, "1402", nightly-3, 123456789012345678901234567890]
    run: ["pytest", "-q", "{path}", "--hypothesis-seed={seed}", "-n", 4]
    wall_budget: 1m30s
    samples: 200
  - path: props/prop_test.go
    fixture: testdata/corpus.bin
    seeds: [7]
    run: [go, test, ./props, "-rapid.seed={seed}"]
    wall_budget: 20
`

func TestLoadGood(t *testing.T) {
	cfg, err := config.Load([]byte(good), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryCap != 3 || cfg.Workers != 2 || cfg.Freeze.ExpiresAfterRuns != 5 || cfg.Version != 1 {
		t.Errorf("top level = %+v", cfg)
	}
	p := cfg.Properties[0]
	if p.Path != "tests/props/test_retry.py" || p.Fixture != "tests/fixtures/retry" || p.Generator != "tools/gen.py" {
		t.Errorf("paths not cleaned: %+v", p)
	}
	wantSeeds := []flakegate.Seed{"1400", "1401", `"1402"`, `"nightly-3"`, "123456789012345678901234567890"}
	if len(p.Seeds) != len(wantSeeds) {
		t.Fatalf("seeds = %v", p.Seeds)
	}
	for i := range wantSeeds {
		if p.Seeds[i] != wantSeeds[i] {
			t.Errorf("seed %d = %s, want %s", i, p.Seeds[i], wantSeeds[i])
		}
	}
	if got := strings.Join(p.Run, " "); got != "pytest -q {path} --hypothesis-seed={seed} -n 4" {
		t.Errorf("run = %q", got)
	}
	if p.WallBudget != 90*time.Second || p.Samples != 200 {
		t.Errorf("budget/samples = %v/%d", p.WallBudget, p.Samples)
	}
	q := cfg.Properties[1]
	if q.WallBudget != 20*time.Second || q.Samples != 0 || q.Generator != "" {
		t.Errorf("second property = %+v", q)
	}
	if cfg.Triples() != 6 {
		t.Errorf("Triples() = %d", cfg.Triples())
	}
}

func TestLoadDefaults(t *testing.T) {
	cfg, err := config.Load([]byte("version: 1\nproperties:\n  - {path: a.py, fixture: f, seeds: [1], run: [x], wall_budget: 1s}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryCap != config.DefaultRetryCap || cfg.Workers != config.DefaultWorkers || cfg.Freeze.ExpiresAfterRuns != config.DefaultExpiresAfterRuns || cfg.Name != config.DefaultPath {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestLoadErrors(t *testing.T) {
	type testCase struct {
		name string
		yaml string
		want []string // substrings of the error text
	}
	prop := func(extra string) string {
		return "version: 1\nproperties:\n  - path: a.py\n    fixture: f\n    seeds: [1]\n    run: [x, \"{seed}\"]\n    wall_budget: 1s\n" + extra
	}
	swap := func(old, new string) string { return strings.Replace(prop(""), old, new, 1) }
	run := func(t *testing.T, tc testCase) {
		_, err := config.Load([]byte(tc.yaml), "ci/flakegate.yaml")
		if err == nil {
			t.Fatalf("Load accepted:\n%s", tc.yaml)
		}
		if code := flakegate.ErrorCode(err); code != flakegate.EINVALID {
			t.Errorf("code = %q, want %q", code, flakegate.EINVALID)
		}
		msg := err.Error()
		for _, w := range append([]string{"ci/flakegate.yaml"}, tc.want...) {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q does not mention %q", msg, w)
			}
		}
	}
	tests := []testCase{
		{"empty", "", []string{"empty"}},
		{"not a mapping", "- 1\n", []string{"want a mapping"}},
		{"two documents", prop("") + "---\n" + prop(""), []string{"documents"}},
		{"bad yaml", "version: [1\n", []string{"ci/flakegate.yaml"}},
		{"missing version", "properties: []\n", []string{"version", "missing"}},
		{"version 2", strings.Replace(prop(""), "version: 1", "version: 2", 1), []string{"version", "out of range"}},
		{"version string", strings.Replace(prop(""), "version: 1", `version: "1"`, 1), []string{"version", "want an integer"}},
		{"unknown top key", prop("retries: 3\n"), []string{"retries", "unknown key"}},
		{"duplicate top key", prop("version: 1\n"), []string{"version"}},
		{"retry_cap float", prop("retry_cap: 2.0\n"), []string{"retry_cap", "a float"}},
		{"retry_cap bool", prop("retry_cap: true\n"), []string{"retry_cap", "a boolean"}},
		{"retry_cap negative", prop("retry_cap: -1\n"), []string{"retry_cap", "out of range"}},
		{"retry_cap hex", prop("retry_cap: 0x2\n"), []string{"retry_cap", "decimal"}},
		{"workers zero", prop("workers: 0\n"), []string{"workers", "out of range"}},
		{"workers null", prop("workers:\n"), []string{"workers", "no value"}},
		{"freeze unknown key", prop("freeze: {expires: 3}\n"), []string{"freeze.expires", "unknown key"}},
		{"freeze too long", prop("freeze: {expires_after_runs: 1000}\n"), []string{"freeze.expires_after_runs", "out of range"}},
		{"freeze not a mapping", prop("freeze: 3\n"), []string{"freeze", "want a mapping"}},
		{"properties empty", "version: 1\nproperties: []\n", []string{"properties", "empty"}},
		{"properties not a list", "version: 1\nproperties: {}\n", []string{"properties", "want a list"}},
		{"property unknown key", swap("    wall_budget: 1s\n", "    wall_budget: 1s\n    timeout: 3s\n"), []string{"properties[0].timeout", "unknown key"}},
		{"property duplicate key", swap("    wall_budget: 1s\n", "    wall_budget: 1s\n    path: b.py\n"), []string{"ci/flakegate.yaml:8", "\"path\" already defined"}},
		{"path missing", swap("  - path: a.py\n    fixture", "  - fixture"), []string{"properties[0].path", "missing"}},
		{"fixture missing but used", strings.Replace(swap("    fixture: f\n", ""), "{seed}", "{fixture}", 1), []string{"properties[0].fixture", "run uses {fixture}"}},
		{"name missing but used", swap(`run: [x, "{seed}"]`, `run: [x, "{name}"]`), []string{"properties[0].name", "run uses {name}"}},
		{"name option", swap("fixture: f", "fixture: f\n    name: -k"), []string{"properties[0].name", "option"}},
		{"name spaces", swap("fixture: f", "fixture: f\n    name: ' T '"), []string{"properties[0].name", "surrounding spaces"}},
		{"seeds missing", swap("    seeds: [1]\n", ""), []string{"properties[0].seeds", "random_seeds"}},
		{"random_seeds too many", prop("random_seeds: 1000\n"), []string{"random_seeds", "out of range"}},
		{"property random_seeds negative", swap("seeds: [1]", "seeds: [1]\n    random_seeds: -1"), []string{"properties[0].random_seeds", "out of range"}},
		{"watch climbs", prop("watch: [../x]\n"), []string{"watch[0]", "climbs out"}},
		{"watch bad glob", swap("fixture: f", "fixture: f\n    watch: ['a/[b']"), []string{"properties[0].watch[0]", "syntax"}},
		{"watch partial starstar", prop("watch: ['a/b**']\n"), []string{"watch[0]", "whole path segment"}},
		{"watch not a list", prop("watch: a\n"), []string{"watch", "want a list"}},
		{"pass_marker bad", swap("fixture: f", "fixture: f\n    pass_marker: '(ok'"), []string{"properties[0].pass_marker", "regexp"}},
		{"pass_marker empty", swap("fixture: f", "fixture: f\n    pass_marker: ''"), []string{"properties[0].pass_marker", "empty"}},
		{"flake_probe_runs negative", swap("fixture: f", "fixture: f\n    flake_probe_runs: -1"), []string{"properties[0].flake_probe_runs"}},
		{"flake_probe_runs too many", "flake_probe_runs: 101\n" + swap("", ""), []string{"flake_probe_runs"}},
		{"reject_new_flakes not a bool", "reject_new_flakes: yes please\n" + swap("", ""), []string{"reject_new_flakes", "true or false"}},
		{"fail_marker bad", swap("fixture: f", "fixture: f\n    fail_marker: '(FAIL'"), []string{"properties[0].fail_marker", "regexp"}},
		{"fail_marker empty", swap("fixture: f", "fixture: f\n    fail_marker: ''"), []string{"properties[0].fail_marker", "empty"}},
		{"batch not a bool", swap("fixture: f", "fixture: f\n    batch: sometimes"), []string{"properties[0].batch", "true or false"}},
		{"fail_marker not a string", swap("fixture: f", "fixture: f\n    fail_marker: [x]"), []string{"properties[0].fail_marker"}},
		{"same test twice", prop("  - {path: a.py, name: T, fixture: g, seeds: [2], run: [x], wall_budget: 1s}\n  - {path: a.py, name: T, seeds: [3], run: [x], wall_budget: 1s}\n"), []string{"properties[2]", "name \"T\"", "properties[1]"}},
		{"wall_budget missing", swap("    wall_budget: 1s\n", ""), []string{"properties[0].wall_budget", "missing"}},
		{"path absolute", swap("path: a.py", "path: /etc/passwd"), []string{"properties[0].path", "absolute"}},
		{"path climbs", swap("path: a.py", "path: a/../../b.py"), []string{"properties[0].path", "climbs out"}},
		{"path option", swap("path: a.py", "path: --exec=x"), []string{"properties[0].path", "option"}},
		{"path in .git", swap("path: a.py", "path: .git/config"), []string{"properties[0].path", ".git"}},
		{"path number", swap("path: a.py", "path: 3"), []string{"properties[0].path", "want a string"}},
		{"fixture root", swap("fixture: f", "fixture: ."), []string{"properties[0].fixture", "root"}},
		{"generator climbs", swap("fixture: f", "fixture: f\n    generator: ../gen.py"), []string{"properties[0].generator", "climbs out"}},
		{"seed option", swap("seeds: [1]", "seeds: [--help]"), []string{"properties[0].seeds[0]", "option"}},
		{"seed negative", swap("seeds: [1]", "seeds: [-5]"), []string{"properties[0].seeds[0]", "option"}},
		{"seed space", swap("seeds: [1]", `seeds: ["1 --x"]`), []string{"properties[0].seeds[0]"}},
		{"seed float", swap("seeds: [1]", "seeds: [1.5]"), []string{"properties[0].seeds[0]", "a float"}},
		{"seed hex", swap("seeds: [1]", "seeds: [0x10]"), []string{"properties[0].seeds[0]", "decimal"}},
		{"seed twice", swap("seeds: [1]", "seeds: [1, 2, 1]"), []string{"properties[0].seeds[2]", "twice"}},
		{"seeds empty", swap("seeds: [1]", "seeds: []"), []string{"properties[0].seeds", "empty"}},
		{"seeds scalar", swap("seeds: [1]", "seeds: 1"), []string{"properties[0].seeds", "want a list"}},
		{"run shell string", swap(`run: [x, "{seed}"]`, `run: "pytest -q {path}"`), []string{"properties[0].run", "shell string"}},
		{"run empty", swap(`run: [x, "{seed}"]`, `run: []`), []string{"properties[0].run", "empty"}},
		{"run unknown placeholder", swap(`run: [x, "{seed}"]`, `run: [x, "{seeds}"]`), []string{"properties[0].run", "{seeds}"}},
		{"run placeholder command", swap(`run: [x, "{seed}"]`, `run: ["{path}"]`), []string{"properties[0].run[0]", "fixed program"}},
		{"run nested list", swap(`run: [x, "{seed}"]`, `run: [x, [y]]`), []string{"properties[0].run[1]", "want a string"}},
		{"samples needed", swap(`run: [x, "{seed}"]`, `run: [x, "{samples}"]`), []string{"properties[0].samples", "{samples}"}},
		{"samples zero", prop("    samples: 0\n"), []string{"properties[0].samples", "out of range"}},
		{"wall_budget bad", swap("wall_budget: 1s", "wall_budget: soon"), []string{"properties[0].wall_budget", "duration"}},
		{"wall_budget zero", swap("wall_budget: 1s", "wall_budget: 0s"), []string{"properties[0].wall_budget", "out of range"}},
		{"wall_budget huge", swap("wall_budget: 1s", "wall_budget: 100h"), []string{"properties[0].wall_budget", "out of range"}},
		{"anchor", swap("seeds: [1]", "seeds: &s [1]"), []string{"properties[0].seeds", "anchors"}},
		{"tag", swap("seeds: [1]", "seeds: !!seq [1]"), []string{"properties[0].seeds", "tags"}},
		{"same property twice", prop("  - {path: a.py, fixture: f, seeds: [2], run: [x], wall_budget: 1s}\n"), []string{"properties[1]", "properties[0]"}},
		{"bad utf8", "version: 1\n# \xff\n", []string{"UTF-8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestLoadTests(t *testing.T) {
	raw := `version: 1
random_seeds: 2
watch: ["tools/ci/**"]
properties:
  - path: tests/test_x.py
    name: test_a
    seeds: [1]
    watch: ["tests/helpers/*.py"]
    pass_marker: "^ok "
    fail_marker: "^not ok "
    run: [pytest, "{path}::{name}", "--hypothesis-seed={seed}"]
    wall_budget: 1s
  - path: tests/test_x.py
    name: test_b
    random_seeds: 3
    run: [pytest, "{path}::{name}"]
    wall_budget: 1s
  - path: tests/test_x.py
    seeds: [5]
    random_seeds: 0
    flake_probe_runs: 0
    batch: false
    run: [pytest, "{path}"]
    wall_budget: 1s
`
	cfg, err := config.Load([]byte(raw), "flakegate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := cfg.Properties[0], cfg.Properties[1], cfg.Properties[2]
	if cfg.FlakeProbeRuns != config.DefaultFlakeProbeRuns || a.FlakeProbeRuns != 3 || c.FlakeProbeRuns != 0 || cfg.RejectNewFlakes {
		t.Errorf("flake probe: global %d, entries %d %d, reject %t", cfg.FlakeProbeRuns, a.FlakeProbeRuns, c.FlakeProbeRuns, cfg.RejectNewFlakes)
	}
	if a.Name != "test_a" || a.Fixture != "" || a.RandomSeeds != 2 || a.Watch[0] != "tests/helpers/*.py" || !a.PassMarker.MatchString("x\nok 1") || !a.FailMarker.MatchString("x\nnot ok 1") || cfg.Properties[1].FailMarker != nil {
		t.Errorf("first entry: %+v", a)
	}
	if !a.Batch || !b.Batch || c.Batch {
		t.Errorf("batch: %t %t %t; want the default (true) twice, then batch: false", a.Batch, b.Batch, c.Batch)
	}
	if b.Name != "test_b" || len(b.Seeds) != 0 || b.RandomSeeds != 3 || c.RandomSeeds != 0 || c.Name != "" {
		t.Errorf("entries: %+v %+v", b, c)
	}
	if cfg.Watch[0] != "tools/ci/**" || cfg.Triples() != 3+3+1 || a.ID() != "tests/test_x.py::test_a" || c.ID() != "tests/test_x.py" {
		t.Errorf("config: watch %v, %d triples, ids %s %s", cfg.Watch, cfg.Triples(), a.ID(), c.ID())
	}
}

func TestMatchGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"conftest.py", "conftest.py", true},
		{"conftest.py", "tests/conftest.py", false},
		{"tests/*_test.go", "tests/a_test.go", true},
		{"tests/*_test.go", "tests/sub/a_test.go", false},
		{"tests/testdata/rapid/**", "tests/testdata/rapid/TestX/a.fail", true},
		{"tests/testdata/rapid/**", "tests/testdata/rapid", true},
		{"**/conftest.py", "a/b/conftest.py", true},
		{"**/conftest.py", "conftest.py", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/c", false},
		{"a/[bc].py", "a/c.py", true},
	} {
		if got := config.MatchGlob(tc.glob, tc.path); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v", tc.glob, tc.path, got)
		}
	}
}

func TestCleanRepoPath(t *testing.T) {
	type testCase struct {
		in, want string
		ok       bool
	}
	run := func(t *testing.T, tc testCase) {
		got, err := config.CleanRepoPath(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("CleanRepoPath(%q) = %q, %v", tc.in, got, err)
		}
	}
	for _, tc := range []testCase{
		{"a/b", "a/b", true},
		{"./a//b/", "a/b", true},
		{"a/../b", "b", true},
		{"../b", "", false},
		{"/b", "", false},
		{"", "", false},
		{"-b", "", false},
		{"a\x00b", "", false},
		{".gitignore", ".gitignore", true},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("version: 1\nproperties: [{path: a, fixture: b, seeds: [1], run: [x], wall_budget: 1s}]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := config.Load(raw, "f.yaml")
		if err != nil {
			if flakegate.ErrorCode(err) != flakegate.EINVALID {
				t.Fatalf("error code %q for %q", flakegate.ErrorCode(err), raw)
			}
			return
		}
		for _, p := range cfg.Properties {
			for _, s := range p.Seeds {
				if !s.Valid() || strings.HasPrefix(s.String(), "-") {
					t.Fatalf("accepted seed %q", s)
				}
			}
			if _, err := config.CleanRepoPath(p.Path); err != nil {
				t.Fatalf("accepted path %q", p.Path)
			}
		}
	})
}

// TestRunTemplateAgreesWithTemplate: config accepts a run argument exactly
// when template can expand it, and keeps it as written. A brace pair
// that is not a placeholder for template ({_seed}, {1x}, {}) is text for
// config too.
func TestRunTemplateAgreesWithTemplate(t *testing.T) {
	vars := template.Vars{Path: "a.py", Seed: "1", Samples: "5", Fixture: "f"}
	for _, arg := range []string{
		"{seed}", "--seed={seed}", "a{path}b{fixture}", "{{seed}}", "{seed", "seed}",
		"{_seed}", "{_x}", "{1x}", "{}", `{"a":1}`, "[0-9]{3}", "{sa mples}",
		"{seeds}", "{Seed}", "{x_1}", "{samples_}", "{path}{bogus}",
	} {
		t.Run(arg, func(t *testing.T) {
			yaml := "version: 1\nproperties:\n  - path: a.py\n    fixture: f\n    seeds: [1]\n    samples: 5\n    run: [x, " + strconv.Quote(arg) + "]\n    wall_budget: 1s\n"
			cfg, cerr := config.Load([]byte(yaml), "flakegate.yaml")
			_, rerr := template.Expand([]string{"x", arg}, vars)
			if (cerr == nil) != (rerr == nil) {
				t.Fatalf("config: %v; template: %v", cerr, rerr)
			}
			if cerr == nil && cfg.Properties[0].Run[1] != arg {
				t.Errorf("run[1] = %q, want %q", cfg.Properties[0].Run[1], arg)
			}
			if cerr != nil && !strings.Contains(cerr.Error(), "unknown placeholder") {
				t.Errorf("config error %q does not say unknown placeholder", cerr)
			}
		})
	}
}
