// pytest suites: the interpreter the sandbox runs pytest with
// (PytestProbe), the listing (`pytest --collect-only -q`, CollectPytest),
// which tests the base skips or expects to fail (pytest's own mark
// evaluation), and every pytest command's start (PytestArgv) and order
// (Rank).

package suites

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// pytestPython finds, in the sandbox, the first of python3 (on the
// attempts' PATH), /usr/bin/python3 and /usr/local/bin/python3 that
// imports pytest, and says whether it imports Hypothesis too.
const pytestPython = `for p in python3 /usr/bin/python3 /usr/local/bin/python3; do
  w=$(command -v "$p") || continue
  "$w" -I -c 'import pytest' 2>/dev/null || continue
  if "$w" -I -c 'import hypothesis' 2>/dev/null; then echo "$w hypothesis"; else echo "$w"; fi
  exit 0
done
exit 1`

// listPytest lists a pytest suite: the node ids `pytest --collect-only -q`
// prints (relative to the repository root), run by the sandbox's first
// interpreter that has pytest.
func (l *Lister) listPytest(ctx context.Context, s *config.Suite) (*List, error) {
	python, hypothesis, err := l.PytestProbe(ctx)
	if err != nil {
		return nil, err
	}
	return l.CollectPytest(ctx, s, python, hypothesis)
}

// PytestProbe finds the sandbox's interpreter that runs pytest
// (pytestPython) and whether it has Hypothesis.
func (l *Lister) PytestProbe(ctx context.Context) (python string, hypothesis bool, err error) {
	o, out, err := l.Run(ctx, []string{"sh", "-c", pytestPython})
	if err != nil {
		return "", false, err
	}
	f := strings.Fields(string(out))
	if o.Result != attempt.Pass || len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return "", false, l.Fail("no python3 in the sandbox imports pytest (looked for python3 on PATH, /usr/bin/python3 and /usr/local/bin/python3; a pyenv shim under $HOME is not what the sandbox runs): install it (Debian: apt-get install python3-pytest)")
	}
	return f[0], len(f) > 1 && f[1] == "hypothesis", nil
}

// CollectPytest lists pytest suite s with python (PytestProbe's).
func (l *Lister) CollectPytest(ctx context.Context, s *config.Suite, python string, hypothesis bool) (*List, error) {
	list := &List{Python: python, Hypothesis: hypothesis}
	argv := PyBootstrapArgv(append(PytestArgv(s, list.Python), "--collect-only", "-q", s.Path), "run")
	o, out, err := l.Run(ctx, argv)
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass && o.ExitCode != 5 { // 5: no tests collected
		return nil, l.Fail("pytest --collect-only failed in the base tree (%s): %s", strings.TrimSpace(o.Result+" "+o.Reason), LastLines(out, 8))
	}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break // the node ids end at the first empty line
		}
		file, name, ok := strings.Cut(line, "::")
		if !ok || !InScope(s, file) && file != s.Path {
			continue
		}
		if !pytestNodeOK(name) {
			list.leaveOut(line)
			continue
		}
		if slices.ContainsFunc(list.Tests, func(x Test) bool { return x.File == file && x.Name == name }) {
			continue
		}
		list.Tests = append(list.Tests, Test{File: file, Name: name})
	}
	if l.Marks && len(list.Tests) > 0 {
		if err := l.pytestSkips(ctx, s, list); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// pytestMarks runs pytest's collection with a plugin that asks pytest's
// own mark evaluation (the functions its run calls at each test's setup)
// which collected tests a skip or skipif mark skips, and which an xfail
// mark expects to fail, each condition evaluated as the run would. Its
// arguments are pytest's. PyBootstrap runs it (mode "marks").
const pytestMarks = `import sys
import pytest
from _pytest.skipping import evaluate_skip_marks, evaluate_xfail_marks


class Marks:
    def pytest_collection_finish(self, session):
        for item in session.items:
            if evaluate_skip_marks(item) is not None:
                print("flakegate-skipped " + item.nodeid)
            elif evaluate_xfail_marks(item) is not None:
                print("flakegate-xfail " + item.nodeid)


sys.exit(pytest.main(sys.argv[1:], plugins=[Marks()]))
`

// pytestSkips finds the listed tests that no run can pass: those a skip
// or skipif mark skips on the base (pytest reports them skipped) and
// those an xfail mark expects to fail (xfailed or xpassed, never
// passed), by pytest's own evaluation of each mark's condition
// (pytestMarks). A skip the test calls itself while it runs
// (pytest.skip(), importorskip in its body) is not seen here.
func (l *Lister) pytestSkips(ctx context.Context, s *config.Suite, list *List) error {
	argv := PyBootstrapArgv(append(PytestArgv(s, list.Python), "--collect-only", "-q", "-s", s.Path), "marks") // pybootstrap.go
	o, out, err := l.Run(ctx, argv)
	if err != nil {
		return err
	}
	if o.Result != attempt.Pass && o.ExitCode != 5 {
		list.SkipPlan = "pytest's mark evaluation: " + strings.TrimSpace(o.Result+" "+o.Reason) + ": " + LastLines(out, 3)
		return nil
	}
	list.Skips = parseMarks(out, list.Tests)
	return nil
}

// parseMarks reads pytestMarks' lines ("flakegate-skipped ID",
// "flakegate-xfail ID") for the listed node ids.
func parseMarks(out []byte, tests []Test) map[string]string {
	ids := map[string]bool{}
	for _, t := range tests {
		ids[t.File+"::"+t.Name] = true
	}
	skips := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		for _, word := range []string{"skipped", "xfail"} {
			if id, ok := strings.CutPrefix(line, "flakegate-"+word+" "); ok && ids[id] {
				skips[id] = word
			}
		}
	}
	return skips
}

// pytestNodeOK accepts the part of a node id after "file::" as a test name.
func pytestNodeOK(name string) bool {
	if name == "" || len(name) > config.MaxNameLength || strings.HasPrefix(name, "-") || strings.TrimSpace(name) != name {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// PytestArgv starts every pytest command of suite s (its listing,
// its batches, its new tests), run by python (the interpreter the
// listing found, pytestPython): node ids are relative to the repository
// root (--rootdir=.), no cache is written or read (it could reorder the
// next run: --ff, --lf), and pytest-randomly, if installed, does not
// reorder what flakegate ordered. A suite's pythonpath comes first, as
// env PYTHONPATH=a:b (relative folders: Python reads them from the
// repository root, where the commands run).
func PytestArgv(s *config.Suite, python string) []string {
	argv := []string{python, "-m", "pytest", "--rootdir=.", "-p", "no:cacheprovider", "-p", "no:randomly"}
	if len(s.PythonPath) > 0 {
		argv = append([]string{"env", "PYTHONPATH=" + strings.Join(s.PythonPath, ":")}, argv...)
	}
	return argv
}

// Rank is where a node id goes in the order of seed: node ids are
// sorted by it.
func Rank(seed flakegate.Seed, node string) string {
	h := sha256.Sum256([]byte(seed.String() + "\x00" + node))
	return hex.EncodeToString(h[:])
}
