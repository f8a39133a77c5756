package e2e_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// slowSuite is a suite of framework fw ("go" or "pytest") of 12 tests of
// a second each, in one package or folder: a batch of about 12 s.
func slowSuite(fw string) map[string]string {
	files := map[string]string{}
	var b strings.Builder
	switch fw {
	case "go":
		files["go.mod"] = "module example.com/slow\n\ngo 1.21\n"
		b.WriteString("package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n")
		for i := range 12 {
			fmt.Fprintf(&b, "\nfunc TestSlow%02d(t *testing.T) { time.Sleep(time.Second) }\n", i)
		}
		files["slow_test.go"] = b.String()
		files["flakegate.yaml"] = "version: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: ./...\n    framework: go\n    seeds: [1]\n    wall_budget: 5m\n"
	default:
		b.WriteString("import time\n")
		for i := range 12 {
			fmt.Fprintf(&b, "\n\ndef test_slow_%02d():\n    time.sleep(1)\n", i)
		}
		files["tests/test_slow.py"] = b.String()
		files["flakegate.yaml"] = "version: 1\nflake_probe_runs: 0\nimpact: false\nsuites:\n  - path: tests\n    framework: pytest\n    seeds: [1]\n    wall_budget: 5m\n"
	}
	return files
}

// TestBatchStreamsProgress: while a long batch runs, the check's progress
// says how far it is, from go test's -json events and pytest's verbose
// lines as they arrive (issue 43: a batch of 736 pytest tests sat silent
// for a minute each time). In a log (stderr is no terminal here) it is a
// line at most every 10 s, with no terminal escape, before the batch's
// own line of results; the results still come from the reports.
func TestBatchStreamsProgress(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go, pytest and a sandbox")
	}
	needTool(t, "go")
	needProgram(t, "python3")
	for _, fw := range []string{"go", "pytest"} {
		r := newRepo(t, slowSuite(fw))
		r.candidate("docs", map[string]string{"README.md": "documented\n"})
		cr := r.check("--base", "base", "--candidate", "docs")
		if cr.code != 0 || len(cr.summary.Results) != 12 || len(notPass(cr)) != 0 {
			t.Fatalf("%s: want 12 PASS, exit 0\n%s", fw, cr)
		}
		line := regexp.MustCompile(`(?m)^… batch of 12 \(` + fw + `, seed 1, candidate attempt 0\): (\d+) of 12 tests ended, last \S+ · [0-9.]+s$`)
		m := line.FindStringSubmatchIndex(cr.stderr)
		if m == nil {
			t.Errorf("%s: no progress line of the running batch:\n%s", fw, cr.stderr)
			continue
		}
		if n, _ := strconv.Atoi(cr.stderr[m[2]:m[3]]); n < 1 || n > 11 {
			t.Errorf("%s: the line says %d of 12 ended while the batch ran", fw, n)
		}
		if done := strings.Index(cr.stderr, "] batch of 12 ("+fw+", seed 1)"); done < m[0] {
			t.Errorf("%s: the progress line comes after the batch's results:\n%s", fw, cr.stderr)
		}
		if strings.Contains(cr.stderr, "\x1b") {
			t.Errorf("%s: a terminal escape in a log:\n%q", fw, cr.stderr)
		}
	}
}
