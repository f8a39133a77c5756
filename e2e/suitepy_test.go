package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const pyCalc = "cache = {}\n\n\ndef value(i):\n    return i\n\n\ndef prime():\n    cache['k'] = 1\n\n\ndef get():\n    return cache.get('k', 1)\n\n\ndef work():\n    pass\n"

// pySuiteRepo is a pytest project of 10 tests: eight plain ones in
// tests/test_calc.py, the order pair test_prime / test_read in
// tests/test_order.py, and a test with a deadline in tests/test_timing.py.
func pySuiteRepo(t *testing.T) *repo {
	var calc strings.Builder
	calc.WriteString("import calc\n")
	for i := range 7 {
		calc.WriteString("\n\ndef test_v" + string(rune('0'+i)) + "():\n    assert calc.value(" + string(rune('0'+i)) + ") == " + string(rune('0'+i)) + "\n")
	}
	return newRepo(t, map[string]string{
		"README.md": "py suite\n",
		"calc.py":   pyCalc,
		"flakegate.yaml": `version: 1
retry_cap: 2
flake_probe_runs: 0
reject_flaky_new_tests: true
impact: false
sandbox:
  rw: ["@FG_STATE@"]
  env: [FG_STATE]
suites:
  - path: tests
    framework: pytest
    seeds: [5, 6, 7, 8]
    wall_budget: 120s
`,
		"tests/test_calc.py":   calc.String(),
		"tests/test_order.py":  "import calc\n\n\ndef test_prime():\n    calc.prime()\n\n\ndef test_read():\n    assert calc.get() == 1\n",
		"tests/test_timing.py": "import threading\n\nimport calc\n\n\ndef test_deadline():\n    t = threading.Thread(target=calc.work)\n    t.start()\n    t.join(1.0)\n    assert not t.is_alive(), 'work missed its 1s deadline'\n",
	})
}

// pyRank is the order key of a node id for an order seed (what the check
// sorts the command line's node ids by).
func pyRank(seed, node string) string {
	h := sha256.Sum256([]byte(seed + "\x00" + node))
	return hex.EncodeToString(h[:])
}

// TestCheckPytestSuite: a pytest suite is one triple per node id and
// order seed, one pytest process per seed with the node ids in the
// seed's order. A harmless patch is all PASS; a regression PROPERTY for
// exactly its test; an order-dependent one PROPERTY for exactly the
// seeds that run test_prime before test_read; a first run over its
// deadline SCHEDULER; a new test file's tests run new_test_runs times,
// and one failing 1 run in 5 rejects, while the base's tests stay graded.
// The suite runs two of pySuiteRepo's four order seeds, 5 and 6, which
// split the order pair (6 runs test_prime before test_read, 5 does not):
// each further seed cost every one of the five checks a pytest process
// per side and told nothing new.
func TestCheckPytestSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := pySuiteRepo(t)
	seeds := []string{"5", "6"}
	cfg := r.git("show", "base:flakegate.yaml")
	fewer := strings.Replace(cfg, "seeds: [5, 6, 7, 8]", "seeds: ["+strings.Join(seeds, ", ")+"]", 1)
	if fewer == cfg {
		t.Fatalf("the suite's seeds are not [5, 6, 7, 8]:\n%s", cfg)
	}
	r.commit("two order seeds", map[string]string{"flakegate.yaml": fewer + "\n"})
	r.git("tag", "-f", "base")
	all := 10 * len(seeds)
	r.candidate("docs", map[string]string{"README.md": "py suite, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if cr.code != 0 || len(cr.summary.Results) != all || len(notPass(cr)) != 0 {
		t.Fatalf("harmless: want %d PASS, exit 0; not pass %v\n%s", all, notPass(cr), cr)
	}
	rec := cr.record(t, 0)
	if rec.Suite != "tests" || rec.Order == nil || rec.Order.Framework != "pytest" || rec.Order.Tests != 10 {
		t.Fatalf("record's suite %q order %+v", rec.Suite, rec.Order)
	}
	if n := strings.Count(cr.stderr, "] batch of 10 (pytest, seed"); n != len(seeds) {
		t.Errorf("want %d batches of 10 (one per seed), got %d:\n%s", len(seeds), n, cr.stderr)
	}
	// The first batch's node ids are in seed 5's order.
	nodes := []string{"tests/test_order.py::test_prime", "tests/test_order.py::test_read", "tests/test_timing.py::test_deadline"}
	for i := range 7 {
		nodes = append(nodes, "tests/test_calc.py::test_v"+string(rune('0'+i)))
	}
	sort.Slice(nodes, func(a, b int) bool { return pyRank("5", nodes[a]) < pyRank("5", nodes[b]) })
	// The batch's own argv (its transcript) names them in that order.
	var argv []string
	known := map[string]bool{} // the batch's known answers, on its command line too
	for i, res := range cr.summary.Results {
		if res.Seed.String() == "5" {
			if bs := transcriptBatches(t, cr.record(t, i).TranscriptPath); len(bs) > 0 {
				argv = bs[0].Argv
				for _, k := range bs[0].KnownAnswers {
					known[k.Test] = true
				}
			}
			break
		}
	}
	var ran []string
	for _, a := range argv {
		if strings.HasPrefix(a, "tests/") && !known[a] {
			ran = append(ran, a)
		}
	}
	if len(known) != 2 {
		t.Errorf("seed 5's batch carries the known answers %v, want 2", known)
	}
	if !slices.Equal(ran, nodes) {
		t.Errorf("seed 5's batch ran %v, want the order %v (argv %q)", ran, nodes, argv)
	}

	r.candidate("broken", map[string]string{"calc.py": strings.Replace(pyCalc, "    return i\n", "    return i + (i == 4)\n", 1)})
	cr = r.check("--base", "base", "--candidate", "broken")
	if got, want := notPass(cr), []string{"test_v4 5 PROPERTY", "test_v4 6 PROPERTY"}; cr.code != 1 || !slices.Equal(got, want) {
		t.Fatalf("regression: want %v, got %v\n%s", want, got, cr)
	}

	var wantOrder []string
	for _, s := range seeds {
		if pyRank(s, "tests/test_order.py::test_prime") < pyRank(s, "tests/test_order.py::test_read") {
			wantOrder = append(wantOrder, "test_read "+s+" PROPERTY")
		}
	}
	if len(wantOrder) == 0 || len(wantOrder) == len(seeds) {
		t.Fatalf("the seeds do not split the two orders: %v", wantOrder)
	}
	r.candidate("order", map[string]string{"calc.py": strings.Replace(pyCalc, "cache['k'] = 1", "cache['k'] = 2", 1)})
	cr = r.check("--base", "base", "--candidate", "order")
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, wantOrder) {
		t.Fatalf("order: want %v, got %v\n%s", wantOrder, got, cr)
	}

	slow := "def work():\n    import os, time\n    f = os.path.join(os.environ['FG_STATE'], 'py-timing-first-run')\n    if not os.path.exists(f):\n        open(f, 'w').close()\n        time.sleep(3)\n"
	r.candidate("timing", map[string]string{"calc.py": strings.Replace(pyCalc, "def work():\n    pass\n", slow, 1)})
	cr = r.check("--base", "base", "--candidate", "timing")
	if got := notPass(cr); cr.code != 0 || !slices.Equal(got, []string{"test_deadline 5 SCHEDULER"}) {
		t.Fatalf("timing: want [test_deadline 5 SCHEDULER], got %v\n%s", got, cr)
	}

	newTests := "import os\n\nimport calc\n\n\ndef test_new():\n    assert calc.value(42) == 42\n\n\n" +
		"def test_flaky_new():\n    f = os.path.join(os.environ['FG_STATE'], 'py-new-runs')\n    n = int(open(f).read()) + 1 if os.path.exists(f) else 1\n    open(f, 'w').write(str(n))\n    assert n != 3, 'the third run fails'\n"
	r.candidate("newtests", map[string]string{"calc.py": pyCalc + "\n\ndef double(i):\n    return 2 * i\n", "tests/test_new.py": newTests})
	cr = r.check("--base", "base", "--candidate", "newtests")
	nt := cr.summary.NewTests
	if cr.code != 1 || len(notPass(cr)) != 0 || len(cr.summary.Results) != all || len(nt) != 2 {
		t.Fatalf("new tests: want exit 1, %d PASS and two new tests; got %v %+v\n%s", all, notPass(cr), nt, cr)
	}
	byName := map[string]string{}
	for _, n := range nt {
		byName[n.Path+"::"+n.Name] = strings.Join(n.Results, ",")
	}
	if byName["tests/test_new.py::test_new"] != "pass,pass,pass,pass,pass" || byName["tests/test_new.py::test_flaky_new"] != "pass,pass,fail,pass,pass" {
		t.Fatalf("new tests: %+v", nt)
	}
}

// TestCheckPytestSuiteLongNodeID: a parametrised test whose node id holds
// its arguments (pytest writes bytes as \x80...) is gated like any other,
// and its record gets a file name the file system takes; one over the
// 512 bytes a name may hold is not gated, and the check says so. Found on
// python-attrs/attrs, where test_can_unpickle[...] made a check stop
// with "file name too long" after ten minutes, its results lost.
func TestCheckPytestSuiteLongNodeID(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := newRepo(t, map[string]string{
		"README.md":      "long ids\n",
		"flakegate.yaml": "version: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: tests\n    framework: pytest\n    seeds: [1]\n    wall_budget: 120s\n",
		"tests/test_blob.py": "import pytest\n\n\n@pytest.mark.parametrize('blob', [b'\\x80\\x05\\x95' * 30 + b'A', b'\\x80\\x05\\x95' * 30 + b'B', b'\\x80' * 200])\n" +
			"def test_unpickle(blob):\n    assert blob[:1] == b'\\x80'\n\n\ndef test_short():\n    pass\n",
	})
	r.candidate("docs", map[string]string{"README.md": "long ids, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if cr.code != 0 || len(cr.summary.Results) != 3 || len(notPass(cr)) != 0 {
		t.Fatalf("want 3 PASS and exit 0, got %v\n%s", notPass(cr), cr)
	}
	// The third case's node id is over 512 bytes: no triple can name
	// it, and the check says it is not gated.
	if !strings.Contains(cr.stderr, "suites[0]: 1 listed test is not gated: a name longer than 512 bytes or with a control character cannot be a triple's (\"tests/test_blob.py::test_unpickle[") {
		t.Errorf("no note of the test left out:\n%s", cr.stderr)
	}
	seen := map[string]bool{}
	for i, res := range cr.summary.Results {
		base := filepath.Base(res.Record)
		if len(base) > 200 || seen[base] {
			t.Errorf("record file %q (%d bytes): too long, or named twice", base, len(base))
		}
		seen[base] = true
		if rec := cr.record(t, i); rec.Name != res.Name {
			t.Errorf("record %s names %q, want %q", base, rec.Name, res.Name)
		}
	}
}

// TestCheckPytestSuiteIDsWithSpaces: a parametrized case's node id may
// hold spaces, a ";", quotes and " - " (pypa/packaging's markers tests).
// Such a test runs alone, and pytest's "PASSED <node id>" line names it
// whole: a harmless patch is all PASS with exit 0 (each was INCOMPLETE,
// exit 1, when a node id was read up to its first space), and a
// regression in one case is PROPERTY for that case alone.
func TestCheckPytestSuiteIDsWithSpaces(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := newRepo(t, map[string]string{
		"README.md":      "ids with spaces\n",
		"calc.py":        "def add(a, b):\n    return a + b\n",
		"pytest.ini":     "[pytest]\npythonpath = .\n",
		"flakegate.yaml": "version: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: tests\n    framework: pytest\n    seeds: [1]\n    wall_budget: 120s\n",
		"tests/test_calc.py": "import pytest\n\nfrom calc import add\n\n\n" +
			"@pytest.mark.parametrize('a,b', [(1, 2), (3, 4), (5, 6)], ids=['one two', '; \"3.\" not in v-[a,b]', 'x - y'])\n" +
			"def test_add(a, b):\n    assert add(a, b) == a + b\n\n\ndef test_plain():\n    assert add(1, 1) == 2\n",
	})
	r.candidate("harmless", map[string]string{"calc.py": "def add(a, b):\n    # the sum\n    return a + b\n"})
	cr := r.check("--base", "base", "--candidate", "harmless")
	if cr.code != 0 || len(cr.summary.Results) != 4 || len(notPass(cr)) != 0 {
		t.Fatalf("harmless: want 4 PASS and exit 0, got %v\n%s", notPass(cr), cr)
	}
	r.candidate("regress", map[string]string{"calc.py": "def add(a, b):\n    return a + b + (a == 3)\n"})
	cr = r.check("--base", "base", "--candidate", "regress")
	if got := notPass(cr); cr.code != 1 || len(got) != 1 || got[0] != `test_add[; "3." not in v-[a,b]] 1 PROPERTY` {
		t.Fatalf("regression: want one PROPERTY for the second case and exit 1, got %q\n%s", got, cr)
	}
}

// TestCheckPytestSuiteBaseSkips: a test the base's pytest skips without
// running it (a skip mark, a skipif that holds) or expects to fail (an
// xfail mark that holds, run=False or not; pytest's own evaluation of
// the marks tells them) passes on no tree, so it is not gated: a harmless patch exits 0 and the check says which tests it
// left out, as doctor does in its count. A test the candidate makes skip
// itself (a conftest.py the patch adds) is still INCOMPLETE, and so is
// one that skips itself while it runs, which no plan can see.
func TestCheckPytestSuiteBaseSkips(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	tests := "import sys\n\nimport pytest\n\nimport lib\n\n\ndef test_ok():\n    lib.ok()\n\n\n" +
		"@pytest.mark.skip(reason='not here')\ndef test_marked():\n    assert False\n\n\n" +
		"@pytest.mark.skipif(sys.platform == 'linux', reason='not on linux')\n@pytest.mark.parametrize('x', [1, 2])\ndef test_cases(x):\n    assert False\n\n\n" +
		"@pytest.mark.xfail(run=False)\ndef test_never():\n    assert False\n\n\n" +
		"@pytest.mark.xfail(reason='known')\ndef test_known():\n    assert False\n\n\n" +
		"@pytest.mark.xfail(sys.platform == 'win32', reason='windows only')\ndef test_cond():\n    pass\n\n\n" +
		"def test_gone():\n    pytest.skip('decided while running')\n"
	r := newRepo(t, map[string]string{
		"README.md": "py skips\n",
		"lib.py":    "def ok():\n    pass\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
impact: false
suites:
  - path: tests
    framework: pytest
    seeds: [5, 6]
    wall_budget: 120s
`,
		"tests/test_s.py": tests,
	})
	code, out := r.run("doctor")
	if !strings.Contains(out, "suites[0] (pytest tests): the base lists 3 tests (0 excluded, 5 the base skips): 6 triples with 2 order seeds") {
		t.Fatalf("doctor: exit %d, want the suite's count to leave out what the base skips\n%s", code, out)
	}

	r.candidate("docs", map[string]string{"README.md": "py skips, documented\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	got := map[string]string{}
	for _, res := range cr.summary.Results {
		got[res.Name+" "+res.Seed.String()] = string(res.Label)
	}
	want := map[string]string{"test_ok 5": "PASS", "test_ok 6": "PASS", "test_cond 5": "PASS", "test_cond 6": "PASS", "test_gone 5": "INCOMPLETE", "test_gone 6": "INCOMPLETE"}
	if cr.code != 1 || !maps.Equal(got, want) {
		t.Fatalf("harmless: want %v (test_gone skips itself while it runs; test_cond's xfail does not hold), exit 1; got %v\n%s", want, got, cr)
	}
	if !strings.Contains(cr.stderr, `suites[0]: 5 listed tests are not gated: the base skips them or expects them to fail, so no run of them passes ("tests/test_s.py::test_marked" skipped, "tests/test_s.py::test_cases[1]" skipped, "tests/test_s.py::test_cases[2]" skipped)`) {
		t.Errorf("the check does not say which tests the base skips:\n%s", cr.stderr)
	}

	// With test_gone excluded, a harmless patch passes; a patch whose
	// code makes test_ok skip itself is INCOMPLETE.
	r.candidate("base2", map[string]string{"flakegate.yaml": strings.Replace(r.git("show", "base:flakegate.yaml"), "wall_budget: 120s", "wall_budget: 120s\n    exclude: [test_gone]", 1)})
	r.commit("hide", map[string]string{"lib.py": "import pytest\n\n\ndef ok():\n    pytest.skip('hidden')\n"})
	r.git("tag", "hide")
	cr = r.check("--base", "base2", "--candidate", "hide")
	if got := notPass(cr); cr.code != 1 || !slices.Equal(got, []string{"test_ok 5 INCOMPLETE", "test_ok 6 INCOMPLETE"}) {
		t.Fatalf("a candidate that skips test_ok: want INCOMPLETE for both seeds, exit 1; got %v\n%s", got, cr)
	}
	r.git("checkout", "-q", "--detach", "base2")
	r.commit("docs2", map[string]string{"README.md": "py skips, documented again\n"})
	r.git("tag", "docs2")
	if cr = r.check("--base", "base2", "--candidate", "docs2"); cr.code != 0 || len(cr.summary.Results) != 4 || len(notPass(cr)) != 0 {
		t.Fatalf("harmless, test_gone excluded: want 4 PASS, exit 0\n%s", cr)
	}
}
