package e2e_test

import (
	"strings"
	"testing"
)

// The helper repository: tests/test_calc.py imports its grader from
// tests/helpers.py, which imports tests/_deep.py; calc.py is product code.
func helperFiles() map[string]string {
	return map[string]string{
		"flakegate.yaml": `version: 1
retry_cap: 1
workers: 1
properties:
  - path: tests/test_calc.py
    name: test_sorted
    seeds: [1]
    run: [pytest, -q, -p, no:cacheprovider, "{path}::{name}"]
    wall_budget: 60s
`,
		"pytest.ini": "[pytest]\npythonpath = .\n",
		"calc.py":    "def sort(xs):\n    return sorted(xs)\n",
		"tests/test_calc.py": `import calc
from helpers import check_sorted  # the helper grades the property
s = "import not_a_module"


def test_sorted():
    for n in range(50):
        xs = [(n * 7919 + i * 104729) % 97 for i in range(n)]
        check_sorted(xs, calc.sort(xs))
`,
		"tests/helpers.py": "from _deep import ordered\n\n\ndef check_sorted(xs, ys):\n    assert sorted(xs) == ys and ordered(ys)\n",
		"tests/_deep.py":   "def ordered(ys):\n    return all(a <= b for a, b in zip(ys, ys[1:]))\n",
	}
}

// TestCheckWatchedHelpers: a helper module the property imports from its
// test folder, directly or through another helper, is the base's in the
// graded tree: a patch that only weakens it runs the base's (PASS); one
// that weakens it and breaks the product code is CONTAMINATED, its reason
// naming the helper; the product code it imports is the candidate's.
// --explain-watch still lists the helpers the property imports.
func TestCheckWatchedHelpers(t *testing.T) {
	t.Parallel()
	needProgram(t, "pytest")
	files := helperFiles()
	r := newRepo(t, files)
	regress := "def sort(xs):\n    return list(xs)\n"
	r.candidate("helper", map[string]string{"calc.py": regress, "tests/helpers.py": "def check_sorted(xs, ys):\n    pass  # weakened\n"})
	r.candidate("deep", map[string]string{"calc.py": regress, "tests/_deep.py": "def ordered(ys):\n    return True\n"})
	r.candidate("helper-only", map[string]string{"tests/helpers.py": "def check_sorted(xs, ys):\n    pass  # weakened\n"})
	r.candidate("product", map[string]string{"calc.py": "def sort(xs):\n    return sorted(list(xs))\n"})
	for tag, why := range map[string]string{
		"helper": "the patch changes tests/helpers.py (a file of a test folder), and the base's version of tests/test_calc.py::test_sorted fails on the patch's code",
		"deep":   "the patch changes tests/_deep.py (a file of a test folder), and the base's version of tests/test_calc.py::test_sorted fails on the patch's code",
	} {
		cr := r.check("--base", "base", "--candidate", tag)
		if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED" {
			t.Fatalf("%s\n%s", tag, cr)
		}
		if res := cr.summary.Results[0]; !strings.Contains(res.Reason, why) || res.CandidateAttempts == 0 {
			t.Errorf("%s: reason %q, %d candidate attempts", tag, res.Reason, res.CandidateAttempts)
		}
	}
	if cr := r.check("--base", "base", "--candidate", "helper-only"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Fatalf("a weakened helper alone: the base's helper grades the code\n%s", cr)
	}
	if cr := r.check("--base", "base", "--candidate", "product"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Fatalf("product code is the candidate's\n%s", cr)
	}
	code, out := r.run("check", "--base", "base", "--explain-watch")
	if code != 0 || !strings.Contains(out, "tests/helpers.py") || !strings.Contains(out, "a test helper imported by tests/test_calc.py") ||
		!strings.Contains(out, "tests/_deep.py") || strings.Contains(out, " calc.py ") || strings.Contains(out, "not_a_module") {
		t.Errorf("--explain-watch: exit %d\n%s", code, out)
	}
}

// TestCheckWatchedVitest: vitest's config and the setup files it names
// are the base's in the graded tree: a patch that changes only the config
// runs the base's (PASS, the config not in diff_paths); one that changes
// a setup file and breaks the code the test checks is CONTAMINATED,
// naming the setup file; the regression alone is PROPERTY.
func TestCheckWatchedVitest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real vitest")
	}
	fw := jsFrameworks[1]
	cfg := strings.ReplaceAll("version: 1\nretry_cap: 1\nworkers: 1\nflake_probe_runs: 0\nproperties:\n"+jsEntry("tests/sum.test.js", "sum", "60s"), "@FW@", fw.name)
	r := newRepo(t, jsProject(t, fw, cfg, map[string]string{
		"vitest.config.js":  "export default { test: { setupFiles: [\"./seed.js\", \"./setup/extra.js\"], include: [\"tests/**/*.test.js\"] } };\n",
		"setup/extra.js":    "// runs before every test file\n",
		"src/sum.js":        "export const sum = (a, b) => a + b;\n",
		"tests/sum.test.js": "import { test, expect } from \"vitest\";\nimport { sum } from \"../src/sum.js\";\n\ntest(\"sum\", () => {\n  expect(sum(1, 2)).toBe(3);\n});\n",
	}))
	regress := "export const sum = (a, b) => a - b;\n"
	r.candidate("config", map[string]string{"vitest.config.js": "export default { test: { include: [\"nothing/**\"] } };\n"})
	r.candidate("setup", map[string]string{"src/sum.js": regress, "setup/extra.js": "globalThis.hidden = true;\n"})
	r.candidate("regression", map[string]string{"src/sum.js": regress})
	cr := r.check("--base", "base", "--candidate", "config")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" || contains(cr.record(t, 0).DiffPaths, "vitest.config.js") {
		t.Fatalf("an edited config alone: the base's config runs\n%s", cr)
	}
	cr = r.check("--base", "base", "--candidate", "setup")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED" {
		t.Fatalf("an edited setup file and a regression\n%s", cr)
	}
	if why := cr.summary.Results[0].Reason; !strings.HasPrefix(why, "the patch changes setup/extra.js (a setup file the base's config names)") {
		t.Errorf("reason %q", why)
	}
	if cr := r.check("--base", "base", "--candidate", "regression"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
		t.Fatalf("the regression alone\n%s", cr)
	}
}
