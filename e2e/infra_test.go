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
// test folder, directly or through another helper, is watched without a
// glob; the product code it imports is not.
func TestCheckWatchedHelpers(t *testing.T) {
	t.Parallel()
	needProgram(t, "pytest")
	files := helperFiles()
	r := newRepo(t, files)
	r.candidate("helper", map[string]string{"tests/helpers.py": "def check_sorted(xs, ys):\n    pass  # weakened\n"})
	r.candidate("deep", map[string]string{"tests/_deep.py": "def ordered(ys):\n    return True\n"})
	r.candidate("product", map[string]string{"calc.py": "def sort(xs):\n    return sorted(list(xs))\n"})
	for tag, why := range map[string]string{
		"helper": "tests/helpers.py (a test helper imported by tests/test_calc.py)",
		"deep":   "tests/_deep.py (a test helper imported by tests/helpers.py)",
	} {
		cr := r.check("--base", "base", "--candidate", tag)
		if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED" {
			t.Fatalf("%s\n%s", tag, cr)
		}
		if res := cr.summary.Results[0]; !strings.Contains(res.Reason, why) || res.AttemptsSkipped == "" {
			t.Errorf("%s: reason %q, attempts_skipped %q", tag, res.Reason, res.AttemptsSkipped)
		}
	}
	if cr := r.check("--base", "base", "--candidate", "product"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Fatalf("product code is not watched\n%s", cr)
	}
	code, out := r.run("check", "--base", "base", "--explain-watch")
	if code != 0 || !strings.Contains(out, "tests/helpers.py") || !strings.Contains(out, "a test helper imported by tests/test_calc.py") ||
		!strings.Contains(out, "tests/_deep.py") || strings.Contains(out, " calc.py ") || strings.Contains(out, "not_a_module") {
		t.Errorf("--explain-watch: exit %d\n%s", code, out)
	}
}

// TestCheckWatchedVitest: vitest's config and the setup files it names
// are watched without a glob; the diff alone decides, so nothing runs.
func TestCheckWatchedVitest(t *testing.T) {
	t.Parallel()
	needProgram(t, "npx")
	r := newRepo(t, map[string]string{
		"flakegate.yaml": `version: 1
retry_cap: 1
workers: 1
properties:
  - path: web/src/sum.test.ts
    seeds: [7]
    run: [npx, vitest, run, "{path}", "--seed={seed}"]
    wall_budget: 60s
`,
		"web/vitest.config.ts": "import { defineConfig } from 'vitest/config'\nexport default defineConfig({ test: { setupFiles: ['./test/setup.ts'] } })\n",
		"web/test/setup.ts":    "// runs before every test file\n",
		"web/src/sum.ts":       "export const sum = (a: number, b: number) => a + b\n",
		"web/src/sum.test.ts":  "import { test, expect } from 'vitest'\nimport { sum } from './sum'\ntest('sum', () => expect(sum(1, 2)).toBe(3))\n",
	})
	r.candidate("config", map[string]string{"web/vitest.config.ts": "export default { test: { include: [] } }\n"})
	r.candidate("setup", map[string]string{"web/test/setup.ts": "globalThis.expect = () => ({ toBe() {} })\n"})
	for tag, why := range map[string]string{
		"config": "web/vitest.config.ts (vitest configuration)",
		"setup":  "web/test/setup.ts (setupFiles of web/vitest.config.ts)",
	} {
		cr := r.check("--base", "base", "--candidate", tag)
		if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED" {
			t.Fatalf("%s\n%s", tag, cr)
		}
		res := cr.summary.Results[0]
		if !strings.Contains(res.Reason, why) || res.CandidateAttempts+res.BaseAttempts != 0 {
			t.Errorf("%s: reason %q, %d+%d attempts", tag, res.Reason, res.CandidateAttempts, res.BaseAttempts)
		}
	}
}
