package evidence

import (
	"regexp"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
)

func TestDetectFramework(t *testing.T) {
	for argv, want := range map[string]string{
		"go test -run ^TestX$ .":        FrameworkGo,
		"/usr/local/go/bin/go test ./x": FrameworkGo,
		"go vet .":                      FrameworkNone,
		"pytest -q x.py":                FrameworkPytest,
		"python3 -m pytest x.py":        FrameworkPytest,
		"python3 x.py":                  FrameworkNone,
		"sh prop.sh":                    FrameworkNone,
	} {
		if got := DetectFramework(strings.Fields(argv)); got != want {
			t.Errorf("%s: %q, want %q", argv, got, want)
		}
	}
}

func TestArgv(t *testing.T) {
	for in, want := range map[string]string{
		"go test -run ^TestX$ . -rapid.seed=1": "go test -v -run ^TestX$ . -rapid.seed=1",
		"go test -v -run X .":                  "go test -v -run X .",
		"go test -json ./x":                    "go test -json ./x",
		"pytest -q x.py":                       "pytest -q x.py -rA",
		"pytest -q -rfE x.py":                  "pytest -q -rfE x.py -rA",
		"pytest -q -rfEp x.py":                 "pytest -q -rfEp x.py",
		"sh prop.sh":                           "sh prop.sh",
	} {
		if got := strings.Join(Argv(strings.Fields(in)), " "); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func TestEvidenceJudge(t *testing.T) {
	for _, c := range []struct {
		name, fw, test, marker, output string
		pass                           bool
		reason                         string
	}{
		{"go pass", FrameworkGo, "TestX", "", "=== RUN   TestX\n--- PASS: TestX (0.01s)\nPASS\nok  \tm\t0.01s\n", true, ""},
		{"go other test passed", FrameworkGo, "TestX", "", "--- PASS: TestY (0.01s)\nPASS\n", false, `no "--- PASS: TestX"`},
		{"go TestMain exit 0", FrameworkGo, "TestX", "", "ok  \tm\t0.01s\n", false, `the last line is "ok  \tm\t0.01s"`},
		{"go skipped", FrameworkGo, "TestX", "", "--- SKIP: TestX (0.00s)\n    x_test.go:9: later\nPASS\n", false, "TestX was skipped"},
		{"go subtest", FrameworkGo, "TestX", "", "    --- PASS: TestX/a (0.00s)\n--- PASS: TestX (0.01s)\n", true, ""},
		{"pytest pass", FrameworkPytest, "", "", ".\nPASSED t.py::test_a\n1 passed in 0.05s\n", true, ""},
		{"pytest colour", FrameworkPytest, "", "", "\x1b[32m\x1b[1m1 passed\x1b[0m\x1b[32m in 0.05s\x1b[0m\n", true, ""},
		{"pytest colour skipped", FrameworkPytest, "", "", "\x1b[33m1 skipped\x1b[0m\x1b[33m in 0.01s\x1b[0m\n", false, "skipped"},
		{"pytest skipped", FrameworkPytest, "", "", "s\n1 skipped in 0.01s\n", false, `"1 skipped in 0.01s"`},
		{"pytest xfailed", FrameworkPytest, "test_a", "", "x\n===== 1 xfailed in 0.02s =====\n", false, "xfailed"},
		{"pytest mixed", FrameworkPytest, "", "", ".s\n1 passed, 1 skipped in 0.02s\n", false, "skipped"},
		{"pytest named", FrameworkPytest, "test_a", "", "PASSED tests/t.py::test_a[1]\n1 passed in 0.05s\n", true, ""},
		{"pytest other named", FrameworkPytest, "test_a", "", "PASSED tests/t.py::test_b\n1 passed in 0.05s\n", false, "no \"PASSED\" line names test_a"},
		// A parametrized case's id may hold spaces (pypa/packaging).
		{"pytest id with spaces", FrameworkPytest, "test_add[one two]", "", "PASSED tests/t.py::test_add[one two]\n1 passed in 0.05s\n", true, ""},
		{"pytest id with ; and quotes", FrameworkPytest, `test_m[; "3." not in v-[a,b]]`, "", "PASSED tests/t.py::test_m[; \"3.\" not in v-[a,b]]\n1 passed in 0.05s\n", true, ""},
		{"pytest id with spaces, other case", FrameworkPytest, "test_add[one two]", "", "PASSED tests/t.py::test_add[one three]\n1 passed in 0.05s\n", false, "no \"PASSED\" line names"},
		{"pytest passed line with more", FrameworkPytest, "test_a", "", "PASSED tests/t.py::test_a - x\n1 passed in 0.05s\n", false, "no \"PASSED\" line names"},
		{"pytest id with spaces, longer case", FrameworkPytest, "test_add[one]", "", "PASSED tests/t.py::test_add[one two]\n1 passed in 0.05s\n", false, "no \"PASSED\" line names"},
		{"pytest derandomized", FrameworkPytest, "", "", "hypothesis profile 'ci' -> derandomize=True\nPASSED t.py::a\n1 passed in 1s\n", false, "derandomized"},
		{"marker", FrameworkNone, "", "^all good$", "x\nall good\n", true, ""},
		{"marker missing", FrameworkNone, "", "^all good$", "x\nnearly good", false, `the last line is "nearly good"`},
	} {
		var re *regexp.Regexp
		if c.marker != "" {
			re = regexp.MustCompile("(?m)" + c.marker)
		}
		e := New(c.fw, c.test, re, nil)
		// Written in pieces that split lines.
		for i := 0; i < len(c.output); i += 7 {
			e.Write([]byte(c.output[i:min(i+7, len(c.output))]))
		}
		out := attempt.Outcome{Result: attempt.Pass}
		e.Judge(&out)
		if (out.Result == attempt.Pass) != c.pass || !strings.Contains(out.Reason, c.reason) {
			t.Errorf("%s: %s %q, want pass=%v reason ~%q", c.name, out.Result, out.Reason, c.pass, c.reason)
		}
		timeout := attempt.Outcome{Result: attempt.Timeout}
		e.Judge(&timeout)
		if timeout.Result != attempt.Timeout {
			t.Errorf("%s: a timeout was changed to %s", c.name, timeout.Result)
		}
	}
	if New(FrameworkNone, "x", nil, nil) != nil {
		t.Error("an unknown command without a marker has evidence to check")
	}
}

// TestEvidenceJudgeFailure: an exit 1 is a failure only when the output
// shows the test ran and failed; anything else is an error quoting the
// line seen.
func TestEvidenceJudgeFailure(t *testing.T) {
	goBuild := "# m [m.test]\n./calc.go:3:1: syntax error: non-declaration statement outside function body\nFAIL\tm [build failed]\nFAIL\n"
	pyCollect := "\n==================================== ERRORS ====================================\n" +
		"_________________ ERROR collecting tests/test_x.py __________________\n" +
		"tests/test_x.py:8: in <module>\n    from calc import add\nE     File \"/sandbox/tree/calc.py\", line 13\nE   SyntaxError: invalid syntax\n" +
		"=========================== short test summary info ============================\nERROR tests/test_x.py\n1 error in 0.14s\n"
	for _, c := range []struct {
		name, fw, test, marker, output string
		fail                           bool
		reason                         string
	}{
		{"go fail", FrameworkGo, "TestX", "", "=== RUN   TestX\n    x_test.go:9: falsified\n--- FAIL: TestX (0.01s)\nFAIL\nFAIL\tm\t0.01s\n", true, ""},
		{"go other test failed", FrameworkGo, "TestX", "", "--- FAIL: TestY (0.01s)\nFAIL\n", false, `no "--- FAIL: TestX" line`},
		{"go build failed", FrameworkGo, "TestX", "", goBuild, false, `go test: build failed: "./calc.go:3:1: syntax error`},
		{"go vet failed", FrameworkGo, "TestX", "", "# m\n./x_test.go:9:2: fmt.Printf call has arguments but no formatting directives\nFAIL\tm [build failed]\n", false, "go test: build failed"},
		{"go setup failed", FrameworkGo, "TestX", "", "FAIL\tm [setup failed]\n", false, `build failed: "FAIL\tm [setup failed]"`},
		{"go download then build error", FrameworkGo, "TestX", "", "go: downloading pgregory.net/rapid v1.1.0\n# m\n./calc.go:3:1: syntax error: unexpected {\nFAIL\tm [build failed]\n", false, `build failed: "./calc.go:3:1: syntax error`},
		{"go no module", FrameworkGo, "", "", "go: cannot find main module, but found .git/config\n", false, `build failed: "go: cannot find main module`},
		{"go named test logs a path", FrameworkGo, "TestX", "", "    x_test.go:9: ./calc.go:3:1: looks like a compiler line\n--- FAIL: TestX (0.01s)\n", true, ""},
		{"pytest failed", FrameworkPytest, "test_a", "", "F\nFAILED tests/t.py::test_a - AssertionError: boom\n1 failed in 0.3s\n", true, ""},
		{"pytest id with spaces failed", FrameworkPytest, "test_add[one two]", "", "F\nFAILED tests/t.py::test_add[one two] - AssertionError: boom\n1 failed in 0.3s\n", true, ""},
		{"pytest id with ' - ' failed", FrameworkPytest, "test_add[a - b]", "", "F\nFAILED tests/t.py::test_add[a - b] - assert 1 == 2\n1 failed in 0.3s\n", true, ""},
		{"pytest failed summary", FrameworkPytest, "", "", "F\n===== 1 failed in 0.3s =====\n", true, ""},
		{"pytest collection error", FrameworkPytest, "test_a", "", pyCollect, false, `pytest: test_a did not run: "ERROR collecting tests/test_x.py"; "E   SyntaxError: invalid syntax"`},
		{"pytest failed and error", FrameworkPytest, "", "", "FE\n1 failed, 1 error in 0.3s\n", false, "want a \"FAILED\" line"},
		{"pytest other node failed", FrameworkPytest, "test_a", "", "FAILED tests/t.py::test_b - x\n1 failed, 1 error in 0.3s\n", false, "pytest's summary says"},
		{"pytest no tests ran", FrameworkPytest, "", "", "===== no tests ran in 0.01s =====\n", false, `did not run: "no tests ran in 0.01s"`},
		{"pytest import error", FrameworkPytest, "", "", "ImportError while loading conftest '/sandbox/tree/conftest.py'.\nE   ModuleNotFoundError: No module named 'x'\n", false, `did not run: "ImportError while loading conftest`},
		{"marker", FrameworkNone, "", "^not ok", "x\nnot ok 1\n", true, ""},
		{"marker missing", FrameworkNone, "", "^not ok", "sh: 1: ./prop: not found\n", false, `exit 1 without the fail marker "^not ok"; the last line is "sh: 1: ./prop: not found"`},
		{"marker over go", FrameworkGo, "TestX", "^BOOM", "--- FAIL: TestX (0.01s)\n", false, "without the fail marker"},
		{"no framework", FrameworkNone, "", "", "anything\n", true, ""},
	} {
		var re *regexp.Regexp
		if c.marker != "" {
			re = regexp.MustCompile("(?m)" + c.marker)
		}
		e := New(c.fw, c.test, nil, re)
		for i := 0; e != nil && i < len(c.output); i += 5 {
			e.Write([]byte(c.output[i:min(i+5, len(c.output))]))
		}
		out := attempt.Outcome{Result: attempt.Fail}
		e.Judge(&out)
		if (out.Result == attempt.Fail) != c.fail || !strings.Contains(out.Reason, c.reason) {
			t.Errorf("%s: %s %q, want fail=%v reason ~%q", c.name, out.Result, out.Reason, c.fail, c.reason)
		}
		if !c.fail && out.Result != attempt.Errored {
			t.Errorf("%s: %s, want %s", c.name, out.Result, attempt.Errored)
		}
	}
}
