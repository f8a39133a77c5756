package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/plan"
)

// TestCheckPlan: check --plan runs nothing and prints the cost of the
// base config: an upper bound from the wall budgets, said so and with no
// warning, until init has timed the properties, then an estimate from
// those timings that names them; --json is one object.
func TestCheckPlan(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	gitIn(t, dir, "init", "-q", "-b", "main", repo)
	commitFiles(t, repo, "base", map[string]string{
		"flakegate.yaml": "version: 1\nproperties:\n" +
			"  - {path: props/a.sh, seeds: [1, 2, 3], random_seeds: 2, run: [sh, \"{path}\", \"{seed}\"], wall_budget: 2m}\n" +
			"  - {path: props/b.sh, seeds: [1], run: [sh, \"{path}\", \"{seed}\"], wall_budget: 1m}\n",
		"props/a.sh": "echo ran > ran-a\n", "props/b.sh": "exit 0\n",
	})
	r := fg(t, repo, "check", "--base", "main", "--plan")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	for _, want := range []string{"cost: 6 triples; 12 attempts in 12 processes when every triple passes", "at most 42 attempts in 42 processes",
		"estimate: at most 22m0s when every triple passes: an upper bound from the wall budgets, not a forecast"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "warning") {
		t.Errorf("an upper bound warns to cut seeds:\n%s", r.out)
	}
	if st := gitIn(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("--plan ran something: %s", st)
	}
	common := filepath.Join(repo, ".git")
	if err := plan.KeepTimings(common, "flakegate init --measure, one sandboxed attempt each, 2026-12-01 22:00 UTC", map[string]float64{"props/a.sh": 3, "props/b.sh": 1}, nil); err != nil {
		t.Fatal(err)
	}
	r = fg(t, repo, "check", "--base", "main", "--plan")
	if !strings.Contains(r.out, "estimate: about 32s when every triple passes (32s of attempts at 1 worker; from flakegate init --measure, one sandboxed attempt each, 2026-12-01 22:00 UTC)") ||
		strings.Contains(r.out, "warning") {
		t.Errorf("with timings:\n%s", r.out)
	}
	r = fg(t, repo, "check", "--base", "main", "--plan", "--json")
	var cost map[string]any
	if err := json.Unmarshal([]byte(r.out), &cost); err != nil || cost["triples"] != 6.0 || cost["processes"] != 12.0 || cost["seconds"] != 32.0 || cost["warn"] != false {
		t.Errorf("--json: %v\n%s", err, r.out)
	}
	// A config that does not load is exit 2, as for check.
	commitFiles(t, repo, "broken", map[string]string{"flakegate.yaml": "version: 1\nretry_cap: many\n"})
	if r = fg(t, repo, "check", "--base", "main", "--plan"); r.code != ExitUsage {
		t.Errorf("broken config: exit %d\n%s", r.code, r.errOut)
	}
}
