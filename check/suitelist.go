// A suite's test list, from the framework itself, run in the sandbox on
// a tree: `go list` and `go test -json -list .` for go, `pytest
// --collect-only -q` for pytest, vitest's list and a jest run that
// selects no test for vitest and jest (suitejs.go).

package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/gocache"
)

// maxListOutput bounds what a listing command may print.
const maxListOutput = 64 << 20

// listRun runs argv in the sandbox on t and returns its whole output (a
// listing is no test: its exit code is judged by the caller).
func (c *site) listRun(ctx context.Context, t *tree, s *config.Suite, argv []string) (attempt.Outcome, []byte, error) {
	sb, err := c.suiteSandbox(ctx, t, s)
	if err != nil {
		return attempt.Outcome{}, nil, err
	}
	if err := t.acquire(); err != nil {
		return attempt.Outcome{}, nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.dir, Message: "cannot reset the worktree to list a suite", Err: err}
	}
	defer t.release(c.resetClean)
	out := &attempt.Bounded{Max: maxListOutput}
	o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: t.dir, Env: c.iso.env, WallBudget: s.WallBudget, Sandbox: sb,
		NoTestMarkers: []string{}, Output: out})
	if ctx.Err() != nil {
		return o, nil, flakegate.Interrupted(ctx)
	}
	if out.Over {
		return o, nil, c.suiteError(s, "%s printed more than %d MiB", strings.Join(argv, " "), maxListOutput>>20)
	}
	return o, out.Bytes(), nil
}

// suiteSandbox is the sandbox of suite s's commands in t (its listing,
// its new tests): over the top-level prepare's layer of t, as its
// triples run (suiteLayer); nil without a sandbox. A prepare that failed
// is an error of the suite: nothing of it can be listed or run.
func (c *site) suiteSandbox(ctx context.Context, t *tree, s *config.Suite) (*sandbox.Sandbox, error) {
	sb := c.sandboxFor(t.dir)
	if sb == nil {
		return nil, nil
	}
	layer, why, err := c.suiteLayer(ctx, t)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, c.suiteError(s, "its commands run over the top-level prepare, which failed on the %s tree: %s", t.side, why)
	}
	sb.Prepared = layer
	return sb, nil
}

// suiteError is a configuration error of suite s: its tests cannot be
// listed, so none can be judged.
func (c *site) suiteError(s *config.Suite, format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
		Message: fmt.Sprintf("suites[%d] (%s %s): ", s.Index, s.Framework, s.Path) + fmt.Sprintf(format, args...),
		Hint:    "run the listing yourself in the base tree (flakegate doctor shows each suite's count), or fix the suite in " + c.cfgPath}
}

// suiteLister runs the listing commands of a suite in one tree: a
// check's base worktree (listSuite), or a replay's checkout of the base
// (replaysuite.go).
type suiteLister struct {
	dir string
	run func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error)
	// runReport runs argv with the report file flag+F added (vitest and
	// jest write their list there) and returns the outcome, the output,
	// the file's content and the folder the framework ran in as it saw it
	// (nil: the lister cannot list a vitest or jest suite).
	runReport func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error)
	fail      func(format string, args ...any) error
	// prepared is the folder of the prepared layer the commands run over
	// ("" for none): what a prepare installed (node_modules) is there.
	prepared func(ctx context.Context) (string, error)
	// marks asks which tests the base skips or expects to fail
	// (pytestSkips): set for a listing of the base, whose list gates;
	// a candidate's listing names its new tests only.
	marks bool
}

// listSuite lists suite s in tree t; marks as suiteLister's.
func (c *site) listSuite(ctx context.Context, s *config.Suite, t *tree, marks bool) (*suiteList, error) {
	return c.lister(s, t, marks).list(ctx, s)
}

// lister is the suiteLister of suite s in tree t.
func (c *site) lister(s *config.Suite, t *tree, marks bool) *suiteLister {
	return &suiteLister{dir: t.dir, marks: marks,
		run: func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error) {
			return c.listRun(ctx, t, s, argv)
		},
		runReport: func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
			return c.listRunReport(ctx, t, s, argv, flag) // suitejs.go
		},
		fail: func(format string, args ...any) error { return c.suiteError(s, format, args...) },
		prepared: func(ctx context.Context) (string, error) {
			sb, err := c.suiteSandbox(ctx, t, s)
			if err != nil || sb == nil {
				return "", err
			}
			return sb.Prepared, nil
		}}
}

// list lists suite s.
func (l *suiteLister) list(ctx context.Context, s *config.Suite) (*suiteList, error) {
	switch s.Framework {
	case config.FrameworkGo:
		return l.listGo(ctx, s)
	case config.FrameworkVitest, config.FrameworkJest:
		return l.listJS(ctx, s) // suitejs.go
	}
	return l.listPytest(ctx, s)
}

// goListTemplate prints one line per package: import path, folder,
// test files and external test files.
const goListTemplate = `{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{join .TestGoFiles " "}}{{"\t"}}{{join .XTestGoFiles " "}}`

// listGo lists the tests of a go suite: the packages (go list), their
// tests (go test -json -list ., by package), and the file each test is
// declared in (the package's test files, parsed). Top-level Test, Fuzz
// and Example functions go test lists are tests (an example is listed
// only with an output comment, and then run and judged like a test);
// subtests are part of theirs. Benchmarks (run only with -bench) and
// examples without output are noted as not gated.
func (l *suiteLister) listGo(ctx context.Context, s *config.Suite) (*suiteList, error) {
	module, err := goModulePath(filepath.Join(l.dir, "go.mod"))
	if err != nil {
		return nil, l.fail("a go suite needs the module's go.mod at the repository root: %v", err)
	}
	o, out, err := l.run(ctx, []string{"go", "list", "-f", goListTemplate, s.Path})
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass {
		return nil, l.fail("go list %s failed (%s): %s", s.Path, strings.TrimSpace(o.Result+" "+o.Reason), gocache.Failure(string(out), 5))
	}
	list := &suiteList{pkgTests: map[string][]string{}, rapid: map[string]bool{}}
	byImport := map[string]string{}         // import path -> "./dir"
	files := map[string]map[string]string{} // "./dir" -> test name -> file
	var pkgs []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] == "" && f[3] == "") {
			continue
		}
		// The folder go list prints is the sandbox's; the import path
		// names the folder inside the module at the tree's root.
		rel, ok := ".", f[0] == module
		if r, in := strings.CutPrefix(f[0], module+"/"); in && !ok {
			rel, ok = r, true
		}
		if !ok {
			continue // not this module's package
		}
		arg := "./" + rel
		if rel == "." {
			arg = "."
		}
		byImport[f[0]] = arg
		pkgs = append(pkgs, arg)
		decl, rapid, err := goTestDecls(l.dir, rel, append(strings.Fields(f[2]), strings.Fields(f[3])...))
		if err != nil {
			return nil, l.fail("%v", err)
		}
		files[arg], list.rapid[arg] = decl, rapid
	}
	if len(pkgs) == 0 {
		return list, nil
	}
	o, out, err = l.run(ctx, append([]string{"go", "test", "-json", "-list", "."}, pkgs...))
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass {
		return nil, l.fail("go test -list failed in the base tree (%s): %s", strings.TrimSpace(o.Result+" "+o.Reason), gocache.Failure(string(out), 8))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Action != "output" || ev.Test != "" {
			continue
		}
		arg, ok := byImport[ev.Package]
		name := strings.TrimSuffix(ev.Output, "\n")
		if !ok || !goTestName.MatchString(name) {
			continue
		}
		list.pkgTests[arg] = append(list.pkgTests[arg], name)
		file, ok := files[arg][name]
		if !ok || slices.ContainsFunc(list.tests, func(x suiteTest) bool { return x.pkg == arg && x.name == name }) {
			continue // printed by the code under test, not declared; or twice
		}
		if goTestKind(name, "Benchmark") {
			list.notRun.add(notRunBench, arg+" "+name)
			continue
		}
		if !goTestKind(name, "Test") && !goTestKind(name, "Fuzz") && !goTestKind(name, "Example") {
			continue
		}
		list.tests = append(list.tests, suiteTest{pkg: arg, file: file, name: name})
	}
	list.notRunExamples(files)
	return list, nil
}

// goTestKind reports whether name is a function go test takes as one of
// kind (Test, Benchmark, Fuzz, Example): the prefix alone, or followed by
// anything but a lower-case letter (as go test decides it).
func goTestKind(name, kind string) bool {
	rest, ok := strings.CutPrefix(name, kind)
	return ok && (rest == "" || !unicode.IsLower([]rune(rest)[0]))
}

// The kinds of tests a go suite's packages declare that go test does not
// run as the suite runs them: they are not gated, and the check says so.
const (
	notRunBench   = "benchmarks (go test runs them only with -bench)"
	notRunExample = "examples without an output comment (go test compiles them and runs none)"
)

// notRunExamples notes the examples a test file declares that go test
// did not list: without an "// Output:" comment an example is compiled,
// never run. files are each package's declared functions, by name.
func (l *suiteList) notRunExamples(files map[string]map[string]string) {
	pkgs := make([]string, 0, len(files))
	for arg := range files {
		pkgs = append(pkgs, arg)
	}
	sort.Strings(pkgs)
	for _, arg := range pkgs {
		names := make([]string, 0, len(files[arg]))
		for name := range files[arg] {
			if goTestKind(name, "Example") && !slices.Contains(l.pkgTests[arg], name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			l.notRun.add(notRunExample, arg+" "+name)
		}
	}
}

// goTestDecls parses a package's test files (rel is the package's folder)
// and returns each top-level Test and Fuzz function's file, and whether
// a file imports rapid.
func goTestDecls(root, rel string, names []string) (map[string]string, bool, error) {
	decl := map[string]string{}
	rapid := false
	fset := token.NewFileSet()
	for _, n := range names {
		file := filepath.ToSlash(filepath.Join(rel, n))
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(file)), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, false, fmt.Errorf("cannot parse %s: %v", file, err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "pgregory.net/rapid" {
				rapid = true
			}
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			if _, seen := decl[fn.Name.Name]; !seen {
				decl[fn.Name.Name] = file
			}
		}
	}
	return decl, rapid, nil
}

// lastLines is the end of a command's output for a message.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

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
func (l *suiteLister) listPytest(ctx context.Context, s *config.Suite) (*suiteList, error) {
	python, hypothesis, err := l.pytestProbe(ctx)
	if err != nil {
		return nil, err
	}
	return l.collectPytest(ctx, s, python, hypothesis)
}

// pytestProbe finds the sandbox's interpreter that runs pytest
// (pytestPython) and whether it has Hypothesis.
func (l *suiteLister) pytestProbe(ctx context.Context) (python string, hypothesis bool, err error) {
	o, out, err := l.run(ctx, []string{"sh", "-c", pytestPython})
	if err != nil {
		return "", false, err
	}
	f := strings.Fields(string(out))
	if o.Result != attempt.Pass || len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return "", false, l.fail("no python3 in the sandbox imports pytest (looked for python3 on PATH, /usr/bin/python3 and /usr/local/bin/python3; a pyenv shim under $HOME is not what the sandbox runs): install it (Debian: apt-get install python3-pytest)")
	}
	return f[0], len(f) > 1 && f[1] == "hypothesis", nil
}

// collectPytest lists pytest suite s with python (pytestProbe's).
func (l *suiteLister) collectPytest(ctx context.Context, s *config.Suite, python string, hypothesis bool) (*suiteList, error) {
	list := &suiteList{python: python, hypothesis: hypothesis}
	argv := pyBootstrapArgv(append(pytestSuiteArgv(s, list.python), "--collect-only", "-q", s.Path), "run")
	o, out, err := l.run(ctx, argv)
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass && o.ExitCode != 5 { // 5: no tests collected
		return nil, l.fail("pytest --collect-only failed in the base tree (%s): %s", strings.TrimSpace(o.Result+" "+o.Reason), lastLines(out, 8))
	}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break // the node ids end at the first empty line
		}
		file, name, ok := strings.Cut(line, "::")
		if !ok || !inSuiteScope(s, file) && file != s.Path {
			continue
		}
		if !pytestNodeOK(name) {
			list.leaveOut(line)
			continue
		}
		if slices.ContainsFunc(list.tests, func(x suiteTest) bool { return x.file == file && x.name == name }) {
			continue
		}
		list.tests = append(list.tests, suiteTest{file: file, name: name})
	}
	if l.marks && len(list.tests) > 0 {
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
// arguments are pytest's. pyBootstrap runs it (mode "marks").
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
func (l *suiteLister) pytestSkips(ctx context.Context, s *config.Suite, list *suiteList) error {
	argv := pyBootstrapArgv(append(pytestSuiteArgv(s, list.python), "--collect-only", "-q", "-s", s.Path), "marks") // pybootstrap.go
	o, out, err := l.run(ctx, argv)
	if err != nil {
		return err
	}
	if o.Result != attempt.Pass && o.ExitCode != 5 {
		list.skipPlan = "pytest's mark evaluation: " + strings.TrimSpace(o.Result+" "+o.Reason) + ": " + lastLines(out, 3)
		return nil
	}
	list.skips = parseMarks(out, list.tests)
	return nil
}

// parseMarks reads pytestMarks' lines ("flakegate-skipped ID",
// "flakegate-xfail ID") for the listed node ids.
func parseMarks(out []byte, tests []suiteTest) map[string]string {
	ids := map[string]bool{}
	for _, t := range tests {
		ids[t.file+"::"+t.name] = true
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
