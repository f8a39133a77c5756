// What a pytest project needs to run as it stands: the folders its code
// is imported from (a src/ layout, or pytest's own pythonpath setting),
// whether anything must be built first (extension modules), its build
// requirements, and the modules its tests import. Read from the files,
// never run.

package initconfig

import (
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/pysrc"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// PyLayout is what the files of a Python project say about how its tests
// import it.
type PyLayout struct {
	// SrcDirs are folders the project's code lives under and that nothing
	// puts on sys.path by itself: a src/ layout ("src"). Empty when the
	// project's pytest settings set pythonpath.
	SrcDirs []string
	// PytestPythonpath names the file whose pytest section sets
	// pythonpath (pytest >= 7 then adds those folders itself).
	PytestPythonpath string
	// Build is why something must be built before a test can import the
	// package ("" when nothing must: pure Python runs from the tree).
	Build string
	// BuildRequires are the modules of the build-system's requires
	// (pyproject.toml), as import names: setuptools, wheel, Cython...
	BuildRequires []string
}

// PythonLayout reads the project at the root of fsys.
func PythonLayout(fsys fs.FS) PyLayout {
	var l PyLayout
	for _, c := range []struct{ file, section string }{
		{"pytest.ini", "[pytest]"}, {"pyproject.toml", "[tool.pytest.ini_options]"},
		{"tox.ini", "[pytest]"}, {"setup.cfg", "[tool:pytest]"},
	} {
		if iniHasKey(fsys, c.file, c.section, "pythonpath") {
			l.PytestPythonpath = c.file
			break
		}
	}
	if l.PytestPythonpath == "" && isDir(fsys, "src") && hasPythonUnder(fsys, "src") {
		l.SrcDirs = []string{"src"}
	}
	setup, _ := fs.ReadFile(fsys, "setup.py")
	if extensionRe.Match(setup) {
		l.Build = "setup.py builds extension modules"
	} else if f := firstExtensionSource(fsys); f != "" {
		l.Build = f + " is an extension module's source"
	}
	if l.Build != "" {
		l.BuildRequires = buildRequires(fsys)
	}
	return l
}

var extensionRe = lazyre.New(`\b(ext_modules|Extension\(|cythonize\()`)

// iniHasKey reports whether file has key = ... in section (an INI or a
// TOML table; only the section header and the key's start are read).
func iniHasKey(fsys fs.FS, file, section, key string) bool {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return false
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == section
			continue
		}
		if in {
			if k, _, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == key {
				return true
			}
		}
	}
	return false
}

func isDir(fsys fs.FS, p string) bool {
	fi, err := fs.Stat(fsys, p)
	return err == nil && fi.IsDir()
}

// hasPythonUnder reports whether dir holds a .py file within two levels
// (src/pkg/__init__.py, src/mod.py).
func hasPythonUnder(fsys fs.FS, dir string) bool {
	found := false
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return fs.SkipDir
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(p, dir), "/") > 2 {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".py") {
			found = true
		}
		return nil
	})
	return found
}

// firstExtensionSource is a Cython source (.pyx) outside tests and
// dependencies, "" when there is none.
func firstExtensionSource(fsys fs.FS) string {
	found := ""
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "build") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".pyx") {
			found = p
		}
		return nil
	})
	return found
}

var requirementNameRe = lazyre.New(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

// buildRequires reads [build-system] requires = [...] of pyproject.toml
// (one line or several) as import names; setuptools when there is none.
func buildRequires(fsys fs.FS) []string {
	b, err := fs.ReadFile(fsys, "pyproject.toml")
	if err != nil {
		return []string{"setuptools"}
	}
	text := string(b)
	i := strings.Index(text, "[build-system]")
	if i < 0 {
		return []string{"setuptools"}
	}
	text = text[i:]
	j := strings.Index(text, "requires")
	if j < 0 {
		return []string{"setuptools"}
	}
	text = text[j:]
	open, end := strings.IndexByte(text, '['), strings.IndexByte(text, ']')
	if open < 0 || end < open {
		return []string{"setuptools"}
	}
	var out []string
	for _, item := range strings.Split(text[open+1:end], ",") {
		item = strings.Trim(strings.TrimSpace(item), `"'`)
		if m := requirementNameRe.FindStringSubmatch(item); m != nil {
			name := strings.ToLower(strings.ReplaceAll(m[1], "-", "_"))
			if name == "cython" {
				name = "Cython"
			}
			out = append(out, name)
		}
	}
	return out
}

// PythonImports are the top-level modules the property tests' files and
// every conftest.py import, except the project's own (a module or
// package at the root, under a SrcDirs folder or beside the file) and
// relative imports: what an interpreter must already have.
func PythonImports(fsys fs.FS, tests []discover.Test, l PyLayout) []string {
	files := map[string]bool{}
	for _, t := range tests {
		if t.Framework == discover.PytestHypothesis {
			files[t.Path] = true
		}
	}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "venv") {
			return fs.SkipDir
		}
		if !d.IsDir() && d.Name() == "conftest.py" {
			files[p] = true
		}
		return nil
	})
	seen := map[string]bool{}
	var out []string
	for f := range files {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			continue
		}
		roots := append([]string{".", path.Dir(f)}, l.SrcDirs...)
		for _, m := range topImports(string(src)) {
			if seen[m] || local(fsys, m, roots) {
				continue
			}
			seen[m] = true
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// local reports whether module m is a file or folder under one of roots.
func local(fsys fs.FS, m string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool {
		for _, p := range []string{path.Join(r, m+".py"), path.Join(r, m)} {
			if _, err := fs.Stat(fsys, p); err == nil {
				return true
			}
		}
		return false
	})
}

// topImports are the first names of the absolute imports of src's
// unindented import statements ("import a.b, c" and "from a.b import x").
func topImports(src string) []string {
	var out []string
	for _, l := range pysrc.LogicalLines(src) {
		toks := l.Tokens
		if l.Indent != 0 || len(toks) < 2 || toks[0].Kind != pysrc.Name {
			continue
		}
		switch toks[0].Text {
		case "import":
			for _, part := range pysrc.Split(toks[1:], ",") {
				if d, n := pysrc.Dotted(part); n > 0 {
					out = append(out, strings.Split(d, ".")[0])
				}
			}
		case "from":
			if d, n := pysrc.Dotted(toks[1:]); n > 0 && d != "__future__" {
				out = append(out, strings.Split(d, ".")[0])
			}
		}
	}
	return out
}

// importorskipArgRe is the module an importorskip call names: its first
// argument, a plain string literal of a dotted name.
var importorskipArgRe = lazyre.New(`importorskip\(\s*[rRuU]?(["'])([A-Za-z_][A-Za-z0-9_.]*)["']`)

// PythonOptional maps each pytest property test's file to the top-level
// modules it skips itself without: the modules of its unindented
// pytest.importorskip("name") calls (or a bare importorskip imported from
// pytest), which skip the whole file, and so every property in it, where
// the interpreter lacks them. The project's own modules are left out, as
// in PythonImports. A call inside a string or a comment is not one.
func PythonOptional(fsys fs.FS, tests []discover.Test, l PyLayout) map[string][]string {
	out := map[string][]string{}
	for _, t := range tests {
		if t.Framework != discover.PytestHypothesis || out[t.Path] != nil {
			continue
		}
		src, err := fs.ReadFile(fsys, t.Path)
		if err != nil {
			continue
		}
		roots := append([]string{".", path.Dir(t.Path)}, l.SrcDirs...)
		var mods []string
		for _, m := range moduleSkips(string(src)) {
			if !slices.Contains(mods, m) && !local(fsys, m, roots) {
				mods = append(mods, m)
			}
		}
		if len(mods) > 0 {
			out[t.Path] = mods
		}
	}
	return out
}

// moduleSkips are the top-level modules of src's unindented importorskip
// calls. The tokens say that a line calls it (a string's contents are no
// token); the module's name is read from the line's own text.
func moduleSkips(src string) []string {
	phys := strings.Split(src, "\n")
	var out []string
	for _, l := range pysrc.LogicalLines(src) {
		toks := l.Tokens
		if l.Indent != 0 || l.Number < 1 || l.Number > len(phys) {
			continue
		}
		call := false
		for i := 0; i+2 < len(toks); i++ {
			if toks[i].Is(pysrc.Name, "importorskip") && toks[i+1].Is(pysrc.Op, "(") && toks[i+2].Kind == pysrc.Literal &&
				(i == 0 || !toks[i-1].Is(pysrc.Op, ".") || i >= 2 && toks[i-2].Is(pysrc.Name, "pytest")) {
				call = true
				break
			}
		}
		if !call {
			continue
		}
		text := strings.Join(phys[l.Number-1:min(len(phys), l.Number+4)], "\n")
		if m := importorskipArgRe.FindStringSubmatch(text); m != nil {
			out = append(out, strings.Split(m[2], ".")[0])
		}
	}
	return out
}

// PythonPackageDirs finds where the repository's Python tests import
// the project's code from when it sits in a folder that nothing puts on
// sys.path (py/pkg beside py/tests): for each top-level module a test
// file (test_*.py, *_test.py) or a conftest.py imports that is no module
// of the root, of the file's folder or of l.SrcDirs, the one folder of
// the repository that holds it as a package (DIR/m/__init__.py) or a
// module (DIR/m.py). A module found in no folder or in more than one is
// left out; so are hidden, vendored, virtual-environment and build
// folders. It maps each module to its folder.
func PythonPackageDirs(fsys fs.FS, l PyLayout) map[string]string {
	skipDir := func(name string) bool {
		return strings.HasPrefix(name, ".") || slices.Contains([]string{"node_modules", "venv", "vendor", "__pycache__", "build", "dist", "site-packages"}, name)
	}
	var tests []string
	holders := map[string][]string{} // module -> the folders holding it
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && skipDir(name) {
				return fs.SkipDir
			}
			if _, err := fs.Stat(fsys, path.Join(p, "__init__.py")); err == nil && p != "." {
				holders[name] = append(holders[name], path.Dir(p))
			}
			return nil
		}
		if !strings.HasSuffix(name, ".py") {
			return nil
		}
		if name == "conftest.py" || strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py") {
			tests = append(tests, p)
		} else if name != "__init__.py" && name != "setup.py" {
			m := strings.TrimSuffix(name, ".py")
			holders[m] = append(holders[m], path.Dir(p))
		}
		return nil
	})
	out := map[string]string{}
	for _, f := range tests {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			continue
		}
		roots := append([]string{".", path.Dir(f)}, l.SrcDirs...)
		for _, m := range topImports(string(src)) {
			if _, seen := out[m]; seen || local(fsys, m, roots) {
				continue
			}
			// A folder inside a package is no folder to put on sys.path.
			var dirs []string
			for _, d := range holders[m] {
				if _, err := fs.Stat(fsys, path.Join(d, "__init__.py")); err != nil && d != "." && !slices.Contains(dirs, d) {
					dirs = append(dirs, d)
				}
			}
			if len(dirs) == 1 {
				out[m] = dirs[0]
			}
		}
	}
	return out
}
