package suites

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// The base's listing of a go suite, kept between checks. Listing runs
// go list and go test -list in the sandbox on the base tree (the second
// builds and links every test binary): about half a second of every
// check of a suite, for an answer that only the base commit, the suite's
// pattern, the toolchain and the attempts' environment decide. So a
// listing that succeeded is kept under <git common dir>/flakegate/
// suitelist (the gate's own state, which no attempt sees), named by a
// digest of those, and read back by the next check of the same base.
// Only the base's own listing is kept (trusted code, as the Go build
// cache's fill), never a candidate's. pytest's is kept too, named by what
// decides it besides the tree: the interpreter and what it imports from
// outside the tree (PytestListKey).

// The base's listing of a pytest suite, kept between checks like go's
// (above). pytest's collection imports the test files and every
// conftest.py, runs the plugins the interpreter's distributions register,
// and asks each mark's condition (pytestSkips): seconds of every check of
// a large suite, and twice. What decides its answer besides the base tree
// is the interpreter and what it imports from outside the tree, so the
// key digests, besides the base commit's tree, the suite's path and
// pythonpath, the attempts' environment and flakegate's version, what a
// probe run in the same sandbox, with the same environment, says of the
// interpreter (PytestFingerprint): its path and version, pytest's
// version, every installed distribution outside the tree (name, version,
// where), and each sys.path folder outside the tree (its entries, their
// sizes and times). A change to any of them (a pip install, an upgrade,
// a plugin added, a module dropped into site-packages) names another
// listing, and the suite is listed again. A probe that fails keeps
// nothing.

// listFile is a kept listing.
type listFile struct {
	Tests []struct{ Pkg, File, Name string }
	// PkgTests and Rapid are List's pkgTests and rapid.
	PkgTests map[string][]string
	Rapid    map[string]bool
	// NotRun is List's notRun: by kind, the count and the first few.
	NotRun map[string]struct {
		N    int
		Some []string
	} `json:",omitempty"`
	// Python, Hypothesis, Unnamed, UnnamedSome, Skips and SkipPlan are
	// List's (a pytest listing).
	Python      string            `json:",omitempty"`
	Hypothesis  bool              `json:",omitempty"`
	Unnamed     int               `json:",omitempty"`
	UnnamedSome []string          `json:",omitempty"`
	Skips       map[string]string `json:",omitempty"`
	SkipPlan    string            `json:",omitempty"`
}

// ListMaxAge bounds how long an unused kept listing stays.
const ListMaxAge = 14 * 24 * time.Hour

// ReadList reads a kept listing; false when there is none or it
// cannot be read as one (it is listed again).
func ReadList(file string) (*List, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var f listFile
	if json.Unmarshal(b, &f) != nil || f.PkgTests == nil {
		return nil, false
	}
	list := &List{PkgTests: f.PkgTests, Rapid: f.Rapid, Python: f.Python, Hypothesis: f.Hypothesis,
		Unnamed: f.Unnamed, UnnamedSome: f.UnnamedSome, Skips: f.Skips, SkipPlan: f.SkipPlan}
	for kind, k := range f.NotRun {
		if list.NotRun == nil {
			list.NotRun = NotRunSet{}
		}
		list.NotRun[kind] = &NotRunKind{N: k.N, Some: k.Some}
	}
	if list.Rapid == nil {
		list.Rapid = map[string]bool{}
	}
	for _, t := range f.Tests {
		list.Tests = append(list.Tests, Test{Pkg: t.Pkg, File: t.File, Name: t.Name})
	}
	return list, true
}

// WriteList keeps list in file, and removes the listings unused for
// ListMaxAge. Best effort: a listing that cannot be kept is made
// again by the next check.
func WriteList(file string, list *List) {
	f := listFile{PkgTests: list.PkgTests, Rapid: list.Rapid, Python: list.Python, Hypothesis: list.Hypothesis,
		Unnamed: list.Unnamed, UnnamedSome: list.UnnamedSome, Skips: list.Skips, SkipPlan: list.SkipPlan}
	if f.PkgTests == nil {
		f.PkgTests = map[string][]string{}
	}
	for _, t := range list.Tests {
		f.Tests = append(f.Tests, struct{ Pkg, File, Name string }{t.Pkg, t.File, t.Name})
	}
	for kind, k := range list.NotRun {
		if f.NotRun == nil {
			f.NotRun = map[string]struct {
				N    int
				Some []string
			}{}
		}
		f.NotRun[kind] = struct {
			N    int
			Some []string
		}{k.N, k.Some}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	dir := filepath.Dir(file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	_ = atomicfile.WriteFile(file, b, 0o600)
	removeUnused(dir)
}

// removeUnused removes the kept files in dir unused for ListMaxAge (a
// read touches what it uses).
func removeUnused(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > ListMaxAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// PytestFingerprint prints, as one JSON object, what decides a pytest
// listing besides the tree (the working directory): the interpreter and
// its version, pytest's version, the distributions installed outside the
// tree, and each sys.path folder outside the tree with its entries' names,
// sizes and times (bytecode caches left out: Python writes them itself).
const PytestFingerprint = `import json, os, sys
tree = os.path.realpath(os.getcwd())


def outside(p):
    p = os.path.realpath(p or ".")
    return p != tree and not p.startswith(tree + os.sep)


try:
    import importlib.metadata as md
    dists = sorted({"%s==%s@%s" % (d.metadata["Name"], d.version, getattr(d, "_path", "")) for d in md.distributions() if outside(str(getattr(d, "_path", "")))})
except Exception as e:
    dists = ["error: %r" % (e,)]
try:
    import pytest
    pv = pytest.__version__
except Exception as e:
    pv = "error: %r" % (e,)
paths = []
for entry in sys.path:
    if not outside(entry):
        continue
    try:
        ents = []
        for x in sorted(os.scandir(entry), key=lambda x: x.name):
            if x.name != "__pycache__":
                st = x.stat(follow_symlinks=False)
                ents.append([x.name, st.st_size, st.st_mtime_ns])
    except OSError as e:
        ents = "error: %r" % (e,)
    paths.append([entry, ents])
print(json.dumps({"python": sys.executable, "version": sys.version, "pytest": pv, "dists": dists, "paths": paths}, sort_keys=True))
`

// ListPath is the file of the kept listing named key under common (the
// repository's git common dir).
func ListPath(common, key string) string {
	return filepath.Join(common, "flakegate", "suitelist", key+".json")
}

// GoListKey names the base's listing of go suite s at base, listed with
// the attempts' environment env: "" when it is not kept (not a go suite,
// or no go on the attempts' PATH).
func GoListKey(s *config.Suite, base string, env []string) string {
	if s.Framework != config.FrameworkGo {
		return ""
	}
	_, tool := gocache.Tool(env)
	if tool == "" {
		return ""
	}
	b, _ := json.Marshal(struct {
		Base, Path, Tool, Version string
		Env                       []string
	}{base, s.Path, tool, flakegate.Version, env})
	return flakegate.SHA256Hex(b)[:32]
}

// PytestListKey names the base's listing of pytest suite s run by python
// (l lists on the base tree, whose git tree is tree; env is the
// attempts' environment): "" when it cannot be named (the probe failed),
// and then it is not kept.
func PytestListKey(ctx context.Context, l *Lister, s *config.Suite, tree, python string, hypothesis bool, env []string) (string, error) {
	argv := PytestArgv(s, python)
	i := slices.Index(argv, "-m")
	argv = append(slices.Clone(argv[:i]), "-c", PytestFingerprint)
	o, out, err := l.Run(ctx, argv)
	if err != nil {
		return "", err
	}
	if o.Result != attempt.Pass || !json.Valid(out) {
		return "", nil
	}
	b, _ := json.Marshal(struct {
		Framework, Tree, Path string
		PythonPath            []string
		Python                string
		Hypothesis            bool
		Version               string
		Env                   []string
		Probe                 json.RawMessage
	}{config.FrameworkPytest, tree, s.Path, s.PythonPath, python, hypothesis, flakegate.Version, env, out})
	return flakegate.SHA256Hex(b)[:32], nil
}

// Touch marks a kept file as used now (a listing, a session): what is
// unused for ListMaxAge is removed.
func Touch(file string) {
	now := time.Now()
	os.Chtimes(file, now, now)
}
