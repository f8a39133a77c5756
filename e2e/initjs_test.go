package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitJSSuite: flakegate init writes a vitest or jest suite for the
// project at the repository root only once the framework's listing ran
// in the sandbox as written. Without node_modules in the tree (a
// prepare would install it: a listing runs none, and a check reaches no
// registry) it writes none and says why; with the real jest or vitest
// committed it writes `framework: jest` (vitest) and `path: "."`, and a
// check of the written config labels a regression PROPERTY for exactly
// the test it breaks, on every order seed.
func TestInitJSSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	mods := jsModules(t)
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			files := map[string]string{
				"README.md":    "init js suite\n",
				"src/calc.js":  fw.source(jsSuiteCalc),
				"package.json": `{"name": "calc", "private": true, "devDependencies": {"` + fw.name + `": "*"}}` + "\n",
				"tests/calc.test.js": fw.source(`import { test, expect } from "vitest";
import { add, neg } from "../src/calc.js";

test("add", () => {
  expect(add(2, 3)).toBe(5);
});

test("neg", () => {
  expect(neg(2)).toBe(-2);
});
`),
			}
			if fw.name == "vitest" {
				files["package.json"] = `{"name": "calc", "private": true, "type": "module", "devDependencies": {"vitest": "*"}}` + "\n"
			}
			r := newRepo(t, files)
			code, out := r.run("init", "--dry-run")
			if code != 2 || !strings.Contains(out, "the "+fw.name+" suite . is not written: ") || !strings.Contains(out, "node_modules") {
				t.Fatalf("no node_modules: want exit 2 and a note that the suite is not written; exit %d\n%s", code, out)
			}
			// The real framework in the tree (a copy: the sandbox sees the
			// tree, not the cache).
			if o, err := exec.Command("cp", "-rL", mods, filepath.Join(r.dir, "node_modules")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, o)
			}
			r.commit("node_modules", map[string]string{})
			r.git("tag", "-f", "base")
			code, out = r.run("init")
			if code != 0 || !strings.Contains(out, "the "+fw.name+" suite . lists 2 tests in the sandbox: written") {
				t.Fatalf("init: exit %d\n%s", code, out)
			}
			cfg := readConfig(t, r)
			if len(cfg.Suites) != 1 || cfg.Suites[0].Framework != fw.name || cfg.Suites[0].Path != "." || len(cfg.Properties) != 0 {
				t.Fatalf("suites %+v, %d properties", cfg.Suites, len(cfg.Properties))
			}
			r.commit("flakegate", map[string]string{})
			r.git("tag", "-f", "base")
			r.candidate("broken", map[string]string{"src/calc.js": fw.source(strings.Replace(jsSuiteCalc, "-a", "a", 1))})
			cr := r.check("--base", "base", "--candidate", "broken")
			got := notPass(cr)
			if cr.code != 1 || len(got) == 0 || len(got) != len(cr.summary.Results)/2 {
				t.Fatalf("regression: want neg PROPERTY on every seed and add PASS, got %v\n%s", got, cr)
			}
			for _, g := range got {
				if !strings.HasPrefix(g, "neg ") || !strings.HasSuffix(g, " PROPERTY") {
					t.Fatalf("regression: want neg PROPERTY on every seed, got %v\n%s", got, cr)
				}
			}
		})
	}
}
