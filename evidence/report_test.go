package evidence

import (
	"errors"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
)

func TestGoJSONReport(t *testing.T) {
	type testCase struct {
		name       string
		events     string
		test       string
		want       string // result
		started    bool
		reasonPart string
	}
	ev := func(action, test string) string {
		return `{"Action":"` + action + `","Package":"m/p","Test":"` + test + `","Elapsed":0.5}` + "\n"
	}
	run := func(t *testing.T, tc testCase) {
		g := NewGoJSON()
		// Written in small pieces: a line may arrive in parts.
		for i := 0; i < len(tc.events); i += 7 {
			g.Write([]byte(tc.events[i:min(i+7, len(tc.events))]))
		}
		r := g.Report("m/p", tc.test)
		if r.Result != tc.want || r.Started != tc.started || !strings.Contains(r.Reason, tc.reasonPart) {
			t.Errorf("got %+v; want result %q, started %v, reason containing %q", r, tc.want, tc.started, tc.reasonPart)
		}
	}
	for _, tc := range []testCase{
		{name: "pass", events: ev("run", "TestA") + ev("pass", "TestA"), test: "TestA", want: attempt.Pass, started: true},
		{name: "fail", events: ev("run", "TestA") + ev("fail", "TestA"), test: "TestA", want: attempt.Fail, started: true},
		{name: "forged pass beside a failure", events: ev("run", "TestB") + ev("pass", "TestB") + ev("fail", "TestB"), test: "TestB", want: attempt.Errored, started: true, reasonPart: "reported 2 times"},
		{name: "forged run", events: ev("run", "TestB") + ev("run", "TestB") + ev("pass", "TestB"), test: "TestB", want: attempt.Errored, started: true, reasonPart: "run is reported 2 times"},
		{name: "plain output is no event", events: ev("run", "TestA") + `{"Action":"output","Package":"m/p","Test":"TestA","Output":"--- PASS: TestB (0.00s)\n"}` + "\n" + ev("pass", "TestA") + "--- PASS: TestB (0.00s)\n", test: "TestB", want: ""},
		{name: "another package speaks for nobody here", events: `{"Action":"run","Package":"m/q","Test":"TestB"}` + "\n" + `{"Action":"pass","Package":"m/q","Test":"TestB"}` + "\n", test: "TestB", want: ""},
		{name: "skipped", events: ev("run", "TestA") + ev("skip", "TestA"), test: "TestA", want: attempt.Errored, started: true, reasonPart: "skipped"},
		{name: "running when killed", events: ev("run", "TestA"), test: "TestA", want: attempt.Errored, started: true, reasonPart: "result is absent"},
		{name: "absent from a package that ended", events: ev("run", "TestA") + ev("pass", "TestA") + `{"Action":"pass","Package":"m/p"}` + "\n", test: "TestZ", want: attempt.Errored, reasonPart: "absent from the report"},
		{name: "build failed", events: `{"Action":"build-output","ImportPath":"m/p","Output":"p/x.go:3:1: syntax error\n"}` + "\n" + `{"Action":"fail","Package":"m/p"}` + "\n", test: "TestA", want: attempt.Errored, reasonPart: "build failed"},
		{name: "subtests are the parent's", events: ev("run", "TestA") + ev("run", "TestA/x") + ev("fail", "TestA/x") + ev("pass", "TestA"), test: "TestA", want: attempt.Pass, started: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestPytestJUnitReport(t *testing.T) {
	type testCase struct {
		name       string
		out        string
		junit      string
		junitErr   error
		node       string
		want       string
		rerun      bool
		reasonPart string
	}
	doc := func(cases string) string {
		return junitProlog + `<testsuites><testsuite name="pytest">` + cases + `</testsuite></testsuites>`
	}
	pass := `<testcase classname="tests.test_a" name="test_a" file="tests/test_a.py" time="0.5"/>`
	fail := `<testcase classname="tests.test_a" name="test_b" file="tests/test_a.py" time="0.1"><failure message="boom">trace</failure></testcase>`
	class := `<testcase classname="tests.test_a.TestC" name="test_m" file="tests/test_a.py" time="0.1"/>`
	summary := "PASSED tests/test_a.py::test_a\nFAILED tests/test_a.py::test_b - boom\nPASSED tests/test_a.py::TestC::test_m\n"
	run := func(t *testing.T, tc testCase) {
		p := NewPytestJUnit()
		p.Write([]byte(tc.out))
		p.SetJUnit([]byte(tc.junit), tc.junitErr)
		r := p.Report(tc.node)
		if r.Result != tc.want || r.Rerun != tc.rerun || !strings.Contains(r.Reason, tc.reasonPart) {
			t.Errorf("got %+v; want result %q, rerun %v, reason containing %q", r, tc.want, tc.rerun, tc.reasonPart)
		}
	}
	for _, tc := range []testCase{
		{name: "pass", out: summary, junit: doc(pass + fail + class), node: "tests/test_a.py::test_a", want: attempt.Pass},
		{name: "fail", out: summary, junit: doc(pass + fail + class), node: "tests/test_a.py::test_b", want: attempt.Fail},
		{name: "a class", out: summary, junit: doc(pass + fail + class), node: "tests/test_a.py::TestC::test_m", want: attempt.Pass},
		{name: "a printed PASSED line beside the FAILED one", out: summary + "PASSED tests/test_a.py::test_b\n", junit: doc(pass + fail + class), node: "tests/test_a.py::test_b", want: attempt.Errored, reasonPart: "1 PASSED, 1 FAILED"},
		{name: "a rewritten file", out: summary, junit: doc(pass + `<testcase classname="tests.test_a" name="test_b" file="tests/test_a.py"/>`), node: "tests/test_a.py::test_b", want: attempt.Errored, reasonPart: "test_b passed"},
		{name: "two documents", out: summary, junit: doc(pass) + doc(pass), node: "tests/test_a.py::test_a", want: "", reasonPart: "2 XML documents"},
		{name: "a trailing element", out: summary, junit: doc(pass) + "<x/>", node: "tests/test_a.py::test_a", want: "", reasonPart: "more than one document"},
		{name: "named twice", out: summary, junit: doc(pass + pass), node: "tests/test_a.py::test_a", want: attempt.Errored, reasonPart: "reported 2 times"},
		{name: "no file", out: summary, junitErr: errors.New("gone"), node: "tests/test_a.py::test_a", want: "", reasonPart: "no JUnit XML report"},
		{name: "running when killed", out: "tests/test_a.py::test_a PASSED [50%]\ntests/test_a.py::test_b ", junitErr: errors.New("gone"), node: "tests/test_a.py::test_b", want: attempt.Errored, reasonPart: "no JUnit"},
		{name: "not found", out: "ERROR: not found: /sandbox/tree/tests/test_a.py::test_z\n", junit: doc(""), node: "tests/test_a.py::test_z", want: attempt.Errored, reasonPart: "cannot find"},
		{name: "not found: the others run again", out: "ERROR: not found: /sandbox/tree/tests/test_a.py::test_z\n", junit: doc(""), node: "tests/test_a.py::test_a", rerun: true},
		{name: "a class selects its methods", out: summary, junit: doc(pass + fail + class), node: "tests/test_a.py::TestC", want: attempt.Pass},
		{name: "a generated test case defined in another file", out: "PASSED tests/test_a.py::TestM::runTest\n", junit: doc(`<testcase classname="tests.test_a.TestM" name="runTest" file="../../usr/lib/python3/dist-packages/hypothesis/stateful.py"/>`), node: "tests/test_a.py::TestM", want: attempt.Pass},
		{name: "pytest stopped before it", out: summary + "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!\n", junit: doc(pass + fail), node: "tests/test_a.py::test_q", rerun: true},
		{name: "absent", out: summary, junit: doc(pass), node: "tests/test_a.py::test_q", want: attempt.Errored, reasonPart: "absent"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// FuzzBatchReports: no output or file makes either reader panic, and no
// member is a pass without its own single report.
func FuzzBatchReports(f *testing.F) {
	f.Add([]byte(`{"Action":"pass","Package":"m/p","Test":"TestA"}`+"\n"), []byte(junitProlog+`<testsuites/>`))
	f.Add([]byte("PASSED tests/a.py::t\n"), []byte(junitProlog+`<testsuites><testsuite><testcase classname="tests.a" name="t" file="tests/a.py"/></testsuite></testsuites>`))
	f.Fuzz(func(t *testing.T, out, junit []byte) {
		g := NewGoJSON()
		g.Write(out)
		if r := g.Report("m/p", "TestA"); r.Result == attempt.Pass && !strings.Contains(string(out), `"run"`) {
			t.Fatalf("a pass without a run event: %q", out)
		}
		p := NewPytestJUnit()
		p.Write(out)
		p.SetJUnit(junit, nil)
		if r := p.Report("tests/a.py::t"); r.Result == attempt.Pass && !strings.Contains(string(out), "PASSED tests/a.py::t") {
			t.Fatalf("a pass without pytest's PASSED line: %q", out)
		}
	})
}
