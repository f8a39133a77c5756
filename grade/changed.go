package grade

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// A test the patch changes is a new test: its candidate's version runs
// new_test_runs times on the candidate's own tree, while the base's
// version still runs on the graded tree. A test's version is its own
// source and the source of every unit of its file (or, for go, of its
// package's test files) it may reach: a helper it calls, a fixture it
// names, a type or a variable it uses, transitively, found by name (a
// local variable of the same name counts too: more is never less
// sound). A unit that runs for every test (a Go init or TestMain, a
// blank or dot import, Python module code that is no definition, an
// autouse fixture, a js hook) that changes changes every test of the
// file. Where the source does not parse, every test is changed.

// units are the named parts of one version of a test's source: each
// name's text (all its declarations, in order) and the names it uses;
// global is the text of what runs for every test.
type units struct {
	text   map[string]string
	refs   map[string]map[string]bool
	global string
}

func newUnits() *units {
	return &units{text: map[string]string{}, refs: map[string]map[string]bool{}}
}

// add records a declaration of name with its text and the names it uses.
func (u *units) add(name, text string, refs []string) {
	u.text[name] += text + "\x00"
	if u.refs[name] == nil {
		u.refs[name] = map[string]bool{}
	}
	for _, r := range refs {
		u.refs[name][r] = true
	}
}

// changedNames reports, for each of names (the units the tests start
// from), whether the unit or anything it reaches differs between base
// and cand.
func changedNames(base, cand *units, names map[string]string) map[string]bool {
	out := map[string]bool{}
	if base.global != cand.global {
		for n := range names {
			out[n] = true
		}
		return out
	}
	for test, start := range names {
		seen := map[string]bool{}
		queue := []string{start}
		for len(queue) > 0 && !out[test] {
			n := queue[0]
			queue = queue[1:]
			if seen[n] {
				continue
			}
			seen[n] = true
			if base.text[n] != cand.text[n] {
				out[test] = true
				break
			}
			for r := range base.refs[n] {
				queue = append(queue, r)
			}
			for r := range cand.refs[n] {
				queue = append(queue, r)
			}
		}
		if !out[test] {
			out[test] = false
		}
	}
	return out
}

// ChangedGo reports which of the tests names (top-level Test, Fuzz,
// Example or Benchmark functions of a Go package; subtests are part of
// theirs) the patch changes, from the package's _test.go files in each
// tree (path -> source). Units are top-level declarations, found by
// their names; a method is found by its name alone. The package clause,
// init functions, TestMain, a blank or dot import and a declaration of
// _ run for every test.
func ChangedGo(base, cand map[string][]byte, names []string) map[string]bool {
	bu, okB := goUnits(base)
	cu, okC := goUnits(cand)
	start := map[string]string{}
	for _, n := range names {
		start[n] = n
	}
	if !okB || !okC {
		return allChanged(names)
	}
	return changedNames(bu, cu, start)
}

// allChanged says every test changed.
func allChanged(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// goUnits reads the units of a Go package's test files.
func goUnits(files map[string][]byte) (*units, bool) {
	u := newUnits()
	var global []string
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		src := files[p]
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, p, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, false
		}
		text := func(n ast.Node) string {
			return string(src[fs.Position(n.Pos()).Offset:fs.Position(n.End()).Offset])
		}
		global = append(global, p+" package "+f.Name.Name)
		for _, d := range f.Decls {
			refs := identsOf(d)
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv == nil && (name == "init" || name == "TestMain" || name == "_") {
					global = append(global, text(d))
					continue
				}
				u.add(name, text(d), refs)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ImportSpec:
						name := ""
						if s.Name != nil {
							name = s.Name.Name
						}
						if name == "_" || name == "." {
							global = append(global, text(s))
							continue
						}
						if name != "" {
							u.add(name, text(s), nil)
							continue
						}
						for _, n := range importNames(s.Path.Value) {
							u.add(n, text(s), nil)
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.Name == "_" {
								global = append(global, text(d))
							} else {
								u.add(id.Name, text(d), refs)
							}
						}
					case *ast.TypeSpec:
						u.add(s.Name.Name, text(d), refs)
					}
				}
			}
		}
	}
	u.global = strings.Join(global, "\x00")
	return u, true
}

// importNames are the names an import of the quoted path may bind by
// default (the package's own name is not read): its last element, the
// one before a "vN" major version, and either without a "go-" prefix or
// a ".go" or "-go" suffix.
func importNames(quoted string) []string {
	segs := strings.Split(strings.Trim(quoted, "\"`"), "/")
	last := segs[len(segs)-1]
	out := []string{last}
	if len(segs) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		out = append(out, segs[len(segs)-2])
	}
	for _, n := range out {
		t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(n, "go-"), ".go"), "-go")
		if t != n {
			out = append(out, t)
		}
	}
	return out
}

// identsOf lists every identifier in n.
func identsOf(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok {
			out = append(out, id.Name)
		}
		return true
	})
	return out
}
