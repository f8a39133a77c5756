// Python's modules in one tree, and what each file imports, read with
// pysrc (never run). Where an import resolves depends on sys.path, which
// the configuration, a plugin, a .pth file or the code itself may set, so
// an absolute import resolves to every file of the tree whose path ends
// with the module's: a sound superset, whatever the roots are.

package impact

import (
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/internal/pysrc"
)

// pyIndex is one side's Python modules.
type pyIndex struct {
	t         *Trees
	candidate bool
	// exact maps a module path ("pkg/sub/mod", "pkg" for pkg/__init__.py)
	// to its files; suffix maps every tail of it ("sub/mod", "mod") too.
	exact, suffix map[string][]string
	// children maps a package's module path to its direct modules' files.
	children map[string][]string
	scans    map[string]pyScan
}

// pyScan is what one Python file says of itself.
type pyScan struct {
	imports []pysrc.Import
	dynamic string // why it may import what no import statement names ("" when not)
	starts  string // why it may start a process ("" when not)
	hooks   bool   // a conftest defining pytest hooks or pytest_plugins at the top level
}

// pyModule is the module path of Python file p ("" when p is none: .py,
// .pyi, an extension module .so or .pyd, or a .pyc beside its source or
// in __pycache__), and whether it is compiled code.
func pyModule(p string) (mod string, compiled bool) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case strings.HasSuffix(base, ".py") || strings.HasSuffix(base, ".pyi"):
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".py"), ".pyi")
	case strings.HasSuffix(base, ".pyc"):
		if path.Base(dir) == "__pycache__" {
			dir = pathDir(dir)
			if dir == "." {
				dir = ""
			}
		}
		base, _, _ = strings.Cut(base, ".")
		compiled = true
	case strings.HasSuffix(base, ".so") || strings.HasSuffix(base, ".pyd"):
		base, _, _ = strings.Cut(base, ".")
		compiled = true
	default:
		return "", false
	}
	if base == "" {
		return "", false
	}
	if base == "__init__" {
		if dir == "" {
			return "", false // an __init__.py at the root is no package's
		}
		return dir, compiled
	}
	if dir == "" {
		return base, compiled
	}
	return dir + "/" + base, compiled
}

// newPyIndex indexes the Python modules of one side of t.
func newPyIndex(t *Trees, candidate bool) *pyIndex {
	x := &pyIndex{t: t, candidate: candidate, exact: map[string][]string{}, suffix: map[string][]string{},
		children: map[string][]string{}, scans: map[string]pyScan{}}
	for p := range t.files(candidate) {
		mod, _ := pyModule(p)
		if mod == "" {
			continue
		}
		x.exact[mod] = append(x.exact[mod], p)
		parts := strings.Split(mod, "/")
		for i := range parts {
			x.suffix[strings.Join(parts[i:], "/")] = append(x.suffix[strings.Join(parts[i:], "/")], p)
		}
		x.children[pathDir(mod)] = append(x.children[pathDir(mod)], p)
	}
	return x
}

// scan reads file p of the index's side once.
func (x *pyIndex) scan(p string) pyScan {
	if s, ok := x.scans[p]; ok {
		return s
	}
	var s pyScan
	if _, compiled := pyModule(p); compiled {
		s.dynamic = p + " is compiled code, which may import any module"
	} else {
		src := x.t.readText(x.candidate, p)
		s = pyScan{imports: pysrc.Imports(src)}
		scanPyTokens(p, pysrc.LogicalLines(src), &s)
	}
	x.scans[p] = s
	return s
}

// Names that make a file reachable from everything.
var (
	// pyDynamic import modules by a name the code computes, or load
	// plugins the installed packages declare.
	pyDynamic = map[string]bool{"import_module": true, "run_path": true, "run_module": true, "spec_from_file_location": true,
		"spec_from_loader": true, "module_from_spec": true, "SourceFileLoader": true, "SourcelessFileLoader": true,
		"ExtensionFileLoader": true, "load_source": true, "load_module": true, "iter_modules": true, "walk_packages": true,
		"entry_points": true, "iter_entry_points": true, "load_entry_point": true, "importorskip": true, "pytest_plugins": true}
	// pyBuiltinDynamic are builtins, dynamic when called bare (obj.eval()
	// is a method).
	pyBuiltinDynamic = map[string]bool{"__import__": true, "exec": true, "eval": true, "execfile": true}
	// pyProcess start processes, whose reads no one sees.
	pyProcess = map[string]bool{"subprocess": true, "multiprocessing": true, "pty": true, "pexpect": true, "plumbum": true,
		"create_subprocess_exec": true, "create_subprocess_shell": true, "ProcessPoolExecutor": true}
	// pyOSProcess are os's functions that start processes.
	pyOSProcess = map[string]bool{"system": true, "popen": true, "fork": true, "forkpty": true, "posix_spawn": true,
		"posix_spawnp": true, "execv": true, "execve": true, "execvp": true, "execvpe": true, "execl": true, "execle": true,
		"execlp": true, "execlpe": true, "spawnv": true, "spawnve": true, "spawnvp": true, "spawnvpe": true, "spawnl": true,
		"spawnle": true, "spawnlp": true, "spawnlpe": true, "startfile": true}
)

// scanPyTokens finds in file p's lines what no import statement says: a
// dynamic import, a process start, and (for a conftest) pytest hooks.
func scanPyTokens(p string, lines []pysrc.Line, s *pyScan) {
	conftest := path.Base(p) == "conftest.py"
	for _, l := range lines {
		toks := l.Tokens
		fromOS := len(toks) > 2 && toks[0].Is(pysrc.Name, "from") && toks[1].Is(pysrc.Name, "os") && toks[2].Is(pysrc.Name, "import")
		for i, tok := range toks {
			if tok.Kind != pysrc.Name {
				continue
			}
			attr := i > 0 && toks[i-1].Is(pysrc.Op, ".")
			switch {
			case s.dynamic == "" && (pyDynamic[tok.Text] || pyBuiltinDynamic[tok.Text] && !attr):
				s.dynamic = p + " calls " + tok.Text
			case s.starts == "" && pyProcess[tok.Text]:
				s.starts = p + " uses " + tok.Text
			case s.starts == "" && pyOSProcess[tok.Text] && (fromOS || attr && i > 1 && toks[i-2].Is(pysrc.Name, "os")):
				s.starts = p + " calls os." + tok.Text
			}
		}
		if conftest && l.Indent == 0 && len(toks) > 1 {
			if toks[0].Is(pysrc.Name, "def") && strings.HasPrefix(toks[1].Text, "pytest_") || toks[0].Is(pysrc.Name, "pytest_plugins") {
				s.hooks = true
			}
		}
	}
}

// resolve returns the files an import in file p may load, and why it
// cannot be resolved ("" when it can). An absolute import of a module
// the tree does not hold resolves outside the tree (the standard library,
// an installed package): the same for both trees, so nothing.
func (x *pyIndex) resolve(p string, imp pysrc.Import) ([]string, string) {
	mod := strings.ReplaceAll(imp.Module, ".", "/")
	var files []string
	var roots []string // the module's root folders ("" for the tree's)
	if imp.Level > 0 {
		base := pathDir(p)
		for i := 1; i < imp.Level; i++ {
			if base == "." {
				return nil, p + " imports above the tree's root"
			}
			base = pathDir(base)
		}
		full := strings.TrimPrefix(path.Join(base, mod), "./")
		if full == "." {
			full = ""
		}
		files = append(files, x.exact[full]...)
		roots = append(roots, strings.TrimSuffix(strings.TrimSuffix(full, mod), "/"))
		if base != "." {
			files = append(files, x.exact[base]...) // the package's own __init__
		}
		for _, n := range imp.Names {
			if n != "*" {
				files = append(files, x.exact[strings.TrimPrefix(path.Join(full, n), "/")]...)
			}
		}
		if len(files) == 0 {
			return nil, p + " imports " + strings.Repeat(".", imp.Level) + imp.Module + ", which is in neither tree"
		}
	} else {
		for _, f := range x.suffix[mod] {
			files = append(files, f)
			m, _ := pyModule(f)
			roots = append(roots, strings.TrimSuffix(strings.TrimSuffix(m, mod), "/"))
		}
		for _, n := range imp.Names {
			if n != "*" {
				files = append(files, x.suffix[mod+"/"+n]...)
			}
		}
	}
	for _, r := range roots {
		files = append(files, x.parents(r, mod)...)
	}
	if slices.Contains(imp.Names, "*") {
		// A star import loads what the package's __all__ names, which may
		// be any of its modules.
		for _, r := range roots {
			files = append(files, x.children[strings.TrimPrefix(r+"/"+mod, "/")]...)
		}
	}
	return files, ""
}

// parents are the __init__ files of the packages on the way to module
// mod under root ("a/b/c" loads a and a/b first).
func (x *pyIndex) parents(root, mod string) []string {
	var out []string
	parts := strings.Split(mod, "/")
	for i := 1; i < len(parts); i++ {
		pkg := strings.Join(parts[:i], "/")
		if root != "" {
			pkg = root + "/" + pkg
		}
		out = append(out, x.exact[pkg]...)
	}
	return out
}
