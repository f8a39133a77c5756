package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// collectConftest counts pytest's collections (the listing's two
// commands run with --collect-only; a batch never does) in $FG_STATE.
const collectConftest = `import os


def pytest_configure(config):
    if config.option.collectonly:
        with open(os.path.join(os.environ["FG_STATE"], "collections"), "a") as f:
            f.write("collect\n")
`

// TestPytestListingKept: the base's listing of a pytest suite is kept
// between checks, like go's: a second check of the same base collects
// nothing (issue 43: "the pytest listing runs again on every check").
// It is keyed by what decides it besides the tree, the attempts'
// environment among them: a check with another value of a sandbox.env
// variable lists again; so does one whose kept file does not read back.
func TestPytestListingKept(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := newRepo(t, map[string]string{
		"README.md": "kept listing\n",
		"calc.py":   pyCalc,
		"flakegate.yaml": "version: 1\nflake_probe_runs: 0\nimpact: false\nsandbox:\n  rw: [\"@FG_STATE@\"]\n  env: [FG_STATE, FG_KEY]\n" +
			"suites:\n  - path: tests\n    framework: pytest\n    seeds: [1]\n    wall_budget: 120s\n",
		"tests/conftest.py":  collectConftest,
		"tests/test_calc.py": "import calc\n\n\ndef test_one():\n    assert calc.value(1) == 1\n\n\ndef test_two():\n    assert calc.value(2) == 2\n",
	})
	collections := func() int {
		b, _ := os.ReadFile(filepath.Join(r.state, "collections"))
		return strings.Count(string(b), "collect\n")
	}
	check := func(tag string, env ...string) {
		t.Helper()
		r.candidate(tag, map[string]string{"README.md": "kept listing, " + tag + "\n"})
		cr := r.checkEnv(env, "--base", "base", "--candidate", tag)
		if cr.code != 0 || len(cr.summary.Results) != 2 || len(notPass(cr)) != 0 {
			t.Fatalf("%s: want 2 PASS, exit 0\n%s", tag, cr)
		}
	}
	check("first")
	first := collections()
	if first == 0 {
		t.Fatalf("the first check collected nothing: the conftest does not count")
	}
	check("second")
	if n := collections(); n != first {
		t.Errorf("a second check of the same base collected %d more times: the listing was not kept", n-first)
	}
	check("env", "FG_KEY=other")
	if n := collections(); n != 2*first {
		t.Errorf("another attempt environment: %d collections, want %d (listed again)", n, 2*first)
	}
	kept, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "suitelist", "*.json"))
	if len(kept) != 2 {
		t.Fatalf("kept listings %v, want 2 (one per environment)", kept)
	}
	for _, f := range kept {
		if err := os.WriteFile(f, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check("broken", "FG_KEY=other")
	if n := collections(); n != 3*first {
		t.Errorf("a kept file that does not read back: %d collections, want %d (listed again)", n, 3*first)
	}
}
