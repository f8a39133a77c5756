package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// jsModules is the node_modules folder of the real jest, vitest and
// fast-check scripts/setup.sh installs from testdata/jsbatch (npm ci into
// a cache folder named by the lockfile's digest). Without it the test
// skips, and fails under CI=true.
func jsModules(t *testing.T) string {
	t.Helper()
	needProgram(t, "node")
	lock, err := os.ReadFile(filepath.Join("..", "testdata", "jsbatch", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "flakegate", "jsbatch-"+hex.EncodeToString(sum[:])[:16], "node_modules")
	for _, p := range []string{"jest/bin/jest.js", "vitest/vitest.mjs", "fast-check/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the real jest and vitest are required under CI: run scripts/setup.sh test (%v)", err)
			}
			t.Skipf("no real jest and vitest (run scripts/setup.sh test): %v", err)
		}
	}
	return dir
}

// jsFramework is how a test project runs one of the two frameworks.
type jsFramework struct {
	name string // jest or vitest
	run  string // the run template of the config
}

var jsFrameworks = []jsFramework{
	{"jest", `[env, "FAST_CHECK_SEED={seed}", node, node_modules/jest/bin/jest.js, --ci, "{path}", -t, "^{name}$"]`},
	{"vitest", `[env, "FAST_CHECK_SEED={seed}", node, node_modules/vitest/vitest.mjs, run, "{path}", -t, "^{name}$"]`},
}

var (
	jsImportFrom = regexp.MustCompile(`(?m)^import (\{[^}]*\}|\w+) from ("[^"]+");$`)
	jsExport     = regexp.MustCompile(`(?m)^export const (\w+) =`)
)

// jsSource writes an ES module for fw: as it is for vitest, as CommonJS
// for jest (imports become requires, exports assignments, and the import
// of vitest's globals goes: jest has them).
func (fw jsFramework) source(src string) string {
	if fw.name == "vitest" {
		return src
	}
	src = strings.Replace(src, `import { test, expect } from "vitest";`+"\n", "", 1)
	src = jsImportFrom.ReplaceAllStringFunc(src, func(m string) string {
		g := jsImportFrom.FindStringSubmatch(m)
		return "const " + g[1] + " = require(" + g[2] + ");"
	})
	return jsExport.ReplaceAllString(src, "exports.$1 =")
}

// jsProject is a test project of fw: package.json, the framework's config
// with the seed hook as a setup file, node_modules (a folder of links to
// the installed packages, so that what the frameworks write there stays
// in the tree) and the files given (sources written by fw.source).
func jsProject(t *testing.T, fw jsFramework, cfg string, files map[string]string) map[string]string {
	mods := jsModules(t)
	out := map[string]string{
		"README.md":      "js batch\n",
		"flakegate.yaml": strings.ReplaceAll(cfg, "@RUN@", fw.run) + "sandbox:\n  ro: [" + filepath.Dir(mods) + "]\n",
		"seed.js": fw.source(`import fc from "fast-check";
const seed = process.env.FAST_CHECK_SEED;
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed) });
`),
	}
	if fw.name == "jest" {
		out["package.json"] = `{"name": "jsb", "private": true, "jest": {"testEnvironment": "node", "setupFiles": ["<rootDir>/seed.js"]}}` + "\n"
	} else {
		out["package.json"] = `{"name": "jsb", "private": true, "type": "module"}` + "\n"
		out["vitest.config.js"] = "export default { test: { setupFiles: [\"./seed.js\"], include: [\"tests/**/*.test.js\"] } };\n"
	}
	entries, err := os.ReadDir(mods)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out["node_modules/"+e.Name()] = "symlink:" + filepath.Join(mods, e.Name())
	}
	for name, src := range files {
		if strings.HasSuffix(name, ".js") && src != "" {
			src = fw.source(src)
		}
		out[name] = src
	}
	return out
}

// jsEntry is one property of a js batch test config.
func jsEntry(file, name, budget string) string {
	return "  - path: " + file + "\n    name: " + name + "\n    seeds: [7]\n    framework: @FW@\n    run: @RUN@\n    wall_budget: " + budget + "\n"
}

// jsConfig is a config of the entries, for fw.
func jsConfig(fw jsFramework, extra string, entries ...string) string {
	cfg := goBatchHead + strings.Join(entries, "")
	cfg = strings.ReplaceAll(cfg, "    wall_budget:", extra+"    wall_budget:")
	return strings.ReplaceAll(cfg, "@FW@", fw.name)
}

// jsBatchFiles is a project of five test files:
//   - leak: five properties that each take from a pool 10 times; the
//     candidate's pool fails after 30 takes in a process, so each test
//     alone passes and the file's suite fails from its fourth test on;
//   - order: "second" fails only when "first" ran before it;
//   - fake: the candidate breaks what "victim" tests, and the product
//     code "forger" loads prints a JSON report and result lines that say
//     every test passed, and registers a passing test named "victim";
//   - broken: the candidate's product code does not parse, so the file
//     fails to run;
//   - ok: a test that passes, and "ghost", an entry for a test the file
//     does not have.
func jsBatchFiles(t *testing.T, fw jsFramework) (base, cand map[string]string) {
	leak := `import { test, expect } from "vitest";
import fc from "fast-check";
import { take } from "../src/pool.js";
`
	var entries []string
	for _, n := range []string{"A", "B", "C", "D", "E"} {
		leak += "\ntest(\"leak " + n + "\", () => {\n  fc.assert(fc.property(fc.integer(), (x) => take(x)), { numRuns: 10 });\n});\n"
		entries = append(entries, jsEntry("tests/leak.test.js", "leak "+n, "60s"))
	}
	entries = append(entries,
		jsEntry("tests/order.test.js", "first", "60s"), jsEntry("tests/order.test.js", "second", "60s"),
		jsEntry("tests/fake.test.js", "forger", "60s"), jsEntry("tests/fake.test.js", "victim", "60s"),
		jsEntry("tests/broken.test.js", "parses", "60s"),
		jsEntry("tests/ok.test.js", "ghost", "60s"), jsEntry("tests/ok.test.js", "ok", "60s"))
	base = jsProject(t, fw, jsConfig(fw, "", entries...), map[string]string{
		"src/pool.js":        "let taken = 0;\nexport const take = (x) => {\n  taken++;\n  return Number.isInteger(x);\n};\n",
		"tests/leak.test.js": leak,
		"src/order.js":       "let marked = false;\nexport const mark = () => {\n  marked = true;\n};\nexport const check = () => true;\n",
		"tests/order.test.js": `import { test, expect } from "vitest";
import { mark, check } from "../src/order.js";

test("first", () => {
  mark();
});

test("second", () => {
  expect(check()).toBe(true);
});
`,
		"src/fake.js": "export const report = () => \"report\";\nexport const add = (a, b) => a + b;\n",
		"tests/fake.test.js": `import { test, expect } from "vitest";
import fc from "fast-check";
import { report, add } from "../src/fake.js";

test("forger", () => {
  expect(report()).toBe("report");
});

test("victim", () => {
  fc.assert(fc.property(fc.integer(), fc.integer(), (a, b) => add(a, b) === b + a));
});
`,
		"src/parse.js": "export const parse = (s) => s.split(\",\");\n",
		"tests/broken.test.js": `import { test, expect } from "vitest";
import { parse } from "../src/parse.js";

test("parses", () => {
  expect(parse("a,b")).toEqual(["a", "b"]);
});
`,
		"tests/ok.test.js": "import { test, expect } from \"vitest\";\n\ntest(\"ok\", () => {\n  expect(1 + 1).toBe(2);\n});\n",
	})
	forged := `{"numTotalTests":13,"numPassedTests":13,"numFailedTests":0,"numPendingTests":0,"numTodoTests":0,"numRuntimeErrorTestSuites":0,"numFailedTestSuites":0,"success":true,"testResults":[]}`
	cand = map[string]string{
		"src/pool.js":  "let taken = 0;\nexport const take = (x) => {\n  taken++;\n  if (taken > 30) throw new Error(\"out of handles\");\n  return Number.isInteger(x);\n};\n",
		"src/order.js": "let marked = false;\nexport const mark = () => {\n  marked = true;\n};\nexport const check = () => !marked;\n",
		"src/fake.js": (`// Forges: a report on stdout, result lines, and a second "victim".
const forged = ` + "`" + forged + "`" + `;
process.stdout.write(forged + "\n");
process.stdout.write("  ✓ victim (1 ms)\n  ✓ tests/fake.test.js > victim 1ms\nTests:       13 passed, 13 total\n");
@REGISTER@
export const report = () => {
  process.stdout.write(forged + "\n");
  return "report";
};
export const add = (a, b) => a - b;
`),
		"src/parse.js": "export const parse = (s) => s.split(\",\";\n",
	}
	register := `globalThis.test("victim", () => {});` // jest's globals
	if fw.name == "vitest" {
		register = `import { test as register } from "vitest";` + "\n" + `register("victim", () => {});`
	}
	for name, src := range cand {
		cand[name] = fw.source(strings.Replace(src, "@REGISTER@", register, 1))
	}
	return base, cand
}

// TestCheckJSBatch: the triples of a jest project, and of a vitest one,
// run as one process per attempt, each judged from the framework's JSON
// report. A leak that only the file's suite reaches and a test that fails
// only after another are PROPERTY, for exactly the tests they break (the
// retry is the same batch: alone they would pass and earn SCHEDULER); a
// victim of product code that forges a report, result lines and a second
// test of its name is INCOMPLETE (reported twice), never PASS; a suite
// that fails to run and a test absent from the report are INCOMPLETE.
func TestCheckJSBatch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			base, cand := jsBatchFiles(t, fw)
			r := newRepo(t, base)
			r.candidate("bad", cand)
			cr := r.check("--base", "base", "--candidate", "bad")
			want := "PASS,PASS,PASS,PROPERTY,PROPERTY,PASS,PROPERTY,PASS,INCOMPLETE,INCOMPLETE,INCOMPLETE,PASS"
			if cr.code != 1 || strings.Join(cr.labels(), ",") != want {
				t.Fatalf("want %s\n%s", want, cr)
			}
			for _, i := range []int{3, 4, 6} {
				rec := cr.record(t, i)
				if rec.CandidateResult != "fail" || rec.BaseSeedResult != "pass" || strings.Join(rec.RetryResults, ",") != "fail,fail" {
					t.Errorf("%s: candidate %s, base %s, retries %v; want fail, pass, fail,fail", rec.Name, rec.CandidateResult, rec.BaseSeedResult, rec.RetryResults)
				}
				verifyTranscript(t, cr.summary.Results[i].Record, rec)
			}
			reasons := map[int]string{8: "reported 2 times", 9: "failed to run", 10: `has no test named "ghost"`}
			for i, want := range reasons {
				if reason := cr.summary.Results[i].Reason; !strings.Contains(reason, want) {
					t.Errorf("%s: reason %q does not say %q", cr.summary.Results[i].Name, reason, want)
				}
			}
			if head := "] batch of 12 (" + fw.name + ", seed 7)"; !strings.Contains(cr.stderr, head) || !strings.Contains(cr.stderr, "PROPERTY tests/leak.test.js::leak D") {
				t.Errorf("no progress line %q for the batch:\n%s", head, cr.stderr)
			}
			bs := transcriptBatches(t, cr.record(t, 3).TranscriptPath)
			if len(bs) != 4 { // the first attempt, the base seed and two retries
				t.Fatalf("leak D's transcript names %d batches, want 4", len(bs))
			}
			// The names, then the known answers; vitest takes " > " or a space
			// at each space of a name (a title may hold " > ", suites/js.go).
			names := `-t ^(leak A|leak B|leak C|leak D|leak E|first|second|forger|victim|parses|ghost|ok|`
			if fw.name == "vitest" {
				names = strings.ReplaceAll(names, "leak ", "leak(?: > | )")
			}
			if argv := strings.Join(bs[0].Argv, " "); len(bs[0].Members) != 12 || !strings.Contains(argv, "--outputFile=") ||
				!strings.Contains(argv, names) || len(bs[0].KnownAnswers) != 2 ||
				!strings.Contains(argv, "tests/leak.test.js tests/order.test.js tests/fake.test.js tests/broken.test.js tests/ok.test.js") {
				t.Errorf("the batch of leak D's first attempt: %+v", bs[0])
			}
			// A second candidate on the same base replays nothing cached.
			r.candidate("docs", map[string]string{"README.md": "js batch, docs\n"})
			docs := r.check("--base", "base", "--candidate", "docs")
			for i, res := range docs.summary.Results {
				if i == 10 { // ghost: an error on base is never cached
					continue
				}
				if !res.BaseCached || res.BaseAttempts != 1 {
					t.Errorf("second candidate: %s base_cached %v, %d base attempts", res.Name, res.BaseCached, res.BaseAttempts)
				}
			}
		})
	}
}

// TestCheckJSBatchMatchesAlone: fast-check properties of two files (one
// in a describe block) give the same labels in a batch and one by one (batch:
// false), for jest and for vitest; the records of triples run alone name
// no batch.
func TestCheckJSBatchMatchesAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			prop := func(mod string) string {
				return "import { test, expect } from \"vitest\";\nimport fc from \"fast-check\";\nimport { clamp, sorted } from \"../src/" + mod + ".js\";\n\n" +
					"test(\"clamps\", () => {\n  fc.assert(fc.property(fc.integer(), (x) => { const y = clamp(x); return y >= 0 && y <= 10; }));\n});\n\n" +
					"describe(\"sort\", () => {\n  test(\"orders\", () => {\n    fc.assert(fc.property(fc.array(fc.integer()), (xs) => { const ys = sorted(xs); return ys.every((y, i) => i === 0 || ys[i - 1] <= y); }));\n  });\n});\n"
			}
			good := "export const clamp = (x) => Math.min(10, Math.max(0, x));\nexport const sorted = (xs) => [...xs].sort((a, b) => a - b);\n"
			var got []string
			for _, extra := range []string{"", "    batch: false\n"} {
				var entries []string
				for _, f := range []string{"tests/p1.test.js", "tests/p2.test.js"} {
					for _, n := range []string{"clamps", "sort orders"} {
						entries = append(entries, jsEntry(f, n, "60s"))
					}
				}
				files := map[string]string{"src/p1.js": good, "src/p2.js": good, "tests/p1.test.js": prop("p1"), "tests/p2.test.js": prop("p2")}
				if fw.name == "vitest" {
					for _, f := range []string{"tests/p1.test.js", "tests/p2.test.js"} {
						files[f] = strings.Replace(files[f], "import { test, expect }", "import { describe, test, expect }", 1)
					}
				}
				r := newRepo(t, jsProject(t, fw, jsConfig(fw, extra, entries...), files))
				// p2 sorts as strings: "sort orders" fails for p2.
				r.candidate("bad", map[string]string{"src/p2.js": fw.source("export const clamp = (x) => Math.min(10, Math.max(0, x));\nexport const sorted = (xs) => [...xs].sort();\n")})
				cr := r.check("--base", "base", "--candidate", "bad")
				if cr.code != 1 {
					t.Fatalf("batch %q:\n%s", extra, cr)
				}
				got = append(got, strings.Join(cr.labels(), ","))
				batched := len(transcriptBatches(t, cr.record(t, 0).TranscriptPath)) > 0
				if batched != (extra == "") {
					t.Errorf("batch %q: the transcript names a batch: %v", extra, batched)
				}
			}
			if want := "PASS,PASS,PASS,PROPERTY"; got[0] != want || got[1] != want {
				t.Fatalf("batched %s, alone %s; want %s for both", got[0], got[1], want)
			}
		})
	}
}

// TestCheckJSBatchOwnBudget: a member's own time in the JSON report is
// held against its wall_budget: over it is BUDGET, in a batch that was not
// killed, and the member beside it keeps its PASS.
func TestCheckJSBatchOwnBudget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			test := "import { test, expect } from \"vitest\";\nimport { nap } from \"../src/nap.js\";\n\n" +
				"test(\"quick\", () => {});\n\ntest(\"slow\", () => {\n  nap();\n});\n"
			cfg := jsConfig(fw, "", jsEntry("tests/n.test.js", "quick", "60s"), jsEntry("tests/n.test.js", "slow", "2s"))
			r := newRepo(t, jsProject(t, fw, cfg, map[string]string{"src/nap.js": "export const nap = () => {};\n", "tests/n.test.js": test}))
			r.candidate("slow", map[string]string{"src/nap.js": fw.source("export const nap = () => {\n  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3500);\n};\n")})
			cr := r.check("--base", "base", "--candidate", "slow")
			if want := "PASS,BUDGET"; cr.code != 1 || strings.Join(cr.labels(), ",") != want {
				t.Fatalf("want %s\n%s", want, cr)
			}
			if reason := cr.summary.Results[1].Reason; !strings.Contains(reason, "over its wall budget") {
				t.Errorf("slow's reason %q does not name its own time", reason)
			}
			if bs := transcriptBatches(t, cr.record(t, 1).TranscriptPath); len(bs) == 0 || len(bs[0].Members) != 2 {
				t.Errorf("slow's first attempt ran in %+v; want the batch of both", bs)
			}
		})
	}
}
