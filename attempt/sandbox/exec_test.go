package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/flakegate/flakegate/attempt"
)

// TestWaitingCommandRunsTheAttemptExactly: as root every attempt starts
// as a standby's waiting command, which becomes the attempt's command.
// Its argv and environment arrive byte for byte (quotes, newlines,
// dollars, backquotes, names a shell would drop), PWD is the folder bwrap
// moved to, it has no descriptor but 0-2 (and the shell's own), its
// first child is pid 3, and all of it is what bwrap alone gives the same
// command.
func TestWaitingCommandRunsTheAttemptExactly(t *testing.T) {
	bwrap := needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("the waiting command is the root path's")
	}
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree := filepath.Join(root, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `sh -c 'echo child $$'; printf '<%s>\n' "$@"; tr '\0' '\n' </proc/$$/environ; ls /proc/$$/fd >/tmp/fds; tr '\n' ' ' </tmp/fds; echo; pwd`
	argv := []string{"sh", "-c", script, "zero", "a'b", "c\nd", "$HOME", "`id`", " sp ", `"q"`, "back\\slash", ""}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root", "A.B=dotted", "X=1", "PWD=/elsewhere", "X=2", "NL=one\ntwo", "Q='\""}
	run := func(probe bool) string {
		sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
		if probe {
			if err := sb.Probe(context.Background(), root, env, true); err != nil {
				t.Fatal(err)
			}
			if !sb.Level.Root {
				t.Fatalf("the probe did not reach root's path: %v", sb.Level.Missing)
			}
		}
		o := attempt.Run(context.Background(), attempt.Command{Argv: argv, Dir: filepath.Join(tree, "sub"), Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != attempt.Pass {
			t.Fatalf("%s (%s):\n%s", o.Result, o.Reason, o.Tail)
		}
		return o.Tail
	}
	alone := run(false)
	for i := 0; i < 3; i++ { // the first from a fresh standby, the others from made ones
		if got := run(true); got != alone {
			t.Errorf("attempt %d through the waiting command:\n%s\nbwrap alone:\n%s", i, got, alone)
		}
	}
	for _, want := range []string{"<a'b>\n", "<c\nd>\n", "<$HOME>\n", "<`id`>\n", "< sp >\n", "<\"q\">\n", "<back\\slash>\n", "<>\n",
		"A.B=dotted\n", "X=2\n", "PWD=/sandbox/tree/sub\n", "NL=one\ntwo\n", "Q='\"\n", "child 3\n", "/sandbox/tree/sub\n"} {
		if !strings.Contains(alone, want) {
			t.Errorf("bwrap alone: no %q in:\n%s", want, alone)
		}
	}
	for _, l := range strings.Split(alone, "\n") {
		if strings.HasPrefix(l, "0 1 ") {
			for _, fd := range strings.Fields(l) {
				if fd != "0" && fd != "1" && fd != "2" && fd != "10" { // 10: the shell's saved input
					t.Errorf("descriptor %s open in the attempt: %s", fd, l)
				}
			}
		}
	}
	if strings.Contains(alone, "X=1") {
		t.Errorf("a name's first value reached the attempt:\n%s", alone)
	}
}

// TestExecLineRoundTrips: for any argv and environment (any bytes but
// NUL), the waiting command's shell turns execLine back into exactly
// that argv and environment.
func TestExecLineRoundTrips(t *testing.T) {
	if _, err := os.Stat("/usr/bin/env"); err != nil {
		t.Skip("no /usr/bin/env")
	}
	word := rapid.StringMatching(`[^\x00]{0,12}`)
	rapid.Check(t, func(t *rapid.T) {
		args := rapid.SliceOfN(word, 0, 4).Draw(t, "args")
		names := rapid.SliceOfN(rapid.StringMatching(`[A-Za-z_.][A-Za-z0-9_.-]{0,6}`), 0, 4).Draw(t, "names")
		env := []string{"PATH=/usr/bin:/bin"}
		for i, n := range names {
			env = append(env, n+"="+args0(args, i))
		}
		argv := append(append([]string{"/usr/bin/printf", `%s\0`}, args...), "END")
		line, err := execLine(argv, env, "/sandbox/tree")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", execScript+`; exit 9`)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles = []*os.File{nil, nil, r} // descriptor 5
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		w.WriteString(line)
		w.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v for line %q", err, line)
		}
		got := strings.Split(out.String(), "\x00")
		got = got[:len(got)-2] // "END" and the empty string after the last NUL
		if strings.Join(got, "\x00") != strings.Join(args, "\x00") || len(got) != len(args) {
			t.Fatalf("argv %q came out as %q (line %q)", args, got, line)
		}
	})
}

func args0(args []string, i int) string {
	if len(args) == 0 {
		return ""
	}
	return args[i%len(args)]
}
