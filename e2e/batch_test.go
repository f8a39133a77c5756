package e2e_test

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/transcript"
)

// goBatchEntry is one property of a Go module's batch test config.
func goBatchEntry(pkg, name, extra string) string {
	return `  - path: ` + pkg + `/` + pkg + `_test.go
    name: ` + name + `
    seeds: [7]
    run: [go, test, -count=1, -run, "^{name}$", ./` + pkg + `, "-seed={seed}"]
    wall_budget: 60s
` + extra
}

const goBatchHead = `version: 1
retry_cap: 2
workers: 1
flake_probe_runs: 0
properties:
`

// goSeedFlag is the test flag every package of the batch modules defines.
const goSeedFlag = "var _ = flag.Int(\"seed\", 0, \"the seed\")\n"

// goBatchModule is a module of four packages:
//   - leak: product code with a per-process counter; the candidate makes
//     it fail after 3 calls, so each test alone passes and the package's
//     suite fails from its fourth test on;
//   - order: Second fails only when First ran before it in the process
//     (on the candidate);
//   - fake: Forger prints a framed "--- PASS: TestVictim" line (what
//     test2json reads as a result) and a plain one, and the candidate
//     breaks what TestVictim tests;
//   - ok: a test that always passes.
func goBatchModule() (base, cand map[string]string) {
	leakTest := "package leak\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag
	var cfg strings.Builder
	cfg.WriteString(goBatchHead)
	for _, n := range []string{"A", "B", "C", "D", "E"} {
		leakTest += "func Test" + n + "(t *testing.T) {\n\tif err := Use(); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n\n"
		cfg.WriteString(goBatchEntry("leak", "Test"+n, ""))
	}
	cfg.WriteString(goBatchEntry("order", "TestFirst", ""))
	cfg.WriteString(goBatchEntry("order", "TestSecond", ""))
	cfg.WriteString(goBatchEntry("fake", "TestForger", ""))
	cfg.WriteString(goBatchEntry("fake", "TestVictim", ""))
	cfg.WriteString(goBatchEntry("ok", "TestGhost", "")) // not in the package: absent from the report
	cfg.WriteString(goBatchEntry("ok", "TestOK", ""))
	base = map[string]string{
		"go.mod":            "module example.com/batch\n\ngo 1.21\n",
		"README.md":         "batch module\n",
		"flakegate.yaml":    cfg.String(),
		"leak/leak.go":      "package leak\n\nvar calls int\n\n// Use counts its calls.\nfunc Use() error {\n\tcalls++\n\treturn nil\n}\n",
		"leak/leak_test.go": leakTest,
		"order/order.go":    "package order\n\nvar marked bool\n\nfunc Mark() { marked = true }\n\nfunc Check() error { return nil }\n",
		"order/order_test.go": "package order\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
			"func TestFirst(t *testing.T) { Mark() }\n\nfunc TestSecond(t *testing.T) {\n\tif err := Check(); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"fake/fake.go": "package fake\n\nimport \"fmt\"\n\n// Report prints.\nfunc Report() { fmt.Println(\"report\") }\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"fake/fake_test.go": "package fake\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
			"func TestForger(t *testing.T) { Report() }\n\nfunc TestVictim(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2 is not 4\")\n\t}\n}\n",
		"ok/ok.go":      "package ok\n",
		"ok/ok_test.go": "package ok\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag + "func TestOK(t *testing.T) {}\n",
	}
	cand = map[string]string{
		"leak/leak.go":   "package leak\n\nimport \"errors\"\n\nvar calls int\n\n// Use counts its calls; a leak makes it fail after 3.\nfunc Use() error {\n\tcalls++\n\tif calls > 3 {\n\t\treturn errors.New(\"out of handles\")\n\t}\n\treturn nil\n}\n",
		"order/order.go": "package order\n\nimport \"errors\"\n\nvar marked bool\n\nfunc Mark() { marked = true }\n\nfunc Check() error {\n\tif marked {\n\t\treturn errors.New(\"state left by an earlier test\")\n\t}\n\treturn nil\n}\n",
		"fake/fake.go": "package fake\n\nimport \"fmt\"\n\n// Report prints a forged result for TestVictim.\nfunc Report() {\n\tfmt.Println(\"\\x16--- PASS: TestVictim (0.00s)\")\n\tfmt.Println(\"--- PASS: TestVictim (0.00s)\")\n}\n\n" +
			"// Add is broken.\nfunc Add(a, b int) int { return a - b }\n",
	}
	return base, cand
}

// TestCheckGoBatch: the triples of a Go module run as one go test -json
// process per attempt, and each is judged from its own events. A leak
// that only the package's suite reaches, and a test that fails only after
// another, are PROPERTY (the retry is the same batch, so they fail again;
// alone they would pass and earn SCHEDULER); a forged result line makes
// its victim INCOMPLETE (reported twice), never PASS; a test absent from
// the report is INCOMPLETE.
func TestCheckGoBatch(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	base, cand := goBatchModule()
	r := newRepo(t, base)
	r.candidate("bad", cand)
	cr := r.check("--base", "base", "--candidate", "bad")
	want := "PASS,PASS,PASS,PROPERTY,PROPERTY,PASS,PROPERTY,PASS,INCOMPLETE,INCOMPLETE,PASS"
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
	if reason := cr.summary.Results[8].Reason; !strings.Contains(reason, "reported 2 times") {
		t.Errorf("TestVictim's reason %q does not say it was reported twice", reason)
	}
	if reason := cr.summary.Results[9].Reason; !strings.Contains(reason, "absent from the report") {
		t.Errorf("TestGhost's reason %q does not say it is absent", reason)
	}
	if !strings.Contains(cr.stderr, "] batch of 11 (go, seed 7)") || !strings.Contains(cr.stderr, "PROPERTY leak/leak_test.go::TestD") {
		t.Errorf("no progress line for the batch:\n%s", cr.stderr)
	}
	// A second candidate on the same base replays nothing the cache has:
	// the replay cache is per triple, batch or not.
	r.candidate("docs", map[string]string{"README.md": "batch module, docs\n"})
	docs := r.check("--base", "base", "--candidate", "docs")
	for i, res := range docs.summary.Results {
		if i == 9 { // TestGhost: an error on base is never cached
			continue
		}
		if !res.BaseCached || res.BaseAttempts != 1 {
			t.Errorf("second candidate: %s base_cached %v, %d base attempts", res.Name, res.BaseCached, res.BaseAttempts)
		}
	}
	// The transcript names the batch: its argv, members and output digest.
	batches := transcriptBatches(t, cr.record(t, 3).TranscriptPath)
	if len(batches) != 4 { // the first attempt, the base seed and two retries
		t.Fatalf("TestD's transcript names %d batches, want 4", len(batches))
	}
	b := batches[0]
	// The -run pattern holds the members, then the known answers: two
	// fuzz targets of each package.
	if len(b.Members) != 11 || b.OutputSHA256 == "" || !strings.Contains(strings.Join(b.Argv, " "), "-json") ||
		!strings.Contains(strings.Join(b.Argv, " "), "^(TestA|TestB|TestC|TestD|TestE|TestFirst|TestSecond|TestForger|TestVictim|TestGhost|TestOK|Fuzz") || len(b.KnownAnswers) != 8 {
		t.Errorf("the batch of TestD's first attempt: %+v", b)
	}
}

// transcriptBatches returns the batches the attempt_end events of a
// transcript name, in order.
func transcriptBatches(t *testing.T, path string) []*transcript.Batch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*transcript.Batch
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev transcript.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == transcript.EventAttemptEnd && ev.Batch != nil {
			out = append(out, ev.Batch)
		}
	}
	return out
}

// TestCheckGoBatchHang: a member that hangs is BUDGET when the batch is
// killed at the sum of its members' budgets; the one that never started
// runs again in a batch without it (a fresh first attempt) and passes, and
// so does the member that finished before it: the killed batch's known
// answers (fuzz targets, which go runs after the tests) never ran, so its
// report is not trusted. A member whose own time is over its budget is
// BUDGET too.
func TestCheckGoBatchHang(t *testing.T) {
	t.Parallel() // waits out a budget most of its time: beside the other waits
	needTool(t, "go")
	test := "package hang\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
		"func TestH1(t *testing.T) {}\n\nfunc TestH2(t *testing.T) { Wait() }\n\nfunc TestH3(t *testing.T) {}\n"
	slow := "package slow\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag + "func TestSlow(t *testing.T) { Nap() }\n"
	entry := func(pkg, name, budget string) string {
		return strings.Replace(goBatchEntry(pkg, name, ""), "wall_budget: 60s", "wall_budget: "+budget, 1)
	}
	cfg := goBatchHead + entry("hang", "TestH1", "15s") + entry("hang", "TestH2", "15s") + entry("hang", "TestH3", "15s") + entry("slow", "TestSlow", "3s")
	r := newRepo(t, map[string]string{
		"go.mod":            "module example.com/hang\n\ngo 1.21\n",
		"README.md":         "hang\n",
		"flakegate.yaml":    cfg,
		"hang/hang.go":      "package hang\n\nfunc Wait() {}\n",
		"hang/hang_test.go": test,
		"slow/slow.go":      "package slow\n\nfunc Nap() {}\n",
		"slow/slow_test.go": slow,
	})
	r.candidate("hangs", map[string]string{
		"hang/hang.go": "package hang\n\nimport \"time\"\n\nfunc Wait() { time.Sleep(time.Hour) }\n",
		"slow/slow.go": "package slow\n\nimport \"time\"\n\nfunc Nap() { time.Sleep(5 * time.Second) }\n",
	})
	cr := r.check("--base", "base", "--candidate", "hangs")
	if want := "PASS,BUDGET,PASS,BUDGET"; cr.code != 1 || strings.Join(cr.labels(), ",") != want {
		t.Fatalf("want %s\n%s", want, cr)
	}
	if reason := cr.summary.Results[1].Reason; !strings.Contains(reason, "killed") {
		t.Errorf("TestH2's reason %q does not say the batch was killed", reason)
	}
	if reason := cr.summary.Results[3].Reason; !strings.Contains(reason, "over its wall budget") {
		t.Errorf("TestSlow's reason %q does not name its own time", reason)
	}
	// TestH3 ran twice on the candidate: in the killed batch it never
	// started (nothing recorded), then in a batch without TestH2.
	h3 := transcriptBatches(t, cr.record(t, 2).TranscriptPath)
	if len(h3) < 1 || slices.Contains(h3[0].Members, "hang/hang_test.go::TestH2") || !slices.Contains(h3[0].Members, "hang/hang_test.go::TestH3") {
		t.Errorf("TestH3's first recorded attempt ran in %+v; want a batch without TestH2", h3[0])
	}
	for i := range cr.summary.Results {
		verifyTranscript(t, cr.summary.Results[i].Record, cr.record(t, i))
	}
}

// TestCheckGoBatchMatchesAlone: the same triples give the same labels in
// a batch and one by one (batch: false), and the records of triples run
// alone name no batch.
func TestCheckGoBatchMatchesAlone(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	files := func(extra string) map[string]string {
		test := func(pkg string) string {
			return "package " + pkg + "\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
				"func TestOne(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(\"Double(2) is not 4\")\n\t}\n}\n\nfunc TestTwo(t *testing.T) {}\n"
		}
		cfg := goBatchHead
		for _, e := range []string{"p1 TestOne", "p1 TestTwo", "p2 TestOne", "p2 TestTwo"} {
			pkg, name, _ := strings.Cut(e, " ")
			cfg += goBatchEntry(pkg, name, extra)
		}
		return map[string]string{
			"go.mod": "module example.com/same\n\ngo 1.21\n", "README.md": "same\n", "flakegate.yaml": cfg,
			"p1/p1.go": "package p1\n\nfunc Double(x int) int { return 2 * x }\n", "p1/p1_test.go": test("p1"),
			"p2/p2.go": "package p2\n\nfunc Double(x int) int { return 2 * x }\n", "p2/p2_test.go": test("p2"),
		}
	}
	var got []string
	for _, extra := range []string{"", "    batch: false\n"} {
		r := newRepo(t, files(extra))
		r.candidate("bad", map[string]string{"p2/p2.go": "package p2\n\nfunc Double(x int) int { return x * x * x }\n"})
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
	if want := "PASS,PASS,PROPERTY,PASS"; got[0] != want || got[1] != want {
		t.Fatalf("batched %s, alone %s; want %s for both", got[0], got[1], want)
	}
}

// pytestBatchEntry is one property of a pytest batch test config.
func pytestBatchEntry(file, name, extra string) string {
	return `  - path: tests/` + file + `
    name: ` + name + `
    seeds: [7]
    run: [/usr/bin/python3, -m, pytest, -q, -p, no:cacheprovider, "{path}::{name}", "--seed={seed}"]
    wall_budget: 60s
` + extra
}

// pytestBatchFiles is a pytest project like goBatchModule: a leak, an
// order dependence, a forged "PASSED" line for a failing victim, a node
// that does not exist, and a plain pass.
func pytestBatchFiles(extra string) (base, cand map[string]string) {
	cfg := goBatchHead
	leak := "from src import pool\n\n"
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		leak += "def test_" + n + "():\n    pool.use()\n\n"
		cfg += pytestBatchEntry("test_leak.py", "test_"+n, extra)
	}
	cfg += pytestBatchEntry("test_order.py", "test_first", extra) + pytestBatchEntry("test_order.py", "test_second", extra)
	cfg += pytestBatchEntry("test_fake.py", "test_forger", extra) + pytestBatchEntry("test_fake.py", "test_victim", extra)
	cfg += pytestBatchEntry("test_ok.py", "test_ghost", extra) + pytestBatchEntry("test_ok.py", "test_ok", extra)
	base = map[string]string{
		"README.md":           "pytest batch\n",
		"flakegate.yaml":      cfg,
		"pytest.ini":          "[pytest]\ntestpaths = tests\npythonpath = . tests\n",
		"conftest.py":         "def pytest_addoption(parser):\n    parser.addoption(\"--seed\", default=\"0\")\n",
		"src/__init__.py":     "",
		"src/pool.py":         "calls = 0\n\ndef use():\n    global calls\n    calls += 1\n",
		"src/state.py":        "marked = False\n\ndef mark():\n    global marked\n    marked = True\n\ndef check():\n    pass\n",
		"src/fake.py":         "def report():\n    print('report')\n\ndef add(a, b):\n    return a + b\n",
		"tests/test_leak.py":  leak,
		"tests/test_order.py": "from src import state\n\ndef test_first():\n    state.mark()\n\ndef test_second():\n    state.check()\n",
		"tests/test_fake.py":  "from src import fake\n\ndef test_forger():\n    fake.report()\n\ndef test_victim():\n    assert fake.add(2, 2) == 4\n",
		"tests/test_ok.py":    "def test_ok():\n    pass\n",
	}
	cand = map[string]string{
		"src/pool.py":  "calls = 0\n\ndef use():\n    global calls\n    calls += 1\n    if calls > 3:\n        raise OSError('out of handles')\n",
		"src/state.py": "marked = False\n\ndef mark():\n    global marked\n    marked = True\n\ndef check():\n    assert not marked, 'state left by an earlier test'\n",
		"src/fake.py":  "def report():\n    print('PASSED tests/test_fake.py::test_victim')\n\ndef add(a, b):\n    return a - b\n",
	}
	return base, cand
}

// TestCheckPytestBatch: pytest batches give the labels go test batches
// give (TestCheckGoBatch), and the same triples one by one (batch: false)
// the labels a test run alone gets. A JUnit document the code under test
// prints (here from an atexit hook, after pytest's own) makes every
// member INCOMPLETE, never a pass.
func TestCheckPytestBatch(t *testing.T) {
	t.Parallel()
	needTool(t, "/usr/bin/python3")
	base, cand := pytestBatchFiles("")
	r := newRepo(t, base)
	r.candidate("bad", cand)
	cr := r.check("--base", "base", "--candidate", "bad")
	want := "PASS,PASS,PASS,PROPERTY,PROPERTY,PASS,PROPERTY,PASS,INCOMPLETE,INCOMPLETE,PASS"
	if cr.code != 1 || strings.Join(cr.labels(), ",") != want {
		t.Fatalf("want %s\n%s", want, cr)
	}
	if reason := cr.summary.Results[8].Reason; !strings.Contains(reason, "1 PASSED, 1 FAILED") {
		t.Errorf("test_victim's reason %q does not name the forged PASSED line beside the real FAILED one", reason)
	}
	for i := range cr.summary.Results {
		verifyTranscript(t, cr.summary.Results[i].Record, cr.record(t, i))
	}

	// The JUnit file is in the sandbox: a test can rewrite it after
	// pytest wrote it. The victim still fails in pytest's own summary.
	xml := `import atexit, sys
def report():
    path = [a for a in sys.argv if a.startswith('--junitxml=')][-1].split('=', 1)[1]
    def forge():
        with open(path, 'w') as f:
            f.write('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"><testcase classname="tests.test_fake" name="test_victim" file="tests/test_fake.py" time="0.1"/></testsuite></testsuites>')
    atexit.register(forge)

def add(a, b):
    return a - b
`
	r.candidate("xml", map[string]string{"src/fake.py": xml})
	cr = r.check("--base", "base", "--candidate", "xml")
	victim := cr.summary.Results[8]
	if victim.Label != flakegate.Incomplete || !strings.Contains(victim.Reason, "FAILED") {
		t.Errorf("a rewritten JUnit file: test_victim is %s (%s), want INCOMPLETE naming the short summary's FAILED line\n%s", victim.Label, victim.Reason, cr)
	}
	for _, res := range cr.summary.Results {
		if res.Label == flakegate.Pass && res.Name == "test_victim" {
			t.Errorf("test_victim passed on a forged JUnit file")
		}
	}

	base, cand = pytestBatchFiles("    batch: false\n")
	alone := newRepo(t, base)
	alone.candidate("bad", cand)
	cr = alone.check("--base", "base", "--candidate", "bad")
	// Alone, the leak and the order dependence never show.
	if want := "PASS,PASS,PASS,PASS,PASS,PASS,PASS,PASS,PROPERTY,INCOMPLETE,PASS"; strings.Join(cr.labels(), ",") != want {
		t.Fatalf("alone: want %s\n%s", want, cr)
	}
}

// TestCheckGoBatchFlaky: a member that fails once and then passes is
// SCHEDULER through the batch's retry (the same batch again), and the
// flake probe runs as a base batch; the member beside it that passed keeps
// its one candidate attempt.
func TestCheckGoBatchFlaky(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	test := "package fl\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
		`func TestFlaky(t *testing.T) {
	if Flaky() {
		f := filepath.Join(os.Getenv("FG_STATE"), "ran")
		if _, err := os.Stat(f); err != nil {
			os.WriteFile(f, nil, 0o666)
			t.Fatal("the first run fails")
		}
	}
}

func TestSteady(t *testing.T) {}
`
	cfg := strings.Replace(goBatchHead, "flake_probe_runs: 0", "flake_probe_runs: 2\nsandbox:\n  rw: [\"@FG_STATE@\"]\n  env: [FG_STATE]", 1) +
		goBatchEntry("fl", "TestFlaky", "") + goBatchEntry("fl", "TestSteady", "")
	r := newRepo(t, map[string]string{
		"go.mod": "module example.com/fl\n\ngo 1.21\n", "README.md": "flaky\n", "flakegate.yaml": cfg,
		"fl/fl.go": "package fl\n\nfunc Flaky() bool { return false }\n", "fl/fl_test.go": test,
	})
	r.candidate("flaky", map[string]string{"fl/fl.go": "package fl\n\nfunc Flaky() bool { return true }\n"})
	cr := r.check("--base", "base", "--candidate", "flaky")
	if want := "SCHEDULER,PASS"; strings.Join(cr.labels(), ",") != want {
		t.Fatalf("want %s\n%s", want, cr)
	}
	flaky, steady := cr.record(t, 0), cr.record(t, 1)
	if strings.Join(flaky.RetryResults, ",") != "pass" || strings.Join(flaky.BaseProbeResults, ",") != "pass,pass" {
		t.Errorf("TestFlaky: retries %v, probes %v; want [pass], [pass pass]", flaky.RetryResults, flaky.BaseProbeResults)
	}
	if n := cr.summary.Results[1].CandidateAttempts; n != 1 || len(steady.RetryResults) != 0 || steady.BaseProbeResults != nil {
		t.Errorf("TestSteady: %d candidate attempts, retries %v, probes %v; want 1, none, none", n, steady.RetryResults, steady.BaseProbeResults)
	}
	bs := transcriptBatches(t, flaky.TranscriptPath)
	if len(bs) != 5 { // first, base, retry, two probes
		t.Fatalf("TestFlaky's transcript names %d batches, want 5", len(bs))
	}
	for i, b := range bs {
		if len(b.Members) != 2 {
			t.Errorf("batch %d of TestFlaky ran %v; want both members", i, b.Members)
		}
	}
	verifyTranscript(t, cr.summary.Results[0].Record, flaky)

	// Frozen, the flaky member is skipped and the other one runs alone.
	if code, out := r.run("freeze", "grant", "--record", cr.summary.Results[0].Record, "--owner", "bob", "--runs", "2", "--allow-new-flake"); code != 0 {
		t.Fatalf("freeze grant: exit %d\n%s", code, out)
	}
	again := r.check("--base", "base", "--candidate", "flaky")
	if want := "SCHEDULER(skipped),PASS"; strings.Join(again.labels(), ",") != want {
		t.Fatalf("frozen: want %s\n%s", want, again)
	}
	if bs := transcriptBatches(t, again.record(t, 1).TranscriptPath); len(bs) != 0 {
		t.Errorf("TestSteady ran in a batch beside a skipped member: %+v", bs)
	}
}

// TestCheckPytestBatchHang: pytest writes its report only at the end, so
// in a batch killed at its budget the member its verbose line shows
// running is BUDGET, and the others run again in a batch of their own
// (no result of a killed pytest batch is kept) and pass.
func TestCheckPytestBatchHang(t *testing.T) {
	t.Parallel() // waits out a budget most of its time: beside the other waits
	needTool(t, "/usr/bin/python3")
	entry := func(name string) string {
		return strings.Replace(pytestBatchEntry("test_h.py", name, ""), "wall_budget: 60s", "wall_budget: 12s", 1)
	}
	r := newRepo(t, map[string]string{
		"README.md":       "hang\n",
		"flakegate.yaml":  goBatchHead + entry("test_h1") + entry("test_h2") + entry("test_h3"),
		"pytest.ini":      "[pytest]\ntestpaths = tests\npythonpath = .\n",
		"conftest.py":     "def pytest_addoption(parser):\n    parser.addoption(\"--seed\", default=\"0\")\n",
		"src/__init__.py": "",
		"src/wait.py":     "def wait():\n    pass\n",
		"tests/test_h.py": "from src import wait\n\ndef test_h1():\n    pass\n\ndef test_h2():\n    wait.wait()\n\ndef test_h3():\n    pass\n",
	})
	r.candidate("hangs", map[string]string{"src/wait.py": "import time\n\ndef wait():\n    time.sleep(3600)\n"})
	cr := r.check("--base", "base", "--candidate", "hangs")
	if want := "PASS,BUDGET,PASS"; cr.code != 1 || strings.Join(cr.labels(), ",") != want {
		t.Fatalf("want %s\n%s", want, cr)
	}
	if reason := cr.summary.Results[1].Reason; !strings.Contains(reason, "killed") {
		t.Errorf("test_h2's reason %q does not say the batch was killed", reason)
	}
	for _, i := range []int{0, 2} {
		bs := transcriptBatches(t, cr.record(t, i).TranscriptPath)
		if len(bs) == 0 || len(bs[0].Members) != 2 {
			t.Errorf("member %d's first recorded attempt ran in %+v; want the batch of the two that did not hang", i, bs)
		}
	}
	for i := range cr.summary.Results {
		verifyTranscript(t, cr.summary.Results[i].Record, cr.record(t, i))
	}
}
