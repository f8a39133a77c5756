// Go test helpers: the packages of the module that only tests import,
// found by reading the imports of the base revision's .go files
// (go/parser, imports only; nothing is built or run).

package infra

import (
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// goPackage is one folder of the module: what its test files and its
// other files import, as module folders.
type goPackage struct {
	testImports, imports []string
}

// goHelpers lists the packages a Go property's tests depend on that only
// tests import, as globs of their .go files: the module packages its
// package's _test.go files import, and what those import in turn, less
// every package product code imports (the property's own package, and
// what any package the tests do not reach imports, transitively). Such a
// helper (an internal/.../footest package) decides the test as much as
// the package's own _test.go files do, so it is watched like them. A
// package of the module that only other packages' tests import is
// watched too, even if it is a library: a patch to it is CONTAMINATED for
// those tests rather than a pass.
//
// cache, when not nil, keeps each module's packages for the next property.
func goHelpers(prop string, files map[string]bool, read func(string) string, cache map[string]map[string]*goPackage) []Watch {
	root, module := goModule(path.Dir(prop), files, read)
	if module == "" {
		return nil
	}
	pkgs, ok := cache[root]
	if !ok {
		pkgs = goPackages(root, module, files, read)
		if cache != nil {
			cache[root] = pkgs
		}
	}
	propDir := path.Dir(prop)
	own, ok := pkgs[propDir]
	if !ok {
		return nil
	}
	// What the property's tests reach.
	reach := map[string]bool{}
	queue := append([]string(nil), own.testImports...)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if reach[d] || d == propDir {
			continue
		}
		if _, ok := pkgs[d]; !ok {
			continue
		}
		reach[d] = true
		queue = append(queue, pkgs[d].imports...)
	}
	// What product code reaches.
	product := map[string]bool{}
	queue = append([]string(nil), own.imports...)
	for d, p := range pkgs {
		if !reach[d] && d != propDir {
			queue = append(queue, p.imports...)
		}
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if product[d] {
			continue
		}
		product[d] = true
		if p, ok := pkgs[d]; ok {
			queue = append(queue, p.imports...)
		}
	}
	var dirs []string
	for d := range reach {
		if !product[d] {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	var out []Watch
	for _, d := range dirs {
		out = append(out, Watch{path.Join(d, "*.go"), "a Go package of the module only tests import (a test helper of " + propDir + ")"})
	}
	return out
}

// goModule finds the go.mod at or above dir and returns its folder and
// module path ("" when there is none).
func goModule(dir string, files map[string]bool, read func(string) string) (root, module string) {
	for d := dir; ; d = path.Dir(d) {
		gm := path.Join(d, "go.mod")
		if files[gm] {
			for _, l := range strings.Split(read(gm), "\n") {
				f := strings.Fields(strings.SplitN(l, "//", 2)[0])
				if len(f) == 2 && f[0] == "module" {
					m := f[1]
					if u, err := strconv.Unquote(m); err == nil {
						m = u
					}
					return d, m
				}
			}
			return d, ""
		}
		if d == "." {
			return "", ""
		}
	}
}

// goPackages reads the imports of every .go file of the module rooted at
// root (not vendor, testdata, nested modules or folders starting with .
// or _), keeping the imports of the module's own packages as folders.
func goPackages(root, module string, files map[string]bool, read func(string) string) map[string]*goPackage {
	nested := map[string]bool{}
	for f := range files {
		if path.Base(f) == "go.mod" && path.Dir(f) != root && under(root, f) {
			nested[path.Dir(f)] = true
		}
	}
	skip := func(f string) bool {
		for d := path.Dir(f); d != root && d != "."; d = path.Dir(d) {
			b := path.Base(d)
			if nested[d] || b == "vendor" || b == "testdata" || strings.HasPrefix(b, ".") || strings.HasPrefix(b, "_") {
				return true
			}
		}
		return false
	}
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if !strings.HasSuffix(f, ".go") || !under(root, f) || skip(f) {
			continue
		}
		d := path.Dir(f)
		p := pkgs[d]
		if p == nil {
			p = &goPackage{}
			pkgs[d] = p
		}
		af, err := parser.ParseFile(fset, f, read(f), parser.ImportsOnly)
		if err != nil || af == nil {
			continue
		}
		for _, is := range af.Imports {
			ip, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				continue
			}
			var dir string
			switch {
			case ip == module:
				dir = root
			case strings.HasPrefix(ip, module+"/"):
				dir = path.Join(root, strings.TrimPrefix(ip, module+"/"))
			default:
				continue
			}
			if strings.HasSuffix(f, "_test.go") {
				p.testImports = append(p.testImports, dir)
			} else {
				p.imports = append(p.imports, dir)
			}
		}
	}
	return pkgs
}

// under reports whether f lies inside the folder root ("." is the repository).
func under(root, f string) bool {
	return root == "." || strings.HasPrefix(f, root+"/")
}
