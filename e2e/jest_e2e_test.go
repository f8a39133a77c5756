package e2e_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// The stand-in node_modules of a jest project (no registry here): the
// parts of jest and fast-check these tests use, a few lines each.
const (
	// fakeJestBin is "jest [--ci] [--json] FILE [-t PATTERN]": it reads
	// jest.config.js (else package.json's "jest"), runs the files of
	// setupFilesAfterEnv, passes the test file through the transform whose
	// pattern matches it (as jest does: process(src, file).code), runs the
	// tests whose name matches and prints jest's report: "Test suite failed
	// to run" and "Tests: 0 total" when the file cannot load, the summary
	// line, and with --json jest's JSON report on stdout.
	fakeJestBin = `#!/usr/bin/env node
const fs = require("fs"), path = require("path"), { createRequire } = require("module");
const args = process.argv.slice(2);
let file, pattern, json = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "-t") pattern = new RegExp(args[++i]);
  else if (args[i] === "--json") json = true;
  else if (!args[i].startsWith("--")) file = args[i];
}
const root = process.cwd();
let cfg = {};
if (fs.existsSync(path.join(root, "jest.config.js"))) cfg = require(path.join(root, "jest.config.js"));
else cfg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).jest || {};
const at = (p) => path.resolve(root, p.replace("<rootDir>/", ""));
const tests = [];
const g = { test: (name, fn) => tests.push({ name, fn }), describe: (name, fn) => fn() };
g.it = g.test;
const log = (s) => (json ? process.stderr : process.stdout).write(s + "\n");
const report = (passed, failed, skipped, message) => {
  if (message !== undefined) {
    log(" FAIL  " + file + "\n  ● Test suite failed to run\n\n    " + message.split("\n").join("\n    ") + "\n");
    log("Test Suites: 1 failed, 1 total\nTests:       0 total");
  } else {
    const parts = [];
    if (failed) parts.push(failed + " failed");
    if (skipped) parts.push(skipped + " skipped");
    if (passed) parts.push(passed + " passed");
    log("Test Suites: " + (failed ? "1 failed" : "1 passed") + ", 1 total\nTests:       " + parts.join(", ") + ", " + (passed + failed + skipped) + " total");
  }
  if (json) {
    process.stdout.write(JSON.stringify({ numFailedTestSuites: failed || message !== undefined ? 1 : 0, numFailedTests: failed, numPassedTests: passed,
      numPendingTests: skipped, numRuntimeErrorTestSuites: message !== undefined ? 1 : 0, numTodoTests: 0, numTotalTestSuites: 1,
      numTotalTests: passed + failed + skipped, success: !failed && message === undefined,
      testResults: [{ name: path.resolve(file), status: failed || message !== undefined ? "failed" : "passed", message: message !== undefined ? "  ● Test suite failed to run\n\n" + message : "" }] }) + "\n");
  }
  process.exit(failed || message !== undefined ? 1 : 0);
};
try {
  for (const s of cfg.setupFilesAfterEnv || []) require(at(s));
  let src = fs.readFileSync(path.resolve(file), "utf8");
  for (const [re, target] of Object.entries(cfg.transform || {})) {
    if (new RegExp(re).test(file)) src = require(at(Array.isArray(target) ? target[0] : target)).process(src, path.resolve(file)).code;
  }
  const req = createRequire(path.resolve(file));
  new Function("require", "test", "it", "describe", src)(req, g.test, g.it, g.describe);
} catch (e) {
  report(0, 0, 0, String(e && e.stack ? e.stack.split("\n")[0] : e));
}
let passed = 0, failed = 0, skipped = 0;
for (const t of tests) {
  if (pattern && !pattern.test(t.name)) { skipped++; continue; }
  try { t.fn(); passed++; log("  ✓ " + t.name + " (1 ms)"); }
  catch (e) { failed++; log("  ✕ " + t.name + " (1 ms)\n    " + e.message); }
}
report(passed, failed, skipped);
`
	// fakeFastCheckCJS is fakeFastCheck for CommonJS, with fast-check's
	// own reading of a seed: its low 32 bits. It prints the seed that ran.
	fakeFastCheckCJS = `// A stand-in for fast-check, for flakegate's tests.
let global = {};
const rng = (seed) => { let s = seed >>> 0; return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; };
module.exports = {
  configureGlobal: (p) => { global = p; },
  readConfigureGlobal: () => global,
  integer: () => (r) => Math.floor(r() * 2001) - 1000,
  array: (arb) => (r) => Array.from({ length: Math.floor(r() * 20) }, () => arb(r)),
  property: (...args) => ({ arbs: args.slice(0, -1), pred: args[args.length - 1] }),
  assert(p, params = {}) {
    const seed = params.seed ?? global.seed;
    if (seed === undefined || Number.isNaN(seed)) throw new Error("fake fast-check: no seed given");
    console.log("fast-check ran seed " + (seed >>> 0));
    const r = rng(seed);
    for (let run = 0; run < (params.numRuns ?? 100); run++) {
      const vals = p.arbs.map((a) => a(r));
      if (p.pred(...vals) === false) throw new Error("Property failed after " + (run + 1) + " tests\n{ seed: " + seed + " }\nCounterexample: " + JSON.stringify(vals));
    }
  },
};
`
)

// jestProject: fast-check properties in a jest test file, whose
// transform (tools/transform.js, named by jest.config.js) jest applies
// to every test file before it runs.
func jestProject(run string) map[string]string {
	return map[string]string{
		"README.md":    "sort\n",
		"package.json": `{"name": "sorter", "devDependencies": {"jest": "29.7.0", "fast-check": "3.23.2"}}` + "\n",
		"jest.config.js": `module.exports = {
  transform: { "\\.test\\.js$": "<rootDir>/tools/transform.js" },
  setupFilesAfterEnv: ["<rootDir>/jest.setup.js"],
};
`,
		"jest.setup.js":      strings.Replace(seedHook, `import fc from "fast-check";`, `const fc = require("fast-check");`, 1),
		"tools/transform.js": "// Strips a license banner; what jest runs is what this returns.\nmodule.exports = { process: (src) => ({ code: src.replace(/^\\/\\/ banner.*\\n/, \"\") }) };\n",
		"src/sort.js":        "exports.sortNumbers = (xs) => [...xs].sort((a, b) => a - b);\n",
		"src/sort.test.js": `// banner: sorter tests
const fc = require("fast-check");
const { sortNumbers } = require("./sort.js");

test("orders its output", () => {
  fc.assert(fc.property(fc.array(fc.integer()), (xs) => {
    const ys = sortNumbers(xs);
    return ys.every((y, i) => i === 0 || ys[i - 1] <= y);
  }));
});

test("keeps the length", () => {
  fc.assert(fc.property(fc.array(fc.integer()), (xs) => sortNumbers(xs).length === xs.length));
});
`,
		"node_modules/jest/package.json":       `{"name": "jest", "bin": {"jest": "bin/jest.js"}}` + "\n",
		"node_modules/jest/bin/jest.js":        fakeJestBin,
		"node_modules/fast-check/package.json": `{"name": "fast-check", "main": "index.js"}` + "\n",
		"node_modules/fast-check/index.js":     fakeFastCheckCJS,
		"flakegate.yaml": `version: 1
retry_cap: 1
workers: 2
properties:
  - path: src/sort.test.js
    name: orders its output
    seeds: [1, 2]
    run: ` + run + `
    wall_budget: 60s
`,
	}
}

const jestRun = `[env, "FAST_CHECK_SEED={seed}", node, node_modules/jest/bin/jest.js, --ci, "{path}", -t, "^orders its output$"]`

// TestCheckJestTransformIsInfrastructure: a patch that keeps its
// regression and makes the file jest.config.js names under transform
// rewrite every fc.assert so that it checks nothing is CONTAMINATED (the
// transform decides what runs as much as the test file does); the
// regression alone is PROPERTY.
func TestCheckJestTransformIsInfrastructure(t *testing.T) {
	t.Parallel()
	needProgram(t, "node")
	files := jestProject(jestRun)
	r := newRepo(t, files)
	regress := "exports.sortNumbers = (xs) => [...xs].sort();\n"
	r.candidate("weakened", map[string]string{
		"src/sort.js":        regress,
		"tools/transform.js": "module.exports = { process: (src) => ({ code: src.replace(/fc\\.assert\\(/g, \"((p) => p)(\") }) };\n",
	})
	r.candidate("regression", map[string]string{"src/sort.js": regress})
	cr := r.check("--base", "base", "--candidate", "weakened")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "CONTAMINATED,CONTAMINATED" {
		t.Fatalf("a transform that rewrites fc.assert, with a regression\n%s", cr)
	}
	if why := cr.summary.Results[0].Reason; !strings.Contains(why, "tools/transform.js (transform of jest.config.js)") {
		t.Errorf("reason %q", why)
	}
	if cr := r.check("--base", "base", "--candidate", "regression"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("the regression alone\n%s", cr)
	}
}

// TestCheckJestFailedToRunIsIncomplete: a jest suite that failed to run
// (a syntax error or a missing module in the code it loads: "Test suite
// failed to run", "Tests: 0 total") is INCOMPLETE, an error, not PROPERTY:
// no test ran. Both with jest's text report and its JSON reporter
// (--json); a harmless patch passes on the same evidence.
func TestCheckJestFailedToRunIsIncomplete(t *testing.T) {
	t.Parallel()
	needProgram(t, "node")
	for name, run := range map[string]string{"text": jestRun, "json": strings.Replace(jestRun, "--ci,", "--ci, --json,", 1)} {
		t.Run(name, func(t *testing.T) { jestFailedToRun(t, run) })
	}
}

func jestFailedToRun(t *testing.T, run string) {
	{
		r := newRepo(t, jestProject(run))
		r.candidate("syntax", map[string]string{"src/sort.js": "exports.sortNumbers = (xs) => [...xs].sort((a, b) => a - b;\n"})
		r.candidate("missing", map[string]string{"src/sort.js": "const { cmp } = require(\"./cmp.js\");\nexports.sortNumbers = (xs) => [...xs].sort(cmp);\n"})
		r.candidate("docs", map[string]string{"README.md": "sort, documented\n"})
		for _, tag := range []string{"syntax", "missing"} {
			cr := r.check("--base", "base", "--candidate", tag)
			if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" {
				t.Fatalf("%s, %s: a suite that failed to run\n%s", run, tag, cr)
			}
			if why := cr.summary.Results[0].Reason; !strings.Contains(why, "jest: orders its output did not run") {
				t.Errorf("%s, %s: reason %q", run, tag, why)
			}
		}
		if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
			t.Fatalf("%s: a harmless patch\n%s", run, cr)
		}
	}
}

// TestCheckFastCheckDrawnSeedRuns: a seed drawn for a fast-check property
// fits the 32 bits fast-check reads, so the seed that ran is the seed the
// record names (a drawn 53-bit seed used to run as its low 32 bits).
func TestCheckFastCheckDrawnSeedRuns(t *testing.T) {
	t.Parallel()
	needProgram(t, "node")
	files := jestProject(jestRun)
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "seeds: [1, 2]", "seeds: [1]\n    random_seeds: 3", 1)
	r := newRepo(t, files)
	r.candidate("docs", map[string]string{"README.md": "sort, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS,PASS,PASS" {
		t.Fatalf("a harmless patch\n%s", cr)
	}
	ranRe := regexp.MustCompile(`fast-check ran seed (\d+)`)
	drawn := 0
	for i, res := range cr.summary.Results {
		rec := cr.record(t, i)
		for _, a := range rec.Attempts {
			m := ranRe.FindStringSubmatch(a.OutputTail)
			if m == nil || m[1] != res.Seed.String() {
				t.Errorf("record %d names seed %s; its %s attempt ran %v", i, res.Seed, a.Side, m)
			}
		}
		raw, _ := json.Marshal(res)
		if strings.Contains(string(raw), `"drawn"`) || res.Seed.String() != "1" {
			drawn++
		}
	}
	if drawn != 3 {
		t.Errorf("%d drawn seeds, want 3\n%s", drawn, cr)
	}
	// A listed seed fast-check cannot take is refused at load.
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "seeds: [1]", "seeds: [1, 5651993075323525]", 1)
	r2 := newRepo(t, files)
	r2.candidate("docs", map[string]string{"README.md": "sort, documented\n"})
	if cr := r2.check("--base", "base", "--candidate", "docs"); cr.code != 2 || !strings.Contains(cr.stderr, "seed 5651993075323525 is outside what fast-check (framework jest) takes") {
		t.Errorf("a listed seed outside fast-check's range\n%s", cr)
	}
}
