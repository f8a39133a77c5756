// What a pytest run of the suite on the base loaded, read and started:
// the Python analogue of go's test log. PytestSessionScript runs pytest
// with an audit hook (sys.addaudithook) that notes every file opened
// (the import system's reads included), every folder listed and every
// process started, and, when the session ends, every module it loaded;
// ReadPytestSession reads what it printed. All tests of a pytest suite
// share one process, so what one test read (or cached for the next) is
// the whole session's: the pytest rule counts it for every test.

package impact

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// PytestSessionScript is the program `python -c SCRIPT PYTEST-ARGS` runs:
// pytest.main with the arguments, and the audit hook. Paths are printed
// resolved (os.path.realpath), as is the folder pytest started in, so
// that a symlink on the way does not hide a read. The lines are written
// to a copy of the process's standard output made before pytest
// captures it, in one write at the end of the session.
const PytestSessionScript = `import os
import sys

import pytest

_fd = os.dup(1)
_root = os.path.realpath(os.getcwd())
_seen = set()
_lines = []


def _note(kind, p):
    try:
        p = os.path.realpath(os.fsdecode(p))
    except Exception:
        return
    line = kind + " " + p
    if line not in _seen and "\n" not in line:
        _seen.add(line)
        _lines.append(line)


_PROCESS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
            "os.forkpty", "os.startfile", "pty.spawn"}


def _hook(event, args):
    try:
        if event == "open" and args and not isinstance(args[0], int):
            _note("read", args[0])
        elif event in ("os.listdir", "os.scandir"):
            _note("list", args[0] if args and args[0] is not None else ".")
        elif event in _PROCESS and "process " + event not in _seen:
            _seen.add("process " + event)
            _lines.append("process " + event)
    except Exception:
        pass


class _Session:
    def pytest_sessionfinish(self, session):
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if isinstance(f, str):
                _note("module", f)
        out = ["session " + _root] + _lines + ["session-end"]
        os.write(_fd, "".join("flakegate-" + l + "\n" for l in out).encode("utf-8", "surrogateescape"))


sys.addaudithook(_hook)
sys.exit(pytest.main(sys.argv[1:], plugins=[_Session()]))
`

// PytestSessionArgv turns a pytest command of the suite (PYTHON -m pytest
// OPTIONS, perhaps after env NAME=VALUE) into the session run of targets
// (the suite's folder, or the node ids the check runs): the same
// interpreter and options, with PytestSessionScript in place of -m
// pytest. It returns nil when pytestArgv has no "-m pytest".
func PytestSessionArgv(pytestArgv []string, targets ...string) []string {
	for i := 0; i+1 < len(pytestArgv); i++ {
		if pytestArgv[i] == "-m" && pytestArgv[i+1] == "pytest" {
			return slices.Concat(pytestArgv[:i], []string{"-c", PytestSessionScript}, pytestArgv[i+2:], targets)
		}
	}
	return nil
}

// PytestSession is what a pytest run of the suite on the base did, by
// repository-relative path (what lies outside the tree is the same for
// both trees and is not kept).
type PytestSession struct {
	Read    map[string]bool // files opened (and folders opened as files)
	Listed  map[string]bool // folders listed
	Modules map[string]bool // the files of the modules loaded when the session ended
	// Process is the first kind of process start the session made
	// ("subprocess.Popen"), "" when none.
	Process string
}

// ReadPytestSession reads the output of a PytestSessionArgv run: the
// last block from "flakegate-session ROOT" to "flakegate-session-end"
// (the script writes it in one piece; a test that prints such lines
// itself prints them before). A run that did not reach the end of its
// session (killed, or pytest could not start) is an error: what it read
// is not known.
func ReadPytestSession(r io.Reader) (*PytestSession, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, invalid("pytest's session log", "%v", err)
	}
	text := string(b)
	end := strings.LastIndex(text, "\nflakegate-session-end\n")
	if end < 0 {
		return nil, invalid("pytest's session log", "the run did not reach the end of its session")
	}
	start := strings.LastIndex(text[:end+1], "flakegate-session ")
	if start < 0 {
		return nil, invalid("pytest's session log", "the session's block has no start")
	}
	lines := strings.Split(text[start:end], "\n")
	root := strings.TrimPrefix(lines[0], "flakegate-session ")
	if !filepath.IsAbs(root) {
		return nil, invalid("pytest's session log", "the session's folder %q is not absolute", root)
	}
	s := &PytestSession{Read: map[string]bool{}, Listed: map[string]bool{}, Modules: map[string]bool{}}
	for _, line := range lines[1:] {
		kind, arg, _ := strings.Cut(strings.TrimPrefix(line, "flakegate-"), " ")
		if kind == "process" {
			if s.Process == "" {
				s.Process = arg
			}
			continue
		}
		rel, in := relTo(root, arg)
		if !in {
			continue
		}
		switch kind {
		case "read":
			s.Read[rel] = true
		case "list":
			s.Listed[rel] = true
		case "module":
			s.Modules[rel] = true
		}
	}
	return s, nil
}

// relTo is the absolute path p relative to root, and whether it lies
// inside root.
func relTo(root, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// sees reports whether the session can see the change at p (of kind): a
// file it opened or loaded, or a file added or removed below a folder it
// listed. A file added anywhere counts too: Python's audit hook sees no
// os.stat, so a test that asks whether a file exists is not in the log.
func (s *PytestSession) sees(p, kind string) bool {
	if s.Read[p] || s.Modules[p] {
		return true
	}
	if kind == Added {
		return true
	}
	return kind == Removed && listedAbove(p, func(d string) bool { return s.Listed[d] })
}
