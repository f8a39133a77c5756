package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	fgconfig "github.com/flakegate/flakegate/config"
)

// These tests run `flakegate init` on real repositories of each framework
// and commit what it wrote on the base. TestDocsGettingStarted runs
// docs/getting-started.md on the same repositories, which ends in a check
// of a harmless candidate that passes; a check here is only what that one
// does not show (a buggy candidate).

// initGoModule: two rapid property tests and a plain test (with a decoy
// call in a string and a comment) in a Go module.
func initGoModule(t *testing.T) map[string]string {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join("..", "examples", "go-rapid", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"go.mod":    "module example.com/clamp\n\ngo 1.23\n\nrequire pgregory.net/rapid v1.3.0\n",
		"go.sum":    string(sum),
		"clamp.go":  "package clamp\n\n// Clamp bounds x to [lo, hi].\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n",
		"README.md": "clamp\n",
		"clamp_test.go": `package clamp

import (
	"testing"

	"pgregory.net/rapid"
)

func TestClampInRange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.IntRange(-100, 100).Draw(t, "lo")
		hi := rapid.IntRange(lo, 200).Draw(t, "hi")
		if c := Clamp(rapid.Int().Draw(t, "x"), lo, hi); c < lo || c > hi {
			t.Fatalf("Clamp out of [%d, %d]: %d", lo, hi, c)
		}
	})
}

func TestClampIdentity(t *testing.T) {
	t.Run("inside", rapid.MakeCheck(func(t *rapid.T) {
		x := rapid.IntRange(-10, 10).Draw(t, "x")
		if Clamp(x, -10, 10) != x {
			t.Fatal("moved a value inside the range")
		}
	}))
}

// TestClampEdges is a plain test: rapid.Check(t, ...) in this comment
// and in the string below is no property.
func TestClampEdges(t *testing.T) {
	_ = "rapid.Check(t, nil)"
	if Clamp(5, 0, 3) != 3 {
		t.Fatal("edge")
	}
}
`,
	}
}

// initPytestProject: a Hypothesis @given test, a state machine exposed as
// TestCase, a plain test, and decoys in a string and a comment.
func initPytestProject() map[string]string {
	return map[string]string{
		"README.md":   "stack\n",
		"stack.py":    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n",
		"conftest.py": "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n\nfrom hypothesis import settings\nsettings.register_profile(\"ci\", database=None, deadline=None)\nsettings.load_profile(\"ci\")\n",
		"tests/test_stack.py": `from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, invariant

from stack import Stack

DOC = """
@given(st.integers())
def test_in_a_docstring(x): ...
"""


@given(st.lists(st.integers()))
def test_push_then_pop_reverses(xs):
    s = Stack()
    for x in xs:
        s.push(x)
    assert [s.pop() for _ in xs] == list(reversed(xs))


# @given(st.integers())
def test_plain():
    assert Stack().items == []


class StackMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.stack = Stack()
        self.model = []

    @rule(x=st.integers())
    def push(self, x):
        self.stack.push(x)
        self.model.append(x)

    @rule()
    def pop(self):
        if self.model:
            assert self.stack.pop() == self.model.pop()

    @invariant()
    def same_size(self):
        assert len(self.stack.items) == len(self.model)


TestStackMachine = StackMachine.TestCase
TestStackMachine.settings = settings(max_examples=25, stateful_step_count=10, deadline=None)
`,
	}
}

// The fake node_modules of a vitest project: flakegate's tests need no
// network, so vitest's and fast-check's parts that these tests use are
// stood in for by a few lines each (vitest run FILE -t PATTERN, and a
// seeded fast-check that refuses to run without a seed).
const (
	fakeVitestAPI = `// A stand-in for vitest's API, for flakegate's tests: it registers tests.
const reg = (globalThis.__fakeVitest ??= { tests: [], prefix: [] });
export function describe(name, fn) { reg.prefix.push(name); try { fn(); } finally { reg.prefix.pop(); } }
export function test(name, fn) { reg.tests.push({ name: [...reg.prefix, name].join(" "), fn, file: reg.file }); }
export const it = test;
export function expect(v) { return { toBe(w) { if (v !== w) throw new Error("expected " + w + ", got " + v); } }; }
`
	fakeVitestBin = `#!/usr/bin/env node
// A stand-in for "vitest run FILE... -t PATTERN [--outputFile=F]", for
// flakegate's tests: it loads the setup file, then each FILE, runs the
// tests whose full name matches (each gets a context with its task, whose
// meta the report carries, as vitest's does) and prints vitest's summary
// line ("Tests  1 passed | 2 skipped (3)"), and writes the json
// reporter's report to F, one test result a file.
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
const args = process.argv.slice(2);
if (args[0] !== "run") { console.error("only vitest run is faked"); process.exit(2); }
let pattern, outFile;
const files = [];
for (let i = 1; i < args.length; i++) {
  if (args[i] === "-t") pattern = new RegExp(args[++i]);
  else if (args[i].startsWith("--outputFile=")) outFile = args[i].slice("--outputFile=".length);
  else if (!args[i].startsWith("--")) files.push(args[i]);
}
const reg = (globalThis.__fakeVitest ??= { tests: [], prefix: [] });
if (existsSync("vitest.setup.js")) await import(pathToFileURL(resolve("vitest.setup.js")));
for (const file of files) { reg.file = file; await import(pathToFileURL(resolve(file))); }
let passed = 0, failed = 0, skipped = 0;
const results = new Map(files.map((f) => [f, []]));
for (const t of reg.tests) {
  const out = results.get(t.file);
  if (pattern && !pattern.test(t.name)) { skipped++; out.push({ fullName: t.name, status: "skipped" }); continue; }
  const start = Date.now();
  const task = { name: t.name, meta: {} };
  try { await t.fn({ task }); passed++; console.log(" ✓ " + t.file + " > " + t.name); out.push({ fullName: t.name, status: "passed", duration: Date.now() - start, meta: task.meta }); }
  catch (e) { failed++; console.log(" × " + t.file + " > " + t.name + "\n" + e.message); out.push({ fullName: t.name, status: "failed", duration: Date.now() - start, failureMessages: [e.message], meta: task.meta }); }
}
// --reporter=json --outputFile=F: the report vitest's json reporter writes.
if (outFile) (await import("node:fs")).writeFileSync(outFile, JSON.stringify({ numTotalTests: reg.tests.length,
  testResults: files.map((f) => ({ name: resolve(f), status: results.get(f).some((r) => r.status === "failed") ? "failed" : "passed", assertionResults: results.get(f) })) }));
const parts = [];
if (failed) parts.push(failed + " failed");
if (passed) parts.push(passed + " passed");
if (skipped) parts.push(skipped + " skipped");
console.log("      Tests  " + parts.join(" | ") + " (" + reg.tests.length + ")");
process.exit(failed ? 1 : 0);
`
	fakeFastCheck = `// A stand-in for fast-check, for flakegate's tests: seeded arbitraries and
// assert. Without a seed (a parameter or configureGlobal) it refuses to run,
// so a test that passes got its seed from FAST_CHECK_SEED.
let global = {};
export function configureGlobal(p) { global = p; }
export function readConfigureGlobal() { return global; }
const rng = (seed) => { let s = seed >>> 0; return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; };
export const integer = () => (r) => Math.floor(r() * 2001) - 1000;
export const array = (arb) => (r) => Array.from({ length: Math.floor(r() * 20) }, () => arb(r));
export const property = (...args) => ({ arbs: args.slice(0, -1), pred: args[args.length - 1] });
export function assert(p, params = {}) {
  const seed = params.seed ?? global.seed;
  if (seed === undefined || Number.isNaN(seed)) throw new Error("fake fast-check: no seed given");
  const r = rng(seed);
  for (let run = 0; run < 100; run++) {
    const vals = p.arbs.map((a) => a(r));
    if (p.pred(...vals) === false) throw new Error("Property failed after " + (run + 1) + " tests\n{ seed: " + seed + " }\nCounterexample: " + JSON.stringify(vals));
  }
}
export default { configureGlobal, readConfigureGlobal, integer, array, property, assert };
`
	// seedHook is the setup file of the recipe in docs/writing-properties.md.
	seedHook = `import fc from "fast-check";
const seed = process.env.FAST_CHECK_SEED;
if (seed !== undefined) {
  if (!/^\d+$/.test(seed)) throw new Error("FAST_CHECK_SEED=" + seed + ": want an integer");
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed) });
}
`
)

// initVitestProject: fast-check properties in vitest tests (one nested
// in describe), a plain test, decoys in strings and comments, the seed
// hook and a fake node_modules.
func initVitestProject() map[string]string {
	return map[string]string{
		"README.md":        "sort\n",
		"package.json":     `{"name": "sorter", "type": "module", "devDependencies": {"vitest": "2.1.9", "fast-check": "3.23.0"}}` + "\n",
		"vitest.config.js": "export default { test: { setupFiles: [\"./vitest.setup.js\"] } };\n",
		"vitest.setup.js":  seedHook,
		"src/sort.js":      "export const sortNumbers = (xs) => [...xs].sort((a, b) => a - b);\n",
		"src/sort.test.js": `import { describe, test, it, expect } from "vitest";
import fc from "fast-check";
import { sortNumbers } from "./sort.js";

const decoy = "fc.assert(fc.property(fc.integer(), () => false))"; // fc.assert(...)

describe("sortNumbers", () => {
  it("orders its output", () => {
    fc.assert(fc.property(fc.array(fc.integer()), (xs) => {
      const ys = sortNumbers(xs);
      return ys.every((y, i) => i === 0 || ys[i - 1] <= y);
    }));
  });
});

test("keeps the length", () => {
  fc.assert(fc.property(fc.array(fc.integer()), (xs) => sortNumbers(xs).length === xs.length));
});

test("sorts a fixed list", () => {
  /* fc.assert(fc.property(...)) */
  expect(sortNumbers([3, 1, 2]).join()).toBe("1,2,3");
});
`,
		"node_modules/vitest/package.json":     `{"name": "vitest", "type": "module", "exports": {".": "./index.js"}}` + "\n",
		"node_modules/vitest/index.js":         fakeVitestAPI,
		"node_modules/vitest/vitest.mjs":       fakeVitestBin,
		"node_modules/.bin/vitest":             "symlink:../vitest/vitest.mjs",
		"node_modules/fast-check/package.json": `{"name": "fast-check", "type": "module", "exports": {".": "./index.js"}}` + "\n",
		"node_modules/fast-check/index.js":     fakeFastCheck,
	}
}

// initAndCommit runs flakegate init in r, checks what it found, commits
// the file it wrote as the new base and returns the config.
func initAndCommit(t *testing.T, r *repo, wantNames []string) *fgconfig.Config {
	t.Helper()
	// --dry-run writes nothing.
	code, out := r.run("init", "--dry-run")
	if code != 0 {
		t.Fatalf("init --dry-run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "flakegate.yaml")); !os.IsNotExist(err) {
		t.Fatalf("init --dry-run wrote flakegate.yaml (%v)", err)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Fatalf("init --dry-run changed the tree:\n%s", st)
	}
	code, out = r.run("init")
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "flakegate check --base") {
		t.Errorf("init does not say what to do next:\n%s", out)
	}
	raw, err := os.ReadFile(filepath.Join(r.dir, "flakegate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fgconfig.Load(raw, "flakegate.yaml")
	if err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, raw)
	}
	var names []string
	for _, p := range cfg.Properties {
		names = append(names, p.Path+"::"+p.Name)
		if len(p.Seeds) != 3 || p.RandomSeeds != 2 {
			t.Errorf("%s: seeds %v, random_seeds %d", p.ID(), p.Seeds, p.RandomSeeds)
		}
	}
	sort.Strings(names)
	if strings.Join(names, "\n") != strings.Join(wantNames, "\n") {
		t.Fatalf("init found\n%s\nwant\n%s\n%s", strings.Join(names, "\n"), strings.Join(wantNames, "\n"), out)
	}
	// A second init refuses to overwrite it.
	if code, out := r.run("init"); code != 2 || !strings.Contains(out, "exists already") {
		t.Errorf("a second init: exit %d\n%s", code, out)
	}
	r.commit("flakegate init", map[string]string{})
	r.git("tag", "-f", "base")
	return cfg
}

// wantAll checks that every label of a check is label.
func wantAll(t *testing.T, cr *checkRun, code int, label string, n int) {
	t.Helper()
	if cr.summary == nil {
		t.Fatalf("want exit %d and %d × %s, got no summary\n%s", code, n, label, cr)
	}
	labels := cr.labels()
	ok := cr.code == code && len(labels) == n
	for _, l := range labels {
		ok = ok && l == label
	}
	if !ok {
		t.Fatalf("want exit %d and %d × %s\n%s", code, n, label, cr)
	}
}

func TestInitGoRapid(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end with go test")
	}
	needProgram(t, "go")
	r := newRepo(t, initGoModule(t))
	cfg := initAndCommit(t, r, []string{"clamp_test.go::TestClampIdentity", "clamp_test.go::TestClampInRange"})
	for _, p := range cfg.Properties {
		if strings.Join(p.Run, " ") != "go test -count=1 -run ^{name}$ . -rapid.seed={seed} -rapid.nofailfile" || p.Prepare != nil {
			t.Errorf("%s: run %q, prepare %v", p.ID(), p.Run, p.Prepare)
		}
	}
}

func TestInitPytestHypothesis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end with pytest")
	}
	needProgram(t, "pytest")
	r := newRepo(t, initPytestProject())
	cfg := initAndCommit(t, r, []string{"tests/test_stack.py::TestStackMachine", "tests/test_stack.py::test_push_then_pop_reverses"})
	for _, p := range cfg.Properties {
		// The interpreter the sandbox sees that has pytest, by its path.
		if !filepath.IsAbs(p.Run[0]) || strings.Join(p.Run[1:], " ") != "-m pytest -q -p no:cacheprovider {path}::{name} --hypothesis-seed={seed}" || p.Prepare != nil {
			t.Errorf("%s: run %q, prepare %v", p.ID(), p.Run, p.Prepare)
		}
	}
}

func TestInitVitestFastCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end with node")
	}
	needProgram(t, "node")
	r := newRepo(t, initVitestProject())
	if err := os.Chmod(filepath.Join(r.dir, "node_modules", "vitest", "vitest.mjs"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.commit("vitest is executable", map[string]string{})
	r.git("tag", "-f", "base")
	cfg := initAndCommit(t, r, []string{"src/sort.test.js::keeps the length", "src/sort.test.js::sortNumbers orders its output"})
	for _, p := range cfg.Properties {
		if p.Run[0] != "env" || p.Run[1] != "FAST_CHECK_SEED={seed}" || p.PassMarker != nil || p.FailMarker != nil || !p.Batch {
			t.Errorf("%s: run %q, pass marker %v, fail marker %v, batch %v: vitest's own summary and report judge it, in batches", p.ID(), p.Run, p.PassMarker, p.FailMarker, p.Batch)
		}
	}
	r.candidate("buggy", map[string]string{"src/sort.js": "export const sortNumbers = (xs) => [...xs].sort();\n"})
	cr := r.check("--base", "base", "--candidate", "buggy")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PASS,PASS,PASS,PASS,PASS,PROPERTY,PROPERTY,PROPERTY,PROPERTY,PROPERTY" &&
		strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY,PROPERTY,PROPERTY,PROPERTY,PASS,PASS,PASS,PASS,PASS" {
		t.Fatalf("a buggy sort: the ordering property fails on every seed, the length one passes\n%s", cr)
	}
	if !strings.Contains(cr.stderr, "batch of 2 (vitest, seed ") {
		t.Errorf("the two properties of one file, one seed, ran apart: no batch line\n%s", cr.stderr)
	}
}

// TestInitRealNodeRunners is TestInitVitestFastCheck with the real vitest,
// jest and fast-check, installed by the prepare init writes (npm ci, from
// the lock file npm writes here). It needs the npm registry, so it runs
// only with FLAKEGATE_NPM_TESTS=1.
func TestInitRealNodeRunners(t *testing.T) {
	t.Parallel()
	if os.Getenv("FLAKEGATE_NPM_TESTS") != "1" {
		t.Skip("needs the npm registry: set FLAKEGATE_NPM_TESTS=1")
	}
	needProgram(t, "npm")
	for _, tc := range []struct {
		runner, deps, config string
		want                 []string
		bug                  map[string]string
		bugLabels            []string // the labels of the check of bug, in summary order
	}{
		{"vitest", `"vitest": "2.1.9", "fast-check": "3.23.2"`, "",
			[]string{"src/sort.test.js::keeps the length", "src/sort.test.js::sortNumbers orders its output"},
			map[string]string{"src/sort.js": "export const sortNumbers = (xs) => [...xs].sort();\n"},
			// and the suite's plain test, on its 3 order seeds: the
			// listing runs over the npm ci prepare too
			[]string{"PROPERTY", "PROPERTY", "PROPERTY", "PROPERTY", "PROPERTY", "PASS", "PASS", "PASS", "PASS", "PASS", "PASS", "PASS", "PASS"}},
		{"jest", `"jest": "29.7.0", "fast-check": "3.23.2"`, `, "jest": {"setupFilesAfterEnv": ["<rootDir>/jest.setup.js"]}`,
			[]string{"test/sum.test.js::sum commutes", "test/sum.test.js::sum keeps zero (identity)"},
			map[string]string{"src/sum.js": "module.exports = { sum: (a, b) => (a > 0 ? a - b : a + b) };\n"},
			[]string{"PROPERTY", "PROPERTY", "PROPERTY", "PROPERTY", "PROPERTY", "PASS", "PASS", "PASS", "PASS", "PASS"}},
	} {
		t.Run(tc.runner, func(t *testing.T) {
			files := map[string]string{
				"README.md":    "real " + tc.runner + "\n",
				".gitignore":   "node_modules/\n",
				"package.json": `{"name": "real", "private": true, "devDependencies": {` + tc.deps + `}` + tc.config + "}\n",
			}
			if tc.runner == "vitest" {
				v := initVitestProject()
				for _, f := range []string{"src/sort.js", "src/sort.test.js", "vitest.config.js"} {
					files[f] = v[f]
				}
				files["vitest.setup.js"] = seedHook
			} else {
				files["jest.setup.js"] = strings.Replace(seedHook, `import fc from "fast-check";`, `const fc = require("fast-check");`, 1)
				files["src/sum.js"] = "module.exports = { sum: (a, b) => a + b };\n"
				files["test/sum.test.js"] = "const fc = require(\"fast-check\");\nconst { sum } = require(\"../src/sum\");\ndescribe(\"sum\", () => {\n" +
					"  test(\"commutes\", () => { fc.assert(fc.property(fc.integer(), fc.integer(), (a, b) => sum(a, b) === sum(b, a))); });\n" +
					"  test(\"keeps zero (identity)\", () => { fc.assert(fc.property(fc.integer({min: -1000, max: 0}), (a) => sum(a, 0) === a)); });\n});\n"
			}
			r := newRepo(t, files)
			lock := exec.Command("npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund")
			lock.Dir = r.dir
			if out, err := lock.CombinedOutput(); err != nil {
				t.Fatalf("npm install --package-lock-only: %v\n%s", err, out)
			}
			r.commit("lock", map[string]string{})
			r.git("tag", "-f", "base")
			cfg := initAndCommit(t, r, tc.want)
			if cfg.Prepare == nil || cfg.Prepare.Run[0] != "npm" {
				t.Fatalf("prepare %+v", cfg.Prepare)
			}
			for _, p := range cfg.Properties {
				if p.PassMarker != nil || p.FailMarker != nil || !p.Batch {
					t.Errorf("%s: pass marker %v, fail marker %v, batch %v", p.ID(), p.PassMarker, p.FailMarker, p.Batch)
				}
			}
			r.candidate("docs", map[string]string{"README.md": "documented\n"})
			wantAll(t, r.check("--base", "base", "--candidate", "docs"), 0, "PASS", len(tc.bugLabels))
			r.candidate("bug", tc.bug)
			cr := r.check("--base", "base", "--candidate", "bug")
			got := cr.labels()
			sort.Strings(got)
			sort.Strings(tc.bugLabels)
			if cr.code != 1 || strings.Join(got, ",") != strings.Join(tc.bugLabels, ",") {
				t.Fatalf("the regression: want exit 1 and %v\n%s", tc.bugLabels, cr)
			}
		})
	}
}
