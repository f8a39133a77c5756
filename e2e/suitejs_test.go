package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jsSuiteSeeds are the order seeds of the js suite tests: three that
// split order.test.js's orders for both frameworks (jest 1 and 2 run prime
// before read, 3 read first; vitest 1 prime first, 2 and 3 read first), so
// the order candidate's PROPERTY seeds and PASS seeds are both there.
var jsSuiteSeeds = []string{"1", "2", "3"}

const jsSuiteState = "let primed = false;\nexport const prime = () => {\n  primed = true;\n};\nexport const read = () => 1;\n"

const jsSuiteCalc = "export const add = (a, b) => a + b;\nexport const neg = (a) => -a;\nexport const twice = (a) => 2 * a;\n"

// jsSuiteRepo is a jest or vitest project with a suite of six tests:
// tests/calc.test.js (add, neg, and "math twice" in a describe block,
// beside a skipped "math thrice" and a todo "halves", which are no tests)
// and tests/order.test.js, whose "prime" sets module state that "read"
// reads (the candidate "order" makes read see it). Every test of
// order.test.js appends its name to $ORDER_LOG when that is set: a run of
// the real framework outside flakegate says which order a seed gives.
func jsSuiteRepo(t *testing.T, fw jsFramework) *repo { return jsSuiteRepoWith(t, fw, "") }

// jsSuiteRepoWith is jsSuiteRepo with more top-level config lines.
func jsSuiteRepoWith(t *testing.T, fw jsFramework, more string) *repo {
	cfg := "version: 1\nretry_cap: 2\nflake_probe_runs: 0\nreject_flaky_new_tests: true\n" + more + impactOff(more) + "suites:\n  - path: tests\n    framework: " + fw.name +
		"\n    seeds: [" + strings.Join(jsSuiteSeeds, ", ") + "]\n    wall_budget: 120s\n"
	src := map[string]string{
		"src/calc.js":  jsSuiteCalc,
		"src/state.js": jsSuiteState,
		"tests/calc.test.js": `import { describe, test, expect } from "vitest";
import { add, neg, twice } from "../src/calc.js";

test("add", () => {
  expect(add(2, 3)).toBe(5);
});

test("neg", () => {
  expect(neg(2)).toBe(-2);
});

describe("math", () => {
  test("twice", () => {
    expect(twice(4)).toBe(8);
  });
  test.skip("thrice", () => {});
});

test.todo("halves");
`,
		"tests/order.test.js": `import { test, expect } from "vitest";
import { appendFileSync } from "node:fs";
import { prime, read } from "../src/state.js";

const log = (name) => {
  if (process.env.ORDER_LOG) appendFileSync(process.env.ORDER_LOG, name + "\n");
};

test("prime", () => {
  log("prime");
  prime();
});

test("read", () => {
  log("read");
  expect(read()).toBe(1);
});

test("idle", () => {
  log("idle");
});
`,
	}
	if fw.name == "jest" { // jest has describe as a global
		src["tests/calc.test.js"] = strings.Replace(src["tests/calc.test.js"], "import { describe, test, expect } from \"vitest\";\n", "", 1)
	}
	files := jsProject(t, fw, cfg, src)
	files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "sandbox:\n", "sandbox:\n  rw: [\"@FG_STATE@\"]\n  env: [FG_STATE]\n", 1)
	return newRepo(t, files)
}

// jsRealOrder runs the real framework on a clone of the base, outside
// flakegate, with the order flags of a suite record, and returns the
// order order.test.js's tests ran in.
func jsRealOrder(t *testing.T, r *repo, fw jsFramework, flags []string) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--branch", "base", r.dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	logFile := filepath.Join(t.TempDir(), "order.log")
	argv := []string{"node_modules/vitest/vitest.mjs", "run"}
	if fw.name == "jest" {
		argv = []string{"node_modules/jest/bin/jest.js", "--ci"}
	}
	cmd := exec.Command("node", append(append(argv, flags...), "tests/order.test.js")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORDER_LOG="+logFile, "CI=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", fw.name, flags, err, out)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// TestCheckJSSuite: a vitest suite and a jest suite are one triple per
// listed test (describe titles in its name) and order seed, one process
// per seed running every test file in the framework's own shuffle of that
// seed (vitest --sequence.shuffle --sequence.seed, jest --randomize
// --seed). A harmless patch is all PASS; a regression PROPERTY for exactly
// the test it breaks; an order-dependent one (module state "prime" sets
// for "read") PROPERTY for exactly the seeds whose real order, as the
// framework itself runs it outside flakegate, puts prime before read; a
// new test file's tests run new_test_runs times, and one failing 1 run in
// 5 rejects, while the base's tests stay graded; an edited test file's
// tests are graded test by test (the base's version PASSes, the changed
// test is a new test). A read triple's reproduce line (replay
// --suite) replays its batch: fail for a PROPERTY, pass for a PASS.
func TestCheckJSSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			r := jsSuiteRepo(t, fw)
			n := 6 * len(jsSuiteSeeds)
			r.candidate("docs", map[string]string{"README.md": "js suite, documented\n"})
			cr := r.check("--base", "base", "--candidate", "docs")
			if cr.code != 0 || len(cr.summary.Results) != n || len(notPass(cr)) != 0 {
				t.Fatalf("harmless: want %d PASS, exit 0; not pass %v\n%s", n, notPass(cr), cr)
			}
			var names []string
			orders := map[string][]string{}
			for i, res := range cr.summary.Results {
				if res.Seed.String() == "1" {
					names = append(names, res.PropertyPath+"::"+res.Name)
				}
				rec := cr.record(t, i)
				o := rec.Order
				if rec.Suite != "tests" || o == nil || o.Framework != fw.name || o.Seed.String() != res.Seed.String() || o.File != res.PropertyPath {
					t.Fatalf("%s seed %s: record's suite %q order %+v", res.Name, res.Seed, rec.Suite, o)
				}
				if res.PropertyPath == "tests/order.test.js" {
					orders[res.Seed.String()] = o.Flags
					if o.Tests != 3 {
						t.Errorf("order.test.js's order counts %d tests, want 3", o.Tests)
					}
				}
			}
			slices.Sort(names)
			if want := "tests/calc.test.js::add,tests/calc.test.js::math twice,tests/calc.test.js::neg,tests/order.test.js::idle,tests/order.test.js::prime,tests/order.test.js::read"; strings.Join(names, ",") != want {
				t.Fatalf("listed %v, want %s", names, want)
			}
			if c := strings.Count(cr.stderr, "] batch of 6 ("+fw.name+", seed"); c != len(jsSuiteSeeds) {
				t.Errorf("want %d batches of 6 (one per seed), got %d:\n%s", len(jsSuiteSeeds), c, cr.stderr)
			}
			bs := transcriptBatches(t, cr.record(t, 0).TranscriptPath)
			// The order flags, then every test file (in the list's order:
			// jest's own sequence), then the names.
			// The batch's known answers are a test file of their own,
			// planted beside a member (its name drawn): left out here.
			argv := ""
			if len(bs) > 0 {
				argv = strings.Join(slices.DeleteFunc(slices.Clone(bs[0].Argv), func(a string) bool {
					return strings.HasPrefix(a, "tests/") && a != "tests/calc.test.js" && a != "tests/order.test.js"
				}), " ")
			}
			files := []string{"tests/calc.test.js tests/order.test.js", "tests/order.test.js tests/calc.test.js"}
			if !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(argv, strings.Join(orders["1"], " ")+" "+f+" -t ") }) {
				t.Errorf("seed 1's batch: %q (order flags %v)", bs[0].Argv, orders["1"])
			}

			r.candidate("broken", map[string]string{"src/calc.js": fw.source(strings.Replace(jsSuiteCalc, "-a", "a", 1))})
			cr = r.check("--base", "base", "--candidate", "broken")
			var want []string
			for _, s := range jsSuiteSeeds {
				want = append(want, "neg "+s+" PROPERTY")
			}
			if got := notPass(cr); cr.code != 1 || !slices.Equal(got, want) {
				t.Fatalf("regression: want %v, got %v\n%s", want, got, cr)
			}

			want = nil
			for _, s := range jsSuiteSeeds {
				ran := jsRealOrder(t, r, fw, orders[s])
				if len(ran) != 3 {
					t.Fatalf("seed %s ran %v", s, ran)
				}
				if slices.Index(ran, "prime") < slices.Index(ran, "read") {
					want = append(want, "read "+s+" PROPERTY")
				}
			}
			if len(want) == 0 || len(want) == len(jsSuiteSeeds) {
				t.Fatalf("the seeds do not split the two orders: %v", want)
			}
			r.candidate("order", map[string]string{"src/state.js": fw.source(strings.Replace(jsSuiteState, "read = () => 1", "read = () => (primed ? 2 : 1)", 1))})
			cr = r.check("--base", "base", "--candidate", "order")
			if got := notPass(cr); cr.code != 1 || !slices.Equal(got, want) {
				t.Fatalf("order: want %v (the real orders), got %v\n%s", want, got, cr)
			}
			// The reproduce line of a read triple replays its whole batch in
			// the seed's order: fail where the check said PROPERTY, pass
			// where the order puts read first.
			replayed := map[string]bool{}
			for i, res := range cr.summary.Results {
				if res.Name == "read" && !replayed[string(res.Label)] {
					replayed[string(res.Label)] = true
					checkSuiteReproduce(t, cr, i, map[string]int{"PROPERTY": 1, "PASS": 0}[string(res.Label)], 6)
				}
			}
			if !replayed["PROPERTY"] || !replayed["PASS"] {
				t.Errorf("replayed %v, want a PROPERTY and a PASS", replayed)
			}

			newTests := `import { test, expect } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { twice } from "../src/calc.js";

test("new steady", () => {
  expect(twice(21)).toBe(42);
});

test("new flaky", () => {
  const f = join(process.env.FG_STATE, "js-new-runs");
  const n = existsSync(f) ? Number(readFileSync(f, "utf8")) + 1 : 1;
  writeFileSync(f, String(n));
  expect(n).not.toBe(3);
});
`
			r.candidate("newtests", map[string]string{"src/calc.js": fw.source(jsSuiteCalc + "export const half = (a) => a / 2;\n"), "tests/new.test.js": fw.source(newTests)})
			cr = r.check("--base", "base", "--candidate", "newtests")
			nt := cr.summary.NewTests
			if cr.code != 1 || len(notPass(cr)) != 0 || len(cr.summary.Results) != n || len(nt) != 2 {
				t.Fatalf("new tests: want exit 1, %d PASS and two new tests; got %v %+v\n%s", n, notPass(cr), nt, cr)
			}
			byName := map[string]string{}
			for _, x := range nt {
				byName[x.Path+"::"+x.Name] = strings.Join(x.Results, ",")
			}
			if byName["tests/new.test.js::new steady"] != "pass,pass,pass,pass,pass" || byName["tests/new.test.js::new flaky"] != "pass,pass,fail,pass,pass" {
				t.Fatalf("new tests: %+v", nt)
			}

			// An edited test file is graded test by test: the base's
			// version of each test runs (PASS), and the test the patch
			// changed is a new test.
			edited := strings.Replace(r.git("show", "base:tests/calc.test.js"), "toBe(5)", "toBe(5 + 0)", 1)
			r.candidate("edit", map[string]string{"tests/calc.test.js": edited})
			cr = r.check("--base", "base", "--candidate", "edit")
			if got := notPass(cr); cr.code != 0 || len(got) != 0 || len(cr.summary.Results) != n {
				t.Fatalf("edited calc.test.js: want every triple PASS, got %v\n%s", got, cr)
			}
			if nt := cr.summary.NewTests; len(nt) != 1 || nt[0].Path != "tests/calc.test.js" || nt[0].Name != "add" || nt[0].Passed != 5 {
				t.Fatalf("edited calc.test.js: want add, the test it changes, 5 of 5, got %+v\n%s", nt, cr)
			}
		})
	}
}

// TestCheckJSSuiteOneTest: a suite of one test whose name has regular
// expression characters runs it as a batch of one, whose -t pattern
// quotes the name (the template's ^{name}$ would not match it): PASS on
// a harmless patch, PROPERTY on a regression. Its title holds " > ",
// which vitest's list also puts between titles: the name loses it, and
// the test still runs and is judged as itself (before, it was
// INCOMPLETE, "no test named ...", on every check; found on fb55/entities).
func TestCheckJSSuiteOneTest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			cfg := "version: 1\nretry_cap: 1\nflake_probe_runs: 0\nsuites:\n  - path: tests\n    framework: " + fw.name + "\n    seeds: [3]\n    wall_budget: 60s\n"
			r := newRepo(t, jsProject(t, fw, cfg, map[string]string{
				"src/calc.js": jsSuiteCalc,
				"tests/one.test.js": "import { test, expect } from \"vitest\";\nimport { add } from \"../src/calc.js\";\n\n" +
					"test(\"adds (1+1) > [twice]?\", () => {\n  expect(add(1, 1)).toBe(2);\n});\n",
			}))
			r.candidate("docs", map[string]string{"README.md": "one\n"})
			cr := r.check("--base", "base", "--candidate", "docs")
			if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
				t.Fatalf("harmless: want PASS, exit 0\n%s", cr)
			}
			bs := transcriptBatches(t, cr.record(t, 0).TranscriptPath)
			quoted := `-t ^(adds \(1\+1\) > \[twice\]\?|` // jest's name is its full name
			if fw.name == "vitest" {
				quoted = `-t ^(adds(?: > | )\(1\+1\)(?: > | )\[twice\]\?|` // "adds (1+1) [twice]?"
			}
			if len(bs) == 0 || len(bs[0].Members) != 1 || !strings.Contains(strings.Join(bs[0].Argv, " "), quoted) || len(bs[0].KnownAnswers) != 2 {
				t.Fatalf("want a batch of one with the name quoted, and its known answers: %+v", bs[0])
			}
			r.candidate("broken", map[string]string{"src/calc.js": fw.source(strings.Replace(jsSuiteCalc, "a + b", "a - b", 1))})
			if cr = r.check("--base", "base", "--candidate", "broken"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
				t.Fatalf("regression: want PROPERTY, exit 1\n%s", cr)
			}
		})
	}
}

// TestPlanAndDoctorJSSuite: check --plan and doctor list a vitest or jest
// suite on the base tree in the sandbox, as a check does: its six tests
// (the skipped and todo ones left out), their triples, and one process
// per order seed and side.
func TestPlanAndDoctorJSSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel() // jest beside vitest: each runs mostly on one core
			r := jsSuiteRepo(t, fw)
			code, out := planRun(t, r)
			n := len(jsSuiteSeeds) // six tests, one process per seed, base and candidate
			for _, want := range []string{fmt.Sprintf("suites[0] (%s tests) 6 tests, %d triples", fw.name, 6*n), fmt.Sprintf("cost: %d triples; %d attempts in %d processes", 6*n, 12*n, 2*n)} {
				if code != 0 || !strings.Contains(out, want) {
					t.Errorf("plan: exit %d, lacks %q:\n%s", code, want, out)
				}
			}
			code, out = r.run("doctor")
			if want := fmt.Sprintf("ok   suites: suites[0] (%s tests): the base lists 6 tests (0 excluded): %d triples with %d order seeds", fw.name, 6*n, n); !strings.Contains(out, want) {
				t.Errorf("doctor: exit %d, lacks %q:\n%s", code, want, out)
			}
		})
	}
}
