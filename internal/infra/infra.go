// Test infrastructure found, not declared: the Python helper modules a
// pytest property imports from the repository's test folders, and the
// config and setup files of vitest and jest.

package check

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// JavaScript test runners whose files are watched.
const (
	jsVitest = config.FrameworkVitest
	jsJest   = config.FrameworkJest
)

// repoFiles lists the files of the base revision once.
func (c *checker) repoFiles(ctx context.Context) (map[string]bool, error) {
	if c.baseFiles != nil {
		return c.baseFiles, nil
	}
	names, err := c.git.ListFiles(ctx, c.baseSHA)
	if err != nil {
		return nil, err
	}
	c.baseFiles = make(map[string]bool, len(names))
	for _, n := range names {
		c.baseFiles[n] = true
	}
	return c.baseFiles, nil
}

// propGlobs is watchGlobs plus the infrastructure found in the base
// revision, by the property's framework and its file's language (never
// by how run is spelled): the Python helper modules a .py property
// imports, the Go packages of the module only tests import, and what the
// vitest or jest config names.
func (c *checker) propGlobs(ctx context.Context, p *config.Property) ([]watchGlob, error) {
	out := watchGlobs(c.cfg, p)
	py := p.Framework == config.FrameworkPytest || strings.HasSuffix(p.Path, ".py")
	gotest := p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go")
	js := p.Framework == jsVitest || p.Framework == jsJest
	if !py && !gotest && !js {
		return out, nil
	}
	files, err := c.repoFiles(ctx)
	if err != nil {
		return nil, err
	}
	if c.baseText == nil {
		c.baseText = map[string]string{}
	}
	read := func(rel string) string {
		if s, ok := c.baseText[rel]; ok {
			return s
		}
		b, err := c.git.Show(ctx, c.baseSHA, rel)
		if err != nil {
			return ""
		}
		c.baseText[rel] = string(b)
		return string(b)
	}
	if gotest && c.goPkgs == nil {
		// Every .go file and go.mod of the base, in one git process.
		var names []string
		for f := range files {
			if strings.HasSuffix(f, ".go") || path.Base(f) == "go.mod" {
				names = append(names, f)
			}
		}
		got, err := c.git.ShowFiles(ctx, c.baseSHA, names)
		if err != nil {
			return nil, err
		}
		for _, f := range names {
			c.baseText[f] = string(got[f])
		}
		c.goPkgs = map[string]map[string]*goPackage{}
	}
	if py {
		out = append(out, pyHelpers(p.Path, files, read)...)
	}
	if gotest {
		out = append(out, goHelpers(p.Path, files, read, c.goPkgs)...)
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
func pyHelpers(prop string, files map[string]bool, read func(string) string) []watchGlob {
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
	var out []watchGlob
	seen := map[string]bool{prop: true}
	queue := []string{prop}
	add := func(f, importer string) {
		if seen[f] || !files[f] || !inTests(f) {
			return
		}
		seen[f] = true
		out = append(out, watchGlob{f, "a test helper imported by " + importer})
		queue = append(queue, f)
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, imp := range pyImports(read(f)) {
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
	sort.Slice(out, func(i, j int) bool { return out[i].glob < out[j].glob })
	return out
}

// pyResolve finds the files an import of file f may load: for an
// absolute import, the module under the first folder from f's up to the
// root that has it (pytest puts the test's folder and the rootdir on
// sys.path); for a relative one, under f's package. A "from M import n"
// also resolves n as a submodule of M.
func pyResolve(f string, imp pyImport, files map[string]bool) []string {
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
