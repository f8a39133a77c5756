// pytest comes from the toolchain, not from the tree: every pytest
// command flakegate builds (a suite's listing and its skips, every batch,
// the new tests' runs, a property run as `python -m pytest`, alone or
// in a batch)
// starts the interpreter with PyBootstrap in place of `-m pytest`.
//
// `python -m pytest` puts the working folder (the tree) first on
// sys.path, before the standard library and site-packages, so a patch's
// top-level pytest/ package ran instead of pytest, and a *.dist-info
// folder it committed declared a pytest11 plugin that pytest loaded (and
// that turned failures into passes). The bootstrap, before pytest is
// imported:
//
//   - takes every sys.path entry inside the tree out (the working
//     folder `-c` puts first, and PYTHONPATH entries there), and puts
//     them back, with the folders it is given (a suite's pythonpath),
//     after the standard library and before site-packages: the tree's
//     own package still beats an installed copy, as before, but no module
//     of the tree shadows the standard library;
//   - makes importlib.metadata blind to the tree (its search path never
//     holds a folder of the tree), so pytest loads the pytest11 plugins
//     of the environment's distributions only, by their names (-p
//     no:NAME still works), and any other entry point group (Hypothesis'
//     own) is the environment's too;
//   - resolves the framework's top-level modules (pytest, _pytest,
//     pluggy, py, hypothesis and the module of every pytest11 entry point
//     of the environment) from outside the tree only, whenever they are
//     first imported (a finder first on sys.meta_path): a module of the
//     tree cannot stand in for them, even after pytest's own rootdir
//     insertion puts the tree first again.
//
// It runs pytest as -m pytest does (runpy, __main__), or, for the
// listing of what the base skips (pytestMarks), pytest.main with that
// plugin. Children the tests start get the same PYTHONPATH as before.
// The bootstrap's arguments: the folders (relative to the tree, joined
// by os.pathsep, "" for none), the mode ("run" or "marks"), pytest's
// arguments.

package suites

import (
	"path"
	"slices"
	"strings"
)

// PyBootstrap is the program `python -c` runs (see the top of the file).
const PyBootstrap = `import os, sys
root = os.path.realpath(os.getcwd())
def inside(p):
    p = os.path.realpath(os.path.join(root, p))
    return p == root or p.startswith(root + os.sep)
tree = [p for p in sys.path if inside(p)]
sys.path[:] = [p for p in sys.path if not inside(p)]
folders = [f for f in sys.argv[1].split(os.pathsep) if f]
mode, args = sys.argv[2], sys.argv[3:]
try:
    import importlib.metadata as md
except ImportError:
    md = None
if md is not None:
    _path = md.DistributionFinder.Context.path
    md.DistributionFinder.Context.path = property(lambda self: [p for p in _path.fget(self) if not inside(p)])
guarded = set(["pytest", "_pytest", "pluggy", "py", "hypothesis", "_hypothesis_pytestplugin"])
if md is not None:
    try:
        eps = md.entry_points()
        eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
        guarded.update(ep.value.split(":")[0].split(".")[0].strip() for ep in eps)
    except Exception:
        pass
import importlib.machinery
class FrameworkFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if path is not None or name not in guarded:
            return None
        return importlib.machinery.PathFinder.find_spec(name, [p for p in sys.path if not inside(p)])
sys.meta_path.insert(0, FrameworkFinder)
at = len(sys.path)
for i, p in enumerate(sys.path):
    if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"):
        at = i
        break
back = []
for p in [root] + [os.path.join(root, f) for f in folders] + tree:
    p = os.path.realpath(os.path.join(root, p))
    if p not in back:
        back.append(p)
sys.path[at:at] = back
if folders:
    os.environ["PYTHONPATH"] = os.pathsep.join(folders + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
sys.argv = ["pytest"] + args
if mode == "marks":
    exec(compile(MARKS, "flakegate-marks", "exec"))
else:
    import runpy
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)
`

// PyBootstrapArgv rewrites a pytest command flakegate built: the first
// `PYTHON -m pytest` in it runs through PyBootstrap in mode ("run", or
// "marks" for pytestMarks), and a PYTHONPATH that an env(1) before the
// interpreter sets is handed to the bootstrap instead (its folders go
// after the standard library; a sitecustomize or site module in them
// would otherwise run before anything). A command with no such
// interpreter is returned as it is (a property's own `pytest` script:
// docs/sandbox.md says what it trusts).
func PyBootstrapArgv(argv []string, mode string) []string {
	at := -1
	for i := 0; i+2 < len(argv); i++ {
		if strings.HasPrefix(path.Base(argv[i]), "python") && argv[i+1] == "-m" && argv[i+2] == "pytest" {
			at = i
			break
		}
	}
	if at < 0 {
		return argv
	}
	out := make([]string, 0, len(argv)+4)
	folders := ""
	env := slices.IndexFunc(argv[:at], func(a string) bool { return path.Base(a) == "env" })
	for i, a := range argv[:at] {
		if env >= 0 && i > env && strings.HasPrefix(a, "PYTHONPATH=") {
			folders = strings.TrimPrefix(a, "PYTHONPATH=")
			continue
		}
		out = append(out, a)
	}
	program := PyBootstrap
	if mode == "marks" {
		program = "MARKS = " + pyQuote(pytestMarks) + "\n" + PyBootstrap
	}
	out = append(out, argv[at], "-c", program, folders, mode)
	return append(out, argv[at+3:]...)
}

// pyQuote is s as a Python string literal.
func pyQuote(s string) string {
	return `"""` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"""`, `\"\"\"`) + `"""`
}
