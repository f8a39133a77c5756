// Package infra finds a property's test infrastructure in the base
// revision, by reading it, never by running it: the Python helper modules
// a pytest property imports from the repository's test folders
// (pysrc.Imports), the Go packages of the module that only tests import
// (goinfra.go), and the config and setup files of vitest and jest
// (jsconfig.go). What it finds is watched like the property's own file:
// a candidate that changes it is CONTAMINATED for that property. The check
// calls it through a Finder, one per base revision.
package infra

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/pysrc"
)

// JavaScript test runners whose files are watched.
const (
	jsVitest = config.FrameworkVitest
	jsJest   = config.FrameworkJest
)

// Watch is one path or glob a property is graded against, and why.
type Watch struct {
	Glob, Why string
}

// Finder reads one revision of a repository, each file at most once, for
// every property it is asked about. It is not safe for concurrent use.
type Finder struct {
	git    *git.Client
	sha    string
	files  map[string]bool                  // the files of the revision, read once
	text   map[string]string                // the files read, kept for the next property
	goPkgs map[string]map[string]*goPackage // the packages of each Go module, by module folder (goinfra.go)
}

// New is a Finder over revision sha of the repository g reads.
func New(g *git.Client, sha string) *Finder {
	return &Finder{git: g, sha: sha}
}

// Files lists the files of the revision (read once).
func (f *Finder) Files(ctx context.Context) (map[string]bool, error) {
	if f.files != nil {
		return f.files, nil
	}
	names, err := f.git.ListFiles(ctx, f.sha)
	if err != nil {
		return nil, err
	}
	f.files = make(map[string]bool, len(names))
	for _, n := range names {
		f.files[n] = true
	}
	return f.files, nil
}

// Find lists the infrastructure of property p found in the revision, by
// its framework and its file's language (never by how run is spelled):
// the Python helper modules a .py property imports, the Go packages of the
// module only tests import, and what the vitest or jest config names.
func (f *Finder) Find(ctx context.Context, p *config.Property) ([]Watch, error) {
	py := p.Framework == config.FrameworkPytest || strings.HasSuffix(p.Path, ".py")
	gotest := p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go")
	js := p.Framework == jsVitest || p.Framework == jsJest
	if !py && !gotest && !js {
		return nil, nil
	}
	files, err := f.Files(ctx)
	if err != nil {
		return nil, err
	}
	if f.text == nil {
		f.text = map[string]string{}
	}
	read := func(rel string) string {
		if s, ok := f.text[rel]; ok {
			return s
		}
		b, err := f.git.Show(ctx, f.sha, rel)
		if err != nil {
			return ""
		}
		f.text[rel] = string(b)
		return string(b)
	}
	if gotest && f.goPkgs == nil {
		// Every .go file and go.mod of the revision, in one git process.
		var names []string
		for name := range files {
			if strings.HasSuffix(name, ".go") || path.Base(name) == "go.mod" {
				names = append(names, name)
			}
		}
		got, err := f.git.ShowFiles(ctx, f.sha, names)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			f.text[name] = string(got[name])
		}
		f.goPkgs = map[string]map[string]*goPackage{}
	}
	var out []Watch
	if py {
		out = append(out, pyHelpers(p.Path, files, read)...)
	}
	if gotest {
		out = append(out, goHelpers(p.Path, files, read, f.goPkgs)...)
	}
	if js {
		out = append(out, jsInfra(p.Framework, p, files, read)...)
	}
	return out, nil
}

// pyHelpers follows the imports of the property file, transitively, to
// the Python files of the repository's test folders: the property's
// folder and every folder holding a conftest.py, with what lies below
// them (never the repository root itself, which holds product code in
// most layouts). Product code it imports is not watched, nor followed.
func pyHelpers(prop string, files map[string]bool, read func(string) string) []Watch {
	var testDirs []string
	if d := path.Dir(prop); d != "." {
		testDirs = append(testDirs, d)
	}
	for f := range files {
		if path.Base(f) == "conftest.py" && path.Dir(f) != "." {
			testDirs = append(testDirs, path.Dir(f))
		}
	}
	inTests := func(f string) bool {
		for _, d := range testDirs {
			if strings.HasPrefix(f, d+"/") {
				return true
			}
		}
		return false
	}
	var out []Watch
	seen := map[string]bool{prop: true}
	queue := []string{prop}
	add := func(f, importer string) {
		if seen[f] || !files[f] || !inTests(f) {
			return
		}
		seen[f] = true
		out = append(out, Watch{f, "a test helper imported by " + importer})
		queue = append(queue, f)
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, imp := range pysrc.Imports(read(f)) {
			for _, m := range pyResolve(f, imp, files) {
				// A package's __init__.py files run on import too.
				for d := path.Dir(m); d != "." && inTests(d+"/__init__.py"); d = path.Dir(d) {
					if path.Base(m) != "__init__.py" || d != path.Dir(m) {
						add(d+"/__init__.py", f)
					}
				}
				add(m, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Glob < out[j].Glob })
	return out
}

// pyResolve finds the files an import of file f may load: for an
// absolute import, the module under the first folder from f's up to the
// root that has it (pytest puts the test's folder and the rootdir on
// sys.path); for a relative one, under f's package. A "from M import n"
// also resolves n as a submodule of M.
func pyResolve(f string, imp pysrc.Import, files map[string]bool) []string {
	modPath := strings.ReplaceAll(imp.Module, ".", "/")
	lookup := func(root, rel string) string {
		if rel == "" {
			if root == "." {
				return ""
			}
			return pick(files, root+"/__init__.py")
		}
		p := path.Join(root, rel)
		return pick(files, p+".py", p+"/__init__.py")
	}
	resolveIn := func(root string) []string {
		m := lookup(root, modPath)
		if m == "" && imp.Level == 0 {
			return nil
		}
		var got []string
		if m != "" {
			got = append(got, m)
		}
		for _, n := range imp.Names {
			if n == "*" {
				continue
			}
			if s := lookup(root, path.Join(modPath, n)); s != "" {
				got = append(got, s)
			}
		}
		return got
	}
	if imp.Level > 0 {
		root := path.Dir(f)
		for i := 1; i < imp.Level; i++ {
			root = path.Dir(root)
		}
		return resolveIn(root)
	}
	for d := path.Dir(f); ; d = path.Dir(d) {
		if got := resolveIn(d); len(got) > 0 {
			return got
		}
		if d == "." {
			return nil
		}
	}
}

func pick(files map[string]bool, names ...string) string {
	for _, n := range names {
		if files[n] {
			return n
		}
	}
	return ""
}
