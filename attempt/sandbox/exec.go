package sandbox

import (
	"errors"
	"strconv"
	"strings"
)

// The waiting command of a standby sandbox. As root, a standby helper
// builds the whole sandbox of the next attempt (its root, its tree, its
// cgroup) and starts bwrap in it while the attempt before runs. bwrap's
// command is /bin/sh running execScript, which waits on descriptor
// execFD for one line, execLine, and executes it: env(1) with exactly the
// attempt's environment, then the attempt's argv, found on the PATH of
// that environment as execvp(3) finds it. The shell, env and the command
// are one process (pid 2, as bwrap's own command is), which starts no
// other: the attempt's first child gets pid 3 in every attempt, and sees
// only descriptors 0, 1 and 2. The attempt starts as soon as flakegate
// knows its seed, and every attempt, the first of a sandbox and every
// retry alike, starts this way.

// execFD is the descriptor, in bwrap and its command, that brings the
// waiting command its line.
const execFD = 5

// execScript is the waiting command: sh -c execScript. A standby left
// unused gets no line and exits.
var execScript = `nl='
'; IFS= read -r c <&` + strconv.Itoa(execFD) + ` || exit 0; exec ` + strconv.Itoa(execFD) + `<&-; eval "exec $c"`

// execArgv is bwrap's command in a standby.
var execArgv = []string{"/bin/sh", "-c", execScript}

// execEnv is bwrap's own environment in a standby (the attempt can read it
// in /proc/1/environ): none.
var execEnv = []string{}

// execLine is the line that makes the waiting command the attempt: argv
// run with env, in which PWD is the folder bwrap moved to (bwrap sets it
// so for its command). env is taken as exec.Cmd takes it: entries
// without "=" dropped, and the last value of a name kept.
func execLine(argv, env []string, pwd string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("no command")
	}
	if strings.Contains(argv[0], "=") {
		return "", errors.New("the sandbox cannot run a command whose name holds \"=\": " + argv[0])
	}
	var b strings.Builder
	b.WriteString("/usr/bin/env -i --")
	for _, kv := range setenv(dedupEnv(env), "PWD", pwd) {
		b.WriteByte(' ')
		b.WriteString(shellQuote(kv))
	}
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	b.WriteByte('\n')
	return b.String(), nil
}

// shellQuote quotes s for sh in one line: in single quotes, where a
// single quote is written as quote, backslash, quote, quote and a
// newline as "$nl" between two quoted parts (execScript sets nl).
func shellQuote(s string) string {
	s = strings.ReplaceAll(s, `'`, `'\''`)
	s = strings.ReplaceAll(s, "\n", `'"$nl"'`)
	return "'" + s + "'"
}

// dedupEnv drops entries without "=" and keeps the last value of each
// name, where it last appears, as os/exec does.
func dedupEnv(env []string) []string {
	seen := map[string]bool{}
	var rev []string
	for i := len(env) - 1; i >= 0; i-- {
		k, _, ok := strings.Cut(env[i], "=")
		if !ok || seen[k] {
			continue
		}
		seen[k] = true
		rev = append(rev, env[i])
	}
	out := make([]string, len(rev))
	for i, kv := range rev {
		out[len(rev)-1-i] = kv
	}
	return out
}

// setenv is env with name set to value as setenv(3) does it: in place
// where name is, else at the end.
func setenv(env []string, name, value string) []string {
	out := append([]string(nil), env...)
	for i, kv := range out {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			out[i] = name + "=" + value
			return out
		}
	}
	return append(out, name+"="+value)
}
