// The base's listing of a pytest suite, kept between checks like go's
// (suitecache.go). pytest's collection imports the test files and every
// conftest.py, runs the plugins the interpreter's distributions register,
// and asks each mark's condition (pytestSkips): seconds of every check of
// a large suite, and twice. What decides its answer besides the base tree
// is the interpreter and what it imports from outside the tree, so the
// key digests, besides the base commit's tree, the suite's path and
// pythonpath, the attempts' environment and flakegate's version, what a
// probe run in the same sandbox, with the same environment, says of the
// interpreter (pytestFingerprint): its path and version, pytest's
// version, every installed distribution outside the tree (name, version,
// where), and each sys.path folder outside the tree (its entries, their
// sizes and times). A change to any of them (a pip install, an upgrade,
// a plugin added, a module dropped into site-packages) names another
// listing, and the suite is listed again. A probe that fails keeps
// nothing.

package check

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// pytestFingerprint prints, as one JSON object, what decides a pytest
// listing besides the tree (the working directory): the interpreter and
// its version, pytest's version, the distributions installed outside the
// tree, and each sys.path folder outside the tree with its entries' names,
// sizes and times (bytecode caches left out: Python writes them itself).
const pytestFingerprint = `import json, os, sys
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

// basePytestList is listSuite of pytest suite s on the base tree t, read
// from the kept listing when one has the key pytestListKey makes.
func (c *site) basePytestList(ctx context.Context, s *config.Suite, t *tree) (*suiteList, error) {
	l := c.lister(s, t, true)
	python, hypothesis, err := l.pytestProbe(ctx)
	if err != nil {
		return nil, err
	}
	key, err := c.pytestListKey(ctx, l, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return l.collectPytest(ctx, s, python, hypothesis)
	}
	file := c.suiteListPath(key)
	if list, ok := readSuiteList(file); ok && list.python == python && list.hypothesis == hypothesis {
		now := time.Now()
		os.Chtimes(file, now, now) // last used
		list.key = key
		return list, nil
	}
	list, err := l.collectPytest(ctx, s, python, hypothesis)
	if err != nil {
		return nil, err
	}
	writeSuiteList(file, list)
	list.key = key
	return list, nil
}

// pytestListKey names the base's listing of pytest suite s run by python
// (l lists on the base tree): "" when it cannot be named (the tree's hash
// or the probe failed), and then it is not kept.
func (c *site) pytestListKey(ctx context.Context, l *suiteLister, s *config.Suite, python string, hypothesis bool) (string, error) {
	if c.iso == nil {
		return "", nil
	}
	tree, err := c.git.Tree(ctx, c.baseSHA)
	if err != nil {
		return "", nil
	}
	argv := pytestSuiteArgv(s, python)
	i := slices.Index(argv, "-m")
	argv = append(slices.Clone(argv[:i]), "-c", pytestFingerprint)
	o, out, err := l.run(ctx, argv)
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
	}{config.FrameworkPytest, tree, s.Path, s.PythonPath, python, hypothesis, flakegate.Version, c.iso.env, out})
	return flakegate.SHA256Hex(b)[:32], nil
}
