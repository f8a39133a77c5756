// What a Go package's tests read: go's test log. A test binary run with
// -test.testlogfile=F writes to F every file it opens or stats, every
// folder it changes to and every environment variable it reads (the
// record go's own test cache decides a cached result by). GoTestlogExec
// runs each test binary of a `go test -json` run so that its log follows
// its output, as lines of its package; ReadGoTestlogs collects them.

package impact

import (
	"bufio"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// testlogPrefix starts each line of a test log in the run's output.
const testlogPrefix = "flakegate-testlog "

// GoTestlogExec is the -exec value of a go test run that keeps each test
// binary's log: go test runs `sh -c SCRIPT flakegate-testlog BINARY ARGS`
// in the package's folder, the script runs the binary with its log in a
// temporary file and then prints the log, each line after
// "flakegate-testlog ", and exits with the binary's status. go test
// splits the value at spaces outside quotes; the script holds no single
// quote.
const GoTestlogExec = `sh -c 'log=$(mktemp) || exit 125; "$@" -test.testlogfile="$log"; rc=$?; ` +
	`while IFS= read -r l; do printf "flakegate-testlog %s\n" "$l"; done < "$log"; rm -f "$log"; exit $rc' flakegate-testlog`

// GoTestlogArgv is a go test run of the packages (folder arguments) that
// keeps each test binary's log in its output (GoTestlogExec); its output
// is for ReadGoTestlogs. extra are flags the caller adds (-shuffle=S,
// -skip=P); -count=1 runs every test whatever go's cache holds.
func GoTestlogArgv(pkgs []string, extra ...string) []string {
	argv := []string{"go", "test", "-json", "-count=1", "-exec", GoTestlogExec}
	argv = append(argv, extra...)
	return append(argv, pkgs...)
}

// GoReads are what one Go package's tests read in runs on the base: the
// paths they opened or looked at, repository-relative ("." is the root),
// and the environment variables they read. Paths outside the tree are
// not kept: they are the same for both trees.
type GoReads struct {
	Paths map[string]bool
	Env   map[string]bool
}

// add merges o into r.
func (r *GoReads) add(o *GoReads) {
	for p := range o.Paths {
		r.Paths[p] = true
	}
	for e := range o.Env {
		r.Env[e] = true
	}
}

// MergeGoReads is what a package's tests read in any of several runs
// (one per seed: a test may read a file under some orders only). A
// package missing from one run is dropped: what it read there is not
// known.
func MergeGoReads(runs ...map[string]*GoReads) map[string]*GoReads {
	if len(runs) == 0 {
		return nil
	}
	out := map[string]*GoReads{}
	for unit, r := range runs[0] {
		m := &GoReads{Paths: map[string]bool{}, Env: map[string]bool{}}
		m.add(r)
		out[unit] = m
	}
	for _, run := range runs[1:] {
		for unit, m := range out {
			r, ok := run[unit]
			if !ok {
				delete(out, unit)
				continue
			}
			m.add(r)
		}
	}
	return out
}

// ReadGoTestlogs reads the output of a GoTestlogArgv run in tree t (the
// GoTree of the same tree, as the same sandbox saw it: its packages'
// folders are where each binary started) and returns what each package's
// tests read, by the package's folder argument. Only a package whose run
// passed is kept: a test that failed or was killed may not have read all
// it would have. A relative path is resolved against the folder the
// binary was in when it opened it (a "chdir" line moves it).
func ReadGoTestlogs(r io.Reader, t *GoTree) (map[string]*GoReads, error) {
	type state struct {
		cwd   string
		reads *GoReads
		seen  bool
	}
	logs := map[string]*state{}
	passed := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test != "" {
			continue // a line of go's own, not an event
		}
		p := t.pkgs[ev.Package]
		if p == nil {
			continue
		}
		switch ev.Action {
		case "pass":
			passed[ev.Package] = true
			continue
		case "fail":
			passed[ev.Package] = false
			continue
		case "output":
		default:
			continue
		}
		line, ok := strings.CutPrefix(strings.TrimSuffix(ev.Output, "\n"), testlogPrefix)
		if !ok {
			continue
		}
		st := logs[ev.Package]
		if st == nil {
			st = &state{cwd: p.Dir, reads: &GoReads{Paths: map[string]bool{}, Env: map[string]bool{}}}
			logs[ev.Package] = st
		}
		if line == "# test log" {
			st.cwd, st.seen = p.Dir, true // a binary's log starts in its package's folder
			continue
		}
		op, arg, _ := strings.Cut(line, " ")
		switch op {
		case "getenv":
			st.reads.Env[arg] = true
		case "chdir":
			st.cwd = joinAbs(st.cwd, arg)
		case "open", "stat":
			if rel, in := t.rel(joinAbs(st.cwd, arg)); in {
				st.reads.Paths[rel] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, invalid("go test -json", "%v", err)
	}
	out := map[string]*GoReads{}
	for ip, st := range logs {
		rel, _ := t.rel(t.pkgs[ip].Dir)
		if st.seen && passed[ip] {
			out[folderArg(rel)] = st.reads
		}
	}
	return out, nil
}

// joinAbs resolves p against the folder cwd.
func joinAbs(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// seenBy reports whether the change at p (of kind) is one the package's
// tests can see, in trees t: a file they opened or looked at, or a
// file added or removed below a folder they opened (its listing, or a
// listing on the way, changed). Which logged paths are folders the trees
// say: a path that is a file in neither tree is a folder (or nothing).
func (r *GoReads) seenBy(t *Trees, p, kind string) bool {
	if r.Paths[p] {
		return true
	}
	return kind != Modified && listedAbove(p, func(d string) bool { return r.Paths[d] && !t.has(false, d) && !t.has(true, d) })
}

// listedAbove reports whether a folder above p is listed.
func listedAbove(p string, listed func(dir string) bool) bool {
	for d := pathDir(p); ; d = pathDir(d) {
		if listed(d) {
			return true
		}
		if d == "." {
			return false
		}
	}
}

// ReadGoElapsed reads the output of a go test -json run in tree t and
// returns how long each package's test binary ran, by the package's
// folder argument: go's own Elapsed of the package's pass or fail event
// (its build left out). A package with no such event is not named.
func ReadGoElapsed(r io.Reader, t *GoTree) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			Action, Package, Test string
			Elapsed               float64
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test != "" || ev.Action != "pass" && ev.Action != "fail" {
			continue
		}
		p := t.pkgs[ev.Package]
		if p == nil || ev.Elapsed < 0 {
			continue
		}
		rel, _ := t.rel(p.Dir)
		out[folderArg(rel)] = time.Duration(ev.Elapsed * float64(time.Second))
	}
	if err := sc.Err(); err != nil {
		return nil, invalid("go test -json", "%v", err)
	}
	return out, nil
}
