package cli

import (
	"bytes"
	"strings"
	"testing"
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
