package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/lazyre"
	sitepkg "github.com/flakegate/flakegate/site"
)

// pyCandidate is one Python interpreter init looked at: the path written
// into the config, and the modules it lacks.
type pyCandidate struct {
	Path    string
	Missing []string
	// Err is why it could not be asked (it did not start).
	Err string
}

// hasPytest reports whether it has pytest and Hypothesis.
func (p pyCandidate) hasPytest() bool {
	return p.Err == "" && !slices.Contains(p.Missing, "pytest") && !slices.Contains(p.Missing, "hypothesis")
}

// findSpecScript prints the names among its arguments that the
// interpreter cannot import (importlib.util.find_spec: located, never
// run).
const findSpecScript = `import importlib.util, sys
missing = []
for m in sys.argv[1:]:
    try:
        if importlib.util.find_spec(m) is None:
            missing.append(m)
    except Exception:
        missing.append(m)
print(" ".join(missing))`

// pythonCandidates are the interpreters an attempt could run: python3
// and python in each PATH folder (the attempts' PATH is flakegate's),
// leaving out what lives under $HOME (the
// sandbox hides the home folder: a pyenv or asdf shim there is not what
// an attempt runs) and what resolves to an interpreter already listed.
func pythonCandidates(pathEnv, home string) []string {
	var out []string
	seen := map[string]bool{}
	homeReal := home
	if r, err := filepath.EvalSymlinks(home); err == nil {
		homeReal = r
	}
	underHome := func(p string) bool {
		return home != "" && home != "/" && (strings.HasPrefix(p, home+"/") || strings.HasPrefix(p, homeReal+"/"))
	}
	add := func(p string) {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 || underHome(p) {
			return
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || underHome(real) || seen[real] {
			return
		}
		seen[real] = true
		out = append(out, p)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		add(filepath.Join(dir, "python3"))
		add(filepath.Join(dir, "python"))
	}
	return out
}

// askPython asks each candidate, inside the check's sandbox (pythonSite),
// which of pytest, hypothesis and mods it lacks (30 s each). Only
// top-level names are asked (find_spec of a dotted name imports its
// parent package). An interpreter runs only in the sandbox: PATH may
// name a folder of the checkout (a direnv PATH_add bin, an activated
// .venv inside it), and what an interpreter reads at start (a shim's
// version file, a .pth file of an editable install that puts the tree
// on sys.path) may be the tree's. The sandbox hides the repository, so
// an interpreter of the checkout is not found there. err is why no
// sandbox could be set up to ask them in.
func askPython(ctx context.Context, ios *IO, root string, cands []string, mods []string) ([]pyCandidate, error) {
	want := []string{"pytest", "hypothesis"}
	for _, m := range mods {
		if topModuleRe.MatchString(m) && !slices.Contains(want, m) {
			want = append(want, m)
		}
	}
	site, tree, done, err := pythonSite(ctx, ios, root)
	if err != nil {
		return nil, err
	}
	defer done()
	sb := site.SandboxFor(tree)
	var out []pyCandidate
	for _, p := range cands {
		c := pyCandidate{Path: p}
		o := attempt.Run(ctx, attempt.Command{Argv: append([]string{p, "-I", "-c", findSpecScript}, want...), Dir: tree, Env: site.Env(),
			Sandbox: sb, WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
		if o.Result != attempt.Pass {
			c.Err = site.Redact(strings.TrimSpace(o.Result + " " + o.Reason))
		} else {
			lines := strings.Split(strings.TrimSpace(o.Tail), "\n")
			c.Missing = strings.Fields(lines[len(lines)-1])
		}
		out = append(out, c)
	}
	return out, nil
}

// topModuleRe is a top-level module name.
var topModuleRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pythonSite is the check's sandbox, set up and probed as a check's, to
// ask interpreters in: over HEAD (a commit of the work tree where there
// is none yet), with a config that has no sandbox block, and an empty
// folder to run them in. done closes it and removes the folder.
func pythonSite(ctx context.Context, ios *IO, root string) (site *check.Site, tree string, done func(), err error) {
	b, err := sitepkg.OpenRepo(ctx, root, "")
	if err != nil {
		return nil, "", nil, err
	}
	if b.Resolve(ctx, "HEAD") != nil {
		sha, err := b.Git.CommitWorkTree(ctx, config.DefaultPath, []byte("# flakegate init: the interpreters' sandbox\n"), "flakegate init: the interpreters' sandbox")
		if err != nil {
			return nil, "", nil, fmt.Errorf("cannot make a commit to set the sandbox up on: %v", err)
		}
		b.SHA = sha
	}
	b.ConfigPath = config.DefaultPath
	b.Config = &config.Config{Workers: 1, Sandbox: config.Sandbox{Mode: config.SandboxAuto, Limits: config.DefaultLimits()}}
	site = check.NewSite(b, check.SiteOptions{Env: ios.environ(), NoOverlay: ios.Getenv(sandbox.NoOverlayEnv) == "1"})
	if err := site.Setup(ctx); err != nil {
		site.Close()
		return nil, "", nil, err
	}
	if _, err := site.Probe(ctx); err != nil {
		site.Close()
		return nil, "", nil, err
	}
	tree, err = os.MkdirTemp(b.Common, "init-python-")
	if err != nil {
		site.Close()
		return nil, "", nil, err
	}
	return site, tree, func() { site.Close(); os.RemoveAll(tree) }, nil
}

// choosePython is the candidate with pytest and Hypothesis that lacks
// the fewest of the tests' imports, the first such in PATH order; ok is
// false when none has pytest and Hypothesis.
func choosePython(cands []pyCandidate) (best pyCandidate, ok bool) {
	for _, c := range cands {
		if !c.hasPytest() {
			continue
		}
		if !ok || len(c.Missing) < len(best.Missing) {
			best, ok = c, true
		}
	}
	return best, ok
}

// indexReachable reports whether the Python package index answers a
// TCP connection within 3 s: PIP_INDEX_URL's host, else pypi.org.
func indexReachable(ctx context.Context, indexURL string) bool {
	host := "pypi.org:443"
	if u, err := url.Parse(indexURL); err == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" {
			port := "443"
			if u.Scheme == "http" {
				port = "80"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// packageDirs are the folders the project's tests import its code from
// (initconfig.PythonPackageDirs) that nothing puts on sys.path: those
// holding a module the interpreter lacks (missing), so never one that
// would hide an installed module or the standard library's.
func packageDirs(fsys fs.FS, layout initconfig.PyLayout, missing []string) []string {
	var dirs []string
	if layout.PytestPythonpath != "" {
		return nil // pytest's own pythonpath setting says where the code is
	}
	for m, d := range initconfig.PythonPackageDirs(fsys, layout) {
		if slices.Contains(missing, m) && !slices.Contains(layout.SrcDirs, d) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// suiteLayout is layout with the folders a pytest suite's tests import
// the code from (packageDirs), for a project without Hypothesis
// properties: the interpreter asked is the first one the sandbox sees
// that has pytest.
func suiteLayout(ctx context.Context, ios *IO, root string, fsys fs.FS, layout initconfig.PyLayout) (initconfig.PyLayout, []string) {
	found := initconfig.PythonPackageDirs(fsys, layout)
	if len(found) == 0 || layout.PytestPythonpath != "" {
		return layout, nil
	}
	var mods []string
	for m := range found {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	cands, err := askPython(ctx, ios, root, pythonCandidates(ios.Getenv("PATH"), ios.Getenv("HOME")), mods)
	if err != nil {
		return layout, nil // no sandbox to ask in: init starts no interpreter outside it
	}
	for _, c := range cands {
		if c.Err != "" || slices.Contains(c.Missing, "pytest") {
			continue
		}
		dirs := packageDirs(fsys, layout, c.Missing)
		if len(dirs) == 0 {
			return layout, nil
		}
		layout.SrcDirs = append(layout.SrcDirs, dirs...)
		return layout, []string{"python: the tests import the code from " + strings.Join(dirs, ", ") + ", which " + c.Path +
			" does not find by itself: the suite puts it on sys.path (pythonpath: [" + strings.Join(dirs, ", ") + "])"}
	}
	return layout, nil
}
