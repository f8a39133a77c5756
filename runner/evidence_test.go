package runner

import (
	"regexp"
	"strings"
	"testing"
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

func TestEvidenceArgv(t *testing.T) {
	for in, want := range map[string]string{
		"go test -run ^TestX$ . -rapid.seed=1": "go test -v -run ^TestX$ . -rapid.seed=1",
		"go test -v -run X .":                  "go test -v -run X .",
		"go test -json ./x":                    "go test -json ./x",
		"pytest -q x.py":                       "pytest -q x.py -rA",
		"pytest -q -rfE x.py":                  "pytest -q -rfE x.py -rA",
		"pytest -q -rfEp x.py":                 "pytest -q -rfEp x.py",
		"sh prop.sh":                           "sh prop.sh",
	} {
		if got := strings.Join(EvidenceArgv(strings.Fields(in)), " "); got != want {
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
		{"pytest derandomized", FrameworkPytest, "", "", "hypothesis profile 'ci' -> derandomize=True\nPASSED t.py::a\n1 passed in 1s\n", false, "derandomized"},
		{"marker", FrameworkNone, "", "^all good$", "x\nall good\n", true, ""},
		{"marker missing", FrameworkNone, "", "^all good$", "x\nnearly good", false, `the last line is "nearly good"`},
	} {
		var re *regexp.Regexp
		if c.marker != "" {
			re = regexp.MustCompile("(?m)" + c.marker)
		}
		e := NewEvidence(c.fw, c.test, re)
		// Written in pieces that split lines.
		for i := 0; i < len(c.output); i += 7 {
			e.Write([]byte(c.output[i:min(i+7, len(c.output))]))
		}
		out := Outcome{Result: Pass}
		e.Judge(&out)
		if (out.Result == Pass) != c.pass || !strings.Contains(out.Reason, c.reason) {
			t.Errorf("%s: %s %q, want pass=%v reason ~%q", c.name, out.Result, out.Reason, c.pass, c.reason)
		}
		fail := Outcome{Result: Fail}
		e.Judge(&fail)
		if fail.Result != Fail {
			t.Errorf("%s: a failure was changed to %s", c.name, fail.Result)
		}
	}
	if NewEvidence(FrameworkNone, "x", nil) != nil {
		t.Error("an unknown command without a marker has evidence to check")
	}
}
