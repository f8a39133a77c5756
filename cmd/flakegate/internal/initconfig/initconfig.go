// Package initconfig turns the property tests discover found into a
// commented flakegate.yaml: per test its path and name, three fixed seeds
// and two drawn ones, the framework's run template, a wall budget and a
// prepare guess per ecosystem. The file is checked with config.Load
// before anyone writes it.
package initconfig

import (
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/lazyre"
)

// Defaults of a generated file.
const (
	// DefaultWallBudget is every entry's budget without --measure.
	DefaultWallBudget = 5 * time.Minute
	// MeasureFloor is the smallest measured budget: a start-up that was
	// quick once may be slow on a loaded CI runner.
	MeasureFloor = 30 * time.Second
	// MeasureFactor multiplies one measured bare run.
	MeasureFactor = 5
	// RandomSeeds is each entry's random_seeds.
	RandomSeeds = 2
)

// Seeds are each entry's fixed seeds.
var Seeds = []int{1, 2, 3}

// Entry is one property of the generated file.
type Entry struct {
	Test discover.Test
	Run  []string
	// PassMarker is the regexp an exit 0 must print ("" for none: Go and
	// pytest have their own evidence).
	PassMarker string
	// FailMarker is the regexp an exit 1 must print: written wherever
	// a pass marker is.
	FailMarker string
	// WallBudget and how it was chosen ("default" or "measured: ...").
	WallBudget time.Duration
	BudgetNote string
	Prepare    *Prepare
}

// Prepare is an ecosystem's prepare guess.
type Prepare struct {
	Run     []string
	Network bool
	// Allow are the only destinations (host:port) its network reaches.
	Allow  []string
	Budget time.Duration
	// Why is the comment written above it.
	Why string
}

// Plan is what init writes.
type Plan struct {
	Entries []Entry
	// PrepareTop is the prepare shared by every entry (written at the top
	// level); nil when entries differ, then each carries its own.
	PrepareTop *Prepare
	// Skipped are tests a config cannot name (a name with a control
	// character, a leading '-', or too long; a path starting with '-').
	Skipped []discover.Skipped
	// Problems are what keeps an entry from running here as written, one
	// line per cause with its fix (a build that cannot work offline).
	Problems []string
	// Python is what pytest entries import: the layout read, the
	// interpreter and the modules the tests import.
	Python PythonPlan
	// Suites are the suites: entries (Suites), written beside the
	// properties; a trial leaves them out.
	Suites []Suite
	// nodeInTree: the tree holds node_modules (Options.NodeModulesInTree).
	nodeInTree bool
}

// PythonPlan is how pytest entries run.
type PythonPlan struct {
	Layout  PyLayout
	Python  string
	Imports []string
}

// unnameable says why a config cannot hold t, "" when it can.
func unnameable(t discover.Test) string {
	if _, err := config.CleanRepoPath(t.Path); err != nil {
		return err.Error()
	}
	switch {
	case t.Name == "" || strings.TrimSpace(t.Name) != t.Name:
		return "its name is empty or starts or ends with a space"
	case strings.HasPrefix(t.Name, "-"):
		return "its name starts with '-'"
	case len(t.Name) > config.MaxNameLength:
		return fmt.Sprintf("its name is longer than %d bytes", config.MaxNameLength)
	case strings.ContainsFunc(t.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "its name holds a control character"
	}
	return ""
}

// Options are what Build needs to know of the machine.
type Options struct {
	// Python is the interpreter pytest tests run with: the one the
	// sandbox sees that has pytest, Hypothesis and the tests' imports
	// (the CLI chooses it); "" is python3.
	Python string
	// BuildRequiresMet is true when Python imports every build
	// requirement of the project (PyLayout.BuildRequires): an extension
	// can then be built offline, without build isolation.
	BuildRequiresMet bool
	// IndexReachable is true when the Python package index answered: a
	// prepare may then install with the network.
	IndexReachable bool
	// NodeModulesInTree is true when the tree a check runs on holds
	// node_modules (committed, not ignored): no prepare installs it.
	NodeModulesInTree bool
	// HasProgram reports whether a program is on the attempts' PATH (nil:
	// assume it is); a prepare that needs a missing one is a problem.
	HasProgram func(name string) bool
	// Layout, when set, is the Python layout to use (PythonLayout, with
	// the folders the CLI found the tests import the code from).
	Layout *PyLayout
}

// Build makes a plan for the tests found in fsys (the repository root).
func Build(fsys fs.FS, tests []discover.Test, opts Options) *Plan {
	pl := &Plan{nodeInTree: opts.NodeModulesInTree}
	for _, t := range tests {
		if why := unnameable(t); why != "" {
			pl.Skipped = append(pl.Skipped, discover.Skipped{Path: t.Path, Reason: "test " + strconv.Quote(t.Name) + ": " + why + "; add it by hand"})
			continue
		}
		e := Entry{Test: t, WallBudget: DefaultWallBudget, BudgetNote: "default; flakegate init --measure sets 5x one sandboxed attempt"}
		switch t.Framework {
		case discover.GoRapid:
			pkg := "./" + t.Dir
			if t.Dir == "." {
				pkg = "."
			}
			e.Run = []string{"go", "test", "-count=1", "-run", "^{name}$", pkg, "-rapid.seed={seed}", "-rapid.nofailfile"}
		case discover.PytestHypothesis:
			e.Run, e.Prepare = pytestRun(fsys, tests, opts, pl)
		case discover.VitestFastCheck:
			e.Run = []string{"env", discover.SeedEnv + "={seed}", "node_modules/.bin/vitest", "run", "{path}", "-t", nameRegexp(t.Name)}
			e.Prepare = pl.nodePrepare(fsys, opts)
		case discover.JestFastCheck:
			e.Run = []string{"env", discover.SeedEnv + "={seed}", "node_modules/.bin/jest", "--ci", "{path}", "-t", nameRegexp(t.Name)}
			e.Prepare = pl.nodePrepare(fsys, opts)
		default:
			continue
		}
		pl.Entries = append(pl.Entries, e)
	}
	// One prepare for all when every entry has the same one.
	if len(pl.Entries) > 0 && pl.Entries[0].Prepare != nil {
		same := true
		for _, e := range pl.Entries[1:] {
			if e.Prepare == nil || strings.Join(e.Prepare.Run, "\x00") != strings.Join(pl.Entries[0].Prepare.Run, "\x00") {
				same = false
			}
		}
		if same {
			pl.PrepareTop = pl.Entries[0].Prepare
		}
	}
	return pl
}

// nameRegexp is the -t pattern that selects exactly the test named name:
// "^{name}$" when the name holds no regexp metacharacter, else the name
// quoted in place.
func nameRegexp(name string) string {
	if regexp.QuoteMeta(name) == name {
		return "^{name}$"
	}
	return "^" + regexp.QuoteMeta(name) + "$"
}

// pytestRun is the run template of a pytest test, and its prepare (nil
// unless something must be built). The tests run from the tree with the
// chosen interpreter (python -m pytest puts the tree's root on sys.path);
// a src/ layout gets PYTHONPATH=src unless the project's pytest settings
// set pythonpath. A prepare is written only when an extension module
// must be built, and only one that can work here: offline without build
// isolation when the build requirements are installed, else with the
// network when the package index answers; otherwise none, and a problem.
func pytestRun(fsys fs.FS, tests []discover.Test, opts Options, pl *Plan) ([]string, *Prepare) {
	py := opts.Python
	if py == "" {
		py = "python3"
	}
	if pl.Python.Python == "" {
		l := PythonLayout(fsys)
		if opts.Layout != nil {
			l = *opts.Layout
		}
		pl.Python = PythonPlan{Layout: l, Python: py, Imports: PythonImports(fsys, tests, l)}
	}
	l := pl.Python.Layout
	var run []string
	if len(l.SrcDirs) > 0 {
		run = append(run, "env", "PYTHONPATH="+strings.Join(l.SrcDirs, ":"))
	}
	run = append(run, py, "-m", "pytest")
	var prep *Prepare
	switch {
	case l.Build == "":
	case opts.BuildRequiresMet:
		_, err := fs.Stat(fsys, "setup.py")
		if err == nil {
			prep = &Prepare{Run: []string{py, "setup.py", "build_ext", "--inplace"}, Budget: 10 * time.Minute,
				Why: l.Build + ": they are built in place, offline, with the build requirements " + py + " has (" + strings.Join(l.BuildRequires, ", ") + ");\n" +
					"# the attempts import them from the tree."}
		} else {
			prep = &Prepare{Run: []string{"sh", "-c", py + " -m venv --system-site-packages .venv && .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e ."},
				Budget: 10 * time.Minute,
				Why: l.Build + ": the package is built offline without build isolation (its build requirements are installed) into .venv in the tree;\n" +
					"# attempts then run .venv/bin/python, read-only and offline."}
			run = append(run[:len(run)-3], ".venv/bin/python", "-m", "pytest")
		}
	case opts.IndexReachable:
		prep = &Prepare{Run: []string{"sh", "-c", py + " -m venv --system-site-packages .venv && .venv/bin/python -m pip install -q -e ."},
			Network: true, Budget: 10 * time.Minute,
			Why: l.Build + ": the package is installed (pip install -e ., from the package index, which answered) into .venv in the tree, once per tree;\n" +
				"# attempts then run .venv/bin/python, read-only and offline. $HOME is private, so --user would be lost."}
		run = append(run[:len(run)-3], ".venv/bin/python", "-m", "pytest")
	default:
		pl.addProblem(l.Build + ", but " + py + " lacks its build requirements (" + strings.Join(l.BuildRequires, ", ") +
			") and the package index is not reachable: install them for " + py + " (on Debian: apt-get install python3-setuptools cython3 ...), then run flakegate init again")
	}
	return append(run, "-q", "-p", "no:cacheprovider", "{path}::{name}", "--hypothesis-seed={seed}"), prep
}

func (pl *Plan) addProblem(p string) {
	if !slices.Contains(pl.Problems, p) {
		pl.Problems = append(pl.Problems, p)
	}
}

// nodePrepare is NodePrepare, its problem added to the plan's.
func (pl *Plan) nodePrepare(fsys fs.FS, opts Options) *Prepare {
	p, problem := NodePrepare(fsys, opts)
	if problem != "" {
		pl.addProblem(problem)
	}
	return p
}

// NodePrepare installs node_modules from the lock file there is, when the
// tree does not hold it (opts.NodeModulesInTree): npm ci for
// package-lock.json, else yarn or pnpm with a frozen lock file, scripts
// off, with the network, which reaches only the registries the lock file
// and the project's .npmrc name (NodeRegistries). nil when the tree holds
// node_modules or there is no lock file. problem says what keeps it from
// running here (the package manager is not on PATH), with the fix.
func NodePrepare(fsys fs.FS, opts Options) (p *Prepare, problem string) {
	if opts.NodeModulesInTree {
		return nil, ""
	}
	for _, c := range nodeLocks {
		if fi, err := fs.Stat(fsys, c.lock); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if opts.HasProgram != nil && !opts.HasProgram(c.run[0]) {
			problem = c.lock + " says " + c.run[0] + " installs node_modules, and " + c.run[0] + " is not on PATH here: install it (" + c.install +
				"), then run flakegate init again"
		}
		return &Prepare{
			Run:     c.run,
			Network: true,
			Allow:   NodeRegistries(fsys, c.lock, c.registry),
			Budget:  10 * time.Minute,
			Why: c.lock + " is there and node_modules is not in the tree (git ignores it), so " + c.run[0] + " installs it once per tree,\n" +
				"# from the lock file, scripts off; its network reaches only the registries the lock file and .npmrc name.\n" +
				"# The suites' listing, their new tests and every attempt see node_modules read-only and stay offline.",
		}, problem
	}
	return nil, ""
}

// nodeLocks are the lock files a prepare installs from, in the order
// tried: the command, its default registry, and how to install the
// package manager.
var nodeLocks = []struct {
	lock, registry, install string
	run                     []string
}{
	{"package-lock.json", "registry.npmjs.org:443", "it comes with node", []string{"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"}},
	{"yarn.lock", "registry.yarnpkg.com:443", "npm install -g yarn, or corepack enable yarn", []string{"yarn", "install", "--frozen-lockfile", "--ignore-scripts"}},
	{"pnpm-lock.yaml", "registry.npmjs.org:443", "npm install -g pnpm, or corepack enable pnpm", []string{"pnpm", "install", "--frozen-lockfile", "--ignore-scripts"}},
}

// nodeURLRe is an http(s) URL in a lock file or an .npmrc.
var nodeURLRe = lazyre.New(`https?://[A-Za-z0-9.-]+(:[0-9]+)?`)

// NodeRegistries are the destinations (host:port) a prepare that
// installs from lock needs: the hosts of the URLs the lock file names
// (npm's "resolved", yarn's "resolved", pnpm's "tarball") and of the
// registries the project's .npmrc sets; the package manager's default
// registry, def, unless .npmrc sets one.
func NodeRegistries(fsys fs.FS, lock, def string) []string {
	var out []string
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		hp := net.JoinHostPort(strings.ToLower(u.Hostname()), port)
		if !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	setsRegistry := false
	if b, err := fs.ReadFile(fsys, ".npmrc"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && (strings.TrimSpace(k) == "registry" || strings.HasSuffix(strings.TrimSpace(k), ":registry")) {
				add(strings.TrimSpace(v))
				setsRegistry = setsRegistry || strings.TrimSpace(k) == "registry"
			}
		}
	}
	if b, err := fs.ReadFile(fsys, lock); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "resolved") || strings.Contains(l, "tarball") {
				if m := nodeURLRe.Compiled().FindString(l); m != "" {
					add(m)
				}
			}
		}
	}
	if !setsRegistry {
		add("https://" + def)
	}
	sort.Strings(out)
	return out
}

// Render writes the plan as a commented flakegate.yaml and checks it with
// config.Load (the file a check will read).
func Render(pl *Plan, hook bool) ([]byte, error) { return render(pl, hook, false) }

// RenderTrial is the file init tries before it writes Render's: only the
// entries at indexes, each with seed 1 alone, no drawn seed, no retry and
// no flake probe, so that a check of it runs one candidate attempt (and
// its base replay) per entry.
func RenderTrial(pl *Plan, hook bool, indexes []int) ([]byte, error) {
	trial := *pl
	trial.Entries, trial.Suites = nil, nil
	for _, i := range indexes {
		trial.Entries = append(trial.Entries, pl.Entries[i])
	}
	return render(&trial, hook, true)
}

// RenderSuiteTrial is the file init measures the suites with: the suites
// alone, each with its first order seed, no retry and no flake probe, so
// that a check of it runs every listed test once on each side.
func RenderSuiteTrial(pl *Plan) ([]byte, error) {
	trial := *pl
	trial.Entries = nil
	return render(&trial, false, true)
}

func render(pl *Plan, hook, trial bool) ([]byte, error) {
	seedList, randomSeeds, retryCap := Seeds, RandomSeeds, 2
	if trial {
		seedList, randomSeeds, retryCap = Seeds[:1], 0, 0
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# flakegate.yaml, written by `flakegate init`. Commit it on the base branch: a check\n")
	w("# reads it from the base revision, never from the candidate. Every key is described in\n")
	w("# https://github.com/flakegate/flakegate/blob/main/docs/configuration.md\n")
	w("version: 1\n")
	w("retry_cap: %d            # retries after a failed first run; a pass among them is SCHEDULER\n", retryCap)
	if trial {
		// The trial measures every test: impact (on by default) would
		// run none of a commit of the work tree that changes no code.
		w("flake_probe_runs: 0\nimpact: false\n")
	}
	w("workers: 1              # triples run at once\n")
	w("freeze:\n  expires_after_runs: 20\n")
	w("# A flake this base was never seen failing (flake_origin new or unknown) may be the\n")
	w("# patch's own: the check exits 1. When it fires, look at the attempts and the base probe;\n")
	w("# if the flake is old, not the patch's, run `flakegate freeze grant --allow-new-flake`.\n")
	w("reject_new_flakes: true\n")
	if pl.PrepareTop != nil {
		writePrepare(&b, "", pl.PrepareTop)
	}
	if len(pl.Entries) > 0 {
		w("properties:\n")
	}
	framework := ""
	for _, e := range pl.Entries {
		if e.Test.Framework != framework {
			framework = e.Test.Framework
			w("\n  # %s\n", framework)
			if e.Prepare == nil && pl.nodeInTree && (framework == discover.VitestFastCheck || framework == discover.JestFastCheck) {
				w("  # No prepare: node_modules is in the tree (committed); the attempts see it read-only.\n")
			} else if e.Prepare == nil {
				w("  # %s\n", noPrepareNote[framework])
			}
			if (framework == discover.VitestFastCheck || framework == discover.JestFastCheck) && !hook {
				w("  # WARNING: no file here reads %s; until a setup file passes it to\n", discover.SeedEnv)
				w("  # fc.configureGlobal (docs/writing-properties.md), every seed draws random inputs.\n")
			}
		}
		w("  - path: %s\n", yamlString(e.Test.Path))
		w("    name: %s\n", yamlString(e.Test.Name))
		seeds := make([]string, len(seedList))
		for i, s := range seedList {
			seeds[i] = strconv.Itoa(s)
		}
		w("    seeds: [%s]\n", strings.Join(seeds, ", "))
		w("    random_seeds: %d         # seeds drawn per candidate, besides the fixed ones\n", randomSeeds)
		w("    run: %s\n", yamlList(e.Run))
		if e.PassMarker != "" {
			w("    pass_marker: %s   # the runner's own summary: exactly one test ran and passed\n", yamlString(e.PassMarker))
		}
		if e.FailMarker != "" {
			w("    fail_marker: %s   # and for a failure: exactly one test ran and failed\n", yamlString(e.FailMarker))
		}
		w("    wall_budget: %s         # %s\n", formatDuration(e.WallBudget), e.BudgetNote)
		if pl.PrepareTop == nil && e.Prepare != nil {
			writePrepare(&b, "    ", e.Prepare)
		}
	}
	suiteSeeds := make([]string, len(seedList))
	for i, s := range seedList {
		suiteSeeds[i] = strconv.Itoa(s)
	}
	writeSuites(w, pl.Suites, suiteSeeds)
	out := []byte(b.String())
	if _, err := config.Load(out, config.DefaultPath); err != nil {
		return nil, fmt.Errorf("the generated file does not load: %w", err)
	}
	return out, nil
}

// noPrepareNote says why an ecosystem's entries have no prepare.
var noPrepareNote = map[string]string{
	discover.GoRapid:          "No prepare: every attempt's Go build cache is the host's, warm and read-only.",
	discover.PytestHypothesis: "No prepare: nothing to build (no extension module); the tests import the tree as it is, with the interpreter's own packages.",
	discover.VitestFastCheck:  "No prepare: no package-lock.json, yarn.lock or pnpm-lock.yaml; add one that installs node_modules.",
	discover.JestFastCheck:    "No prepare: no package-lock.json, yarn.lock or pnpm-lock.yaml; add one that installs node_modules.",
}

func writePrepare(b *strings.Builder, indent string, p *Prepare) {
	fmt.Fprintf(b, "%s# %s\n", indent, strings.ReplaceAll(p.Why, "\n# ", "\n"+indent+"# "))
	fmt.Fprintf(b, "%sprepare:\n", indent)
	fmt.Fprintf(b, "%s  run: %s\n", indent, yamlList(p.Run))
	fmt.Fprintf(b, "%s  network: %t\n", indent, p.Network)
	if len(p.Allow) > 0 {
		fmt.Fprintf(b, "%s  allow: %s\n", indent, yamlList(p.Allow))
	}
	fmt.Fprintf(b, "%s  budget: %s\n", indent, formatDuration(p.Budget))
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func yamlString(s string) string {
	return strconv.Quote(s)
}

func yamlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = yamlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// formatDuration writes d as "90s", "5m" or "1m30s".
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// MeasuredBudget is the budget for one bare run that took took: MeasureFactor
// times it, rounded up to 10 s, at least MeasureFloor, at most
// config.MaxWallBudget.
func MeasuredBudget(took time.Duration) time.Duration {
	b := took * MeasureFactor
	b = (b + 10*time.Second - 1) / (10 * time.Second) * (10 * time.Second)
	return min(max(b, MeasureFloor), config.MaxWallBudget)
}
