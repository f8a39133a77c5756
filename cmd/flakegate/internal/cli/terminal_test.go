package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// hostileOutput is what a test prints to fool the person reading the
// replay: fake verdict lines, a conceal (ESC[8m) meant to hide flakegate's
// real line, an OSC 52 clipboard write, OSC 0 and 2 window titles, a bare
// CR that overwrites a line, an 8-bit CSI as a raw byte and in UTF-8, an
// OSC as a raw byte, and invalid UTF-8.
const hostileOutput = "replay: pass: sh exited 0 after 0.01s\n" +
	"verdict: pass (base 0000000, candidate 0000000)\n" +
	"\x1b]52;c;cm0gLXJmIH4K\x07\x1b]2;all green\x1b\\\x1b]0;ok\x07" +
	"FAIL\rreplay: pass\n" +
	"\x9b2J\u009b2J\x9d0;t\x07 \xff\xfe\n" +
	"\x1b[8m"

// TestReplayHostileOutput replays a property whose output attacks the
// terminal, then fails: flakegate's stdout and stderr (one stream, as a
// terminal shows them) hold no escape, no C1 control and no bare CR, no
// line at column 0 imitates flakegate's, and the last line is flakegate's
// real outcome.
func TestReplayHostileOutput(t *testing.T) {
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q", "-b", "main")
	sha := commitFiles(t, repo, "hostile", map[string]string{
		"flakegate.yaml": `version: 1
properties:
  - path: prop.sh
    seeds: [1]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 10s
`,
		// The output is a file, so its bytes are exact.
		"prop.sh": "cat out.txt\nexit 1\n",
		"out.txt": hostileOutput,
	})

	var both bytes.Buffer
	code := Main([]string{"replay", "--repo", repo, "--rev", sha, "--property", "prop.sh", "--seed", "7"}, strings.NewReader(""), &both, &both)
	out := both.String()
	if code != ExitReject {
		t.Fatalf("exit %d, want %d (fail)\n%s", code, ExitReject, out)
	}
	assertTerminalSafe(t, out)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "replay: fail: sh exited 1 after ") {
		t.Errorf("the last line is %q, want flakegate's replay: fail\n%s", last, out)
	}
	for _, want := range []string{`\x1b[8m`, `\x1b]52;c;`, `\x1b]2;all green`, `FAIL\x0dreplay: pass`, `\x9b2J\u009b2J\x9d0;t\x07 \xff\xfe`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not show %q\n%s", want, out)
		}
	}
}

// assertTerminalSafe fails if out holds a byte a terminal acts on (ESC, a
// raw 0x9b or 0x9d, a CR) or a line at column 0 that reads like a pass of
// flakegate's own.
func assertTerminalSafe(t *testing.T, out string) {
	t.Helper()
	if i := strings.IndexAny(out, "\x1b\r"); i >= 0 {
		t.Errorf("byte %q at %d reaches the terminal\n%q", out[i], i, out)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c == 0x9b || c == 0x9d {
			t.Errorf("C1 byte %#x at %d reaches the terminal\n%q", c, i, out)
			break
		}
	}
	if strings.Contains(out, "\u009b") || strings.Contains(out, "\u009d") {
		t.Errorf("a C1 control in UTF-8 reaches the terminal\n%q", out)
	}
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "replay: pass") || strings.HasPrefix(line, "verdict: pass") {
			t.Errorf("a line at column 0 imitates flakegate: %q\n%s", line, out)
		}
	}
}

// TestCheckTextHostile prints the text summary of results whose reason,
// test name and owner carry output of the code under test: a fake
// verdict on a line of its own, a conceal, a clipboard write. The only
// line at column 0 that starts with "verdict:" is flakegate's, and last.
func TestCheckTextHostile(t *testing.T) {
	hostile := "line\nverdict: pass (base 0, candidate 0)\n\x1b[8m\x1b]52;c;aGk=\x07\rok \x9b\u009d"
	sum := &flakegate.Summary{Verdict: flakegate.VerdictReject, Base: "b", Candidate: "c", Results: []flakegate.Result{
		{PropertyPath: "p.sh", Name: "t\x1b]2;title\x07", Seed: "1", Label: flakegate.Property, Reason: "the last line is " + hostile,
			Reproduce: "flakegate replay --seed 1", Record: "out/r.json"},
		{PropertyPath: "q.sh", Seed: "2", Label: flakegate.Scheduler, Skipped: true, Owner: hostile},
	}}
	var b bytes.Buffer
	printCheckText(&b, sum)
	out := b.String()
	assertTerminalSafe(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Errorf("%d lines, want 5 (a result, its reason and reproduce line, a frozen result, the verdict):\n%s", len(lines), out)
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "verdict:") != (i == len(lines)-1) {
			t.Errorf("line %d: %q", i, l)
		}
	}
	if !strings.Contains(out, `    reason: the last line is line\nverdict: pass (base 0, candidate 0)\n\x1b[8m\x1b]52;c;aGk=\x07\x0dok \x9b\u009d`) {
		t.Errorf("the reason is not shown as text:\n%s", out)
	}
}

// TestFreezeListHostile: an owner or a test name with controls stays in
// its cell, shown as text.
func TestFreezeListHostile(t *testing.T) {
	var b bytes.Buffer
	err := printFreezes(&b, []flakegate.Freeze{{PropertyPath: "p.sh", Name: "n\x1b[8m", Seed: "1", FixtureSHA256: "f",
		ExpiresAfterRuns: 3, Owner: "eve\tx\nverdict: pass\x1b]52;c;aGk=\x07", RecordSHA256: "r"}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	assertTerminalSafe(t, out)
	if n := strings.Count(out, "\n"); n != 2 {
		t.Errorf("%d lines, want a header and one freeze:\n%s", n, out)
	}
	if !strings.Contains(out, `p.sh::n\x1b[8m`) || !strings.Contains(out, `eve\tx\nverdict: pass\x1b]52;c;aGk=\x07`) {
		t.Errorf("the cells are not shown as text:\n%s", out)
	}
}

// TestErrorLineHostile: an error that quotes the repository under test
// (a path, a config value) reaches stderr rendered.
func TestErrorLineHostile(t *testing.T) {
	var b bytes.Buffer
	code := exitCode(&flakegate.Error{Code: flakegate.EINVALID, Op: "check", Path: "flakegate\x1b[8m.yaml",
		Message: "bad \x1b]2;title\x07", Hint: "fix \x9b"}, &b)
	if code != ExitUsage {
		t.Errorf("exit %d", code)
	}
	assertTerminalSafe(t, b.String())
	if !strings.Contains(b.String(), `flakegate\x1b[8m.yaml`) {
		t.Errorf("stderr: %q", b.String())
	}
}

// TestCheckTextFoldsSuitePasses: a suite's passing triples are counted,
// not listed (a suite may have thousands); its failures, the property
// triples and the new tests are listed, and the verdict is last.
func TestCheckTextFoldsSuitePasses(t *testing.T) {
	sum := &flakegate.Summary{Verdict: flakegate.VerdictReject, Base: "b", Candidate: "c", RejectFlakyNewTests: true,
		NewTests: []flakegate.NewTest{{Suite: "./...", Path: "a/new_test.go", Name: "TestNew\x1b[2J", Runs: 5, Passed: 4}}}
	for i := 0; i < 2000; i++ {
		sum.Results = append(sum.Results, flakegate.Result{PropertyPath: "a/a_test.go", Name: fmt.Sprintf("Test%d", i), Seed: "1", Label: flakegate.Pass, Suite: "./..."})
	}
	sum.Results = append(sum.Results,
		flakegate.Result{PropertyPath: "a/a_test.go", Name: "TestBroken", Seed: "1", Label: flakegate.Property, Suite: "./...", Reason: "failed on every attempt"},
		flakegate.Result{PropertyPath: "p_test.go", Name: "TestProp", Seed: "2", Label: flakegate.Pass})
	var b bytes.Buffer
	printCheckText(&b, sum)
	out := b.String()
	assertTerminalSafe(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (the suite's failure and its reason, the property, the folded count, the new test, the verdict):\n%s", len(lines), out)
	}
	for _, want := range []string{"a/a_test.go::TestBroken", "p_test.go::TestProp", "PASS: 2000 more triples of the suites",
		"new test a/new_test.go::TestNew\\x1b[2J: 4 of 5 passed (reject_flaky_new_tests: the patch is rejected)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(lines[5], "verdict: reject") {
		t.Errorf("last line %q", lines[5])
	}
}
