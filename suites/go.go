// go suites: the listing (go list, then go test -json -list . by
// package, each test's file from the package's test files parsed), the
// kinds go test does not run as a suite runs it, and the tests the
// base's own run skipped (MarkGoSkips).

package suites

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/internal/lazyre"
)

// goTestName is a name go test -list prints for a test (batch's own
// copy checks a run template's name).
var goTestName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// GoListTemplate prints one line per package: import path, folder,
// test files and external test files.
const GoListTemplate = `{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{join .TestGoFiles " "}}{{"\t"}}{{join .XTestGoFiles " "}}`

// listGo lists the tests of a go suite: the packages (go list), their
// tests (go test -json -list ., by package), and the file each test is
// declared in (the package's test files, parsed). Top-level Test, Fuzz
// and Example functions go test lists are tests (an example is listed
// only with an output comment, and then run and judged like a test);
// subtests are part of theirs. Benchmarks (run only with -bench) and
// examples without output are noted as not gated.
func (l *Lister) listGo(ctx context.Context, s *config.Suite) (*List, error) {
	module, err := GoModulePath(filepath.Join(l.Dir, "go.mod"))
	if err != nil {
		return nil, l.Fail("a go suite needs the module's go.mod at the repository root: %v", err)
	}
	o, out, err := l.Run(ctx, []string{"go", "list", "-f", GoListTemplate, s.Path})
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass {
		return nil, l.Fail("go list %s failed (%s): %s", s.Path, strings.TrimSpace(o.Result+" "+o.Reason), gocache.Failure(string(out), 5))
	}
	list := &List{PkgTests: map[string][]string{}, Rapid: map[string]bool{}}
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
		decl, rapid, err := goTestDecls(l.Dir, rel, append(strings.Fields(f[2]), strings.Fields(f[3])...))
		if err != nil {
			return nil, l.Fail("%v", err)
		}
		files[arg], list.Rapid[arg] = decl, rapid
	}
	if len(pkgs) == 0 {
		return list, nil
	}
	o, out, err = l.Run(ctx, append([]string{"go", "test", "-json", "-list", "."}, pkgs...))
	if err != nil {
		return nil, err
	}
	if o.Result != attempt.Pass {
		return nil, l.Fail("go test -list failed in the base tree (%s): %s", strings.TrimSpace(o.Result+" "+o.Reason), gocache.Failure(string(out), 8))
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
		list.PkgTests[arg] = append(list.PkgTests[arg], name)
		file, ok := files[arg][name]
		if !ok || slices.ContainsFunc(list.Tests, func(x Test) bool { return x.Pkg == arg && x.Name == name }) {
			continue // printed by the code under test, not declared; or twice
		}
		if GoTestKind(name, "Benchmark") {
			list.NotRun.add(NotRunBench, arg+" "+name)
			continue
		}
		if !GoTestKind(name, "Test") && !GoTestKind(name, "Fuzz") && !GoTestKind(name, "Example") {
			continue
		}
		list.Tests = append(list.Tests, Test{Pkg: arg, File: file, Name: name})
	}
	list.notRunExamples(files)
	return list, nil
}

// GoTestKind reports whether name is a function go test takes as one of
// kind (Test, Benchmark, Fuzz, Example): the prefix alone, or followed by
// anything but a lower-case letter (as go test decides it).
func GoTestKind(name, kind string) bool {
	rest, ok := strings.CutPrefix(name, kind)
	return ok && (rest == "" || !unicode.IsLower([]rune(rest)[0]))
}

// The kinds of tests a go suite's packages declare that go test does not
// run as the suite runs them: they are not gated, and the check says so.
const (
	NotRunBench   = "benchmarks (go test runs them only with -bench)"
	NotRunExample = "examples without an output comment (go test compiles them and runs none)"
)

// notRunExamples notes the examples a test file declares that go test
// did not list: without an "// Output:" comment an example is compiled,
// never run. files are each package's declared functions, by name.
func (l *List) notRunExamples(files map[string]map[string]string) {
	pkgs := make([]string, 0, len(files))
	for arg := range files {
		pkgs = append(pkgs, arg)
	}
	sort.Strings(pkgs)
	for _, arg := range pkgs {
		names := make([]string, 0, len(files[arg]))
		for name := range files[arg] {
			if GoTestKind(name, "Example") && !slices.Contains(l.PkgTests[arg], name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			l.NotRun.add(NotRunExample, arg+" "+name)
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

// MarkGoSkips marks in list what the fill from key recorded as skipped
// by the base (a replay's key is the base's, BaseKey).
func MarkGoSkips(gc *gocache.Caches, key string, s *config.Suite, list *List, dir string) {
	if s.Framework != config.FrameworkGo {
		return
	}
	skipped, ok := gc.BaseSkipped(key)
	if !ok || len(skipped) == 0 {
		return
	}
	module, err := GoModulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return
	}
	for _, t := range list.Tests {
		imp := module
		if t.Pkg != "." {
			imp += "/" + strings.TrimPrefix(t.Pkg, "./")
		}
		if skipped[imp+"\x00"+t.Name] {
			if list.Skips == nil {
				list.Skips = map[string]string{}
			}
			list.Skips[t.File+"::"+t.Name] = "skipped"
		}
	}
}

// GoModulePath reads the module directive of a go.mod file.
func GoModulePath(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("no go.mod at the tree's root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if i := strings.Index(l, "//"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if rest, ok := strings.CutPrefix(l, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t' || rest[0] == '"') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", file)
}
