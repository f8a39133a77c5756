package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/site"
)

// suiteMeasureLimit bounds one bare run of a suite under --measure.
const suiteMeasureLimit = 30 * time.Minute

// measureSuites times one bare run of each suite (go test -count=1 ./...,
// python -m pytest -q PATH) on the tree as it would be committed with
// the suites' config, in the check's own sandbox and base worktree (the
// Go build cache filled from it first, as a check's is), and sets its
// wall_budget to MeasuredBudget of it. A suite is the tree's code, which
// init runs only in the sandbox: without one, no suite is timed and each
// keeps the default budget. A run that fails keeps the default budget,
// and says so.
func measureSuites(ctx context.Context, ios *IO, report io.Writer, root, python string, pl *initconfig.Plan) {
	notMeasured := func(why string) {
		for i := range pl.Suites {
			s := &pl.Suites[i]
			s.BudgetNote = "default; not measured: " + why
			fmt.Fprintf(report, "  skip suite %s (%s): not measured: %s\n", termsafe.Line(s.Path), s.Framework, termsafe.Line(why))
		}
	}
	raw, err := initconfig.Render(&initconfig.Plan{Suites: pl.Suites}, false)
	if err != nil {
		notMeasured(err.Error())
		return
	}
	site, err := trialSite(ctx, ios, root, raw, "flakegate init: the suites' bare runs")
	if err != nil {
		notMeasured(err.Error() + " (init runs a suite only in the sandbox)")
		return
	}
	defer site.Close()
	var argvs [][]string
	for _, s := range pl.Suites {
		argv := append([]string(nil), s.Measure...)
		if i := slices.Index(argv, "-m"); s.Framework == "pytest" && i > 0 {
			argv[i-1] = cmp.Or(python, "python3") // the interpreter's slot, after an env PYTHONPATH=... for a src/ layout
		}
		argvs = append(argvs, argv)
	}
	outs, busy, err := site.RunOnBase(ctx, "init --measure", argvs, suiteMeasureLimit)
	switch {
	case err != nil:
		notMeasured(err.Error())
		return
	case busy != "":
		notMeasured(busy)
		return
	}
	for i, o := range outs {
		s := &pl.Suites[i]
		if o.Result != attempt.Pass {
			s.BudgetNote = "default; the measured bare run did not pass"
			why := strings.TrimSpace(o.Result + " " + o.Reason)
			if tail := strings.TrimSpace(o.Tail); tail != "" {
				why += ": " + tail[strings.LastIndexByte(tail, '\n')+1:] // its output's last line
			}
			fmt.Fprintf(report, "  fail suite %s (%s): %s\n", termsafe.Line(s.Path), s.Framework, termsafe.Line(why))
			continue
		}
		s.WallBudget = initconfig.MeasuredBudget(o.Wall)
		s.BudgetNote = fmt.Sprintf("measured: one bare run took %.1f s in the sandbox; %dx, at least %s", o.Wall.Seconds(), initconfig.MeasureFactor, initconfig.MeasureFloor)
		fmt.Fprintf(report, "  ok   suite %s (%s): %.1f s\n", termsafe.Line(s.Path), s.Framework, o.Wall.Seconds())
	}
}

// trialSite is the check's sandbox over a commit of the work tree as it
// would be committed with the config raw (HEAD plus the file, reachable
// from nothing), set up and probed as a check sets it up. The caller
// closes it.
func trialSite(ctx context.Context, ios *IO, root string, raw []byte, message string) (*check.Site, error) {
	sha, err := (&git.Client{Dir: root}).CommitWorkTree(ctx, config.DefaultPath, raw, message)
	if err != nil {
		return nil, fmt.Errorf("cannot make the trial commit: %v", err)
	}
	b, err := site.OpenBase(ctx, site.BaseOptions{Dir: root, Base: sha})
	if err != nil {
		return nil, err
	}
	site := check.NewSite(b, check.SiteOptions{Env: ios.environ(), NoOverlay: ios.Getenv(sandbox.NoOverlayEnv) == "1"})
	if err := site.Setup(ctx); err != nil {
		site.Close()
		return nil, fmt.Errorf("no sandbox: %v", err)
	}
	if _, err := site.Probe(ctx); err != nil {
		site.Close()
		return nil, fmt.Errorf("no sandbox: %v", err)
	}
	return site, nil
}

// initSuites are the suites init writes: a pytest suite only when the
// pytest properties need no prepare (a suite is listed and its new tests
// run with the sandbox's own interpreter, without the prepare), with the
// src/ layout's folders as its pythonpath (layout: the project's Python
// layout).
func initSuites(pl *initconfig.Plan, suites []initconfig.Suite, layout initconfig.PyLayout, notes *[]string) []initconfig.Suite {
	prepared, env, props := pl.PrepareTop != nil, "", false
	for _, e := range pl.Entries {
		if e.Test.Framework != discover.PytestHypothesis {
			continue
		}
		props = true
		prepared = prepared || e.Prepare != nil
		if len(e.Run) > 1 && e.Run[0] == "env" && env == "" {
			env = e.Run[1] // e.g. PYTHONPATH=src: a src layout the project's pytest settings do not name
		}
	}
	if !props && len(layout.SrcDirs) > 0 && layout.Build == "" {
		// No property says how the tests import the code: a pure
		// src/ layout's do from src, as a property's run would.
		env = "PYTHONPATH=" + strings.Join(layout.SrcDirs, ":")
	}
	var out []initconfig.Suite
	for _, s := range suites {
		if s.Framework == "pytest" && prepared {
			*notes = append(*notes, "the pytest suite "+s.Path+" is not written: its tests need the prepare, which a suite's listing does not run; add it by hand if the system interpreter runs them (docs/suites.md)")
			continue
		}
		if dirs, ok := strings.CutPrefix(env, "PYTHONPATH="); s.Framework == "pytest" && ok && dirs != "" {
			// A src/ layout: the suite puts the same folders on sys.path.
			s.PythonPath = strings.Split(dirs, ":")
			s.Measure = append([]string{"env", env}, s.Measure...)
		} else if s.Framework == "pytest" && env != "" {
			*notes = append(*notes, "the pytest suite "+s.Path+" is not written: its tests need "+env+", which a suite's run does not set (docs/suites.md)")
			continue
		}
		out = append(out, s)
	}
	return out
}

// nodeModulesInTree reports whether the tree a check will run on holds
// node_modules: a commit of the work tree as it would be committed (git
// add -A: committed, or there and not ignored) has files under it.
func nodeModulesInTree(ctx context.Context, root string) bool {
	if _, err := os.Stat(filepath.Join(root, "package.json")); err != nil {
		return false
	}
	g := &git.Client{Dir: root}
	sha, err := g.CommitWorkTree(ctx, config.DefaultPath, nil, "flakegate init: the tree as a check sees it")
	if err != nil {
		return false
	}
	files, err := g.ListFiles(ctx, sha)
	return err == nil && slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "node_modules/") })
}

// nodeOptions adds to bopts what a JavaScript project's prepare depends
// on: whether the tree holds node_modules, and which programs are on the
// attempts' PATH.
func nodeOptions(ctx context.Context, ios *IO, root string, bopts initconfig.Options) initconfig.Options {
	bopts.NodeModulesInTree = nodeModulesInTree(ctx, root)
	env := ios.environ()
	bopts.HasProgram = func(name string) bool { _, err := attempt.LookPath(name, env); return err == nil }
	return bopts
}

// planSuites are the suites init writes (initSuites, then keepJSSuites):
// a vitest or jest suite of a project whose node_modules a prepare
// installs (a lock file, node_modules ignored) gets that prepare at the
// top level, where a suite's listing, new tests and triples find it.
func planSuites(ctx context.Context, opts *InitOptions, root string, fsys fs.FS, pl *initconfig.Plan, bopts initconfig.Options,
	suites []initconfig.Suite, notes *[]string) []initconfig.Suite {
	layout := initconfig.PythonLayout(fsys)
	if bopts.Layout != nil {
		layout = *bopts.Layout
	}
	prep, problem := initconfig.NodePrepare(fsys, bopts)
	if prep != nil && pl.PrepareTop == nil && len(pl.Entries) > 0 {
		// A top-level prepare would run for every property without
		// its own: only when none is left without one.
		for _, e := range pl.Entries {
			if e.Prepare == nil {
				problem = "its listing and tests need node_modules, which a top-level prepare (" + strings.Join(prep.Run, " ") +
					") would install for every property too; add the suite by hand, with that prepare at the top (docs/suites.md)"
			}
		}
	}
	out, prepared := keepJSSuites(ctx, opts.IO, root, initSuites(pl, suites, layout, notes), jsTrial{noTry: opts.NoTry, prepare: prep, problem: problem,
		inTree: bopts.NodeModulesInTree}, notes)
	if prepared && pl.PrepareTop == nil {
		pl.PrepareTop = prep
	}
	return out
}

// jsTrial is how init tries a vitest or jest suite's listing: not at
// all (--no-try), over the prepare that installs node_modules (nil:
// none), unless problem says why it cannot run here; inTree says the tree
// holds node_modules itself.
type jsTrial struct {
	noTry   bool
	prepare *initconfig.Prepare
	problem string
	inTree  bool
}

// keepJSSuites keeps the vitest and jest suites whose listing runs in
// the sandbox as written: a config of those suites alone (and the
// prepare that installs node_modules, when the tree does not hold it) is
// committed on a commit reachable from nothing (HEAD plus the file, as
// the trial of the properties), and the base's list of each is made in
// the check's own sandbox on it, over the prepare's layer, as a check
// makes it (check.Site.ListSuites). A suite whose framework cannot be
// installed (no node_modules and no lock file), whose listing fails or
// that lists no test is not written, and a note says why and what to
// do. With --no-try none is written. prepared says the suites kept need
// the trial's prepare.
func keepJSSuites(ctx context.Context, ios *IO, root string, suites []initconfig.Suite, trial jsTrial, notes *[]string) (kept []initconfig.Suite, prepared bool) {
	var keep, js []initconfig.Suite
	for _, s := range suites {
		if s.Framework == "vitest" || s.Framework == "jest" {
			js = append(js, s)
		} else {
			keep = append(keep, s)
		}
	}
	if len(js) == 0 {
		return suites, false
	}
	drop := func(why string) ([]initconfig.Suite, bool) {
		for _, s := range js {
			*notes = append(*notes, "the "+s.Framework+" suite "+s.Path+" is not written: "+why+" (docs/suites.md)")
		}
		return keep, false
	}
	switch {
	case trial.noTry:
		return drop("--no-try: init writes a vitest or jest suite only once its listing ran in the sandbox")
	case !trial.inTree && trial.prepare == nil:
		return drop("node_modules is not in the tree and no lock file says what to install; fix: write one (npm install --package-lock-only, " +
			"or yarn install / pnpm install), commit it, and run flakegate init again: init then writes the prepare that installs node_modules from it")
	case trial.problem != "":
		return drop(trial.problem)
	}
	raw, err := initconfig.Render(&initconfig.Plan{Suites: js, PrepareTop: trial.prepare}, false)
	if err != nil {
		return drop(err.Error())
	}
	site, err := trialSite(ctx, ios, root, raw, "flakegate init: trial of the js suites")
	if err != nil {
		return drop("its listing did not run: " + err.Error())
	}
	defer site.Close()
	if trial.prepare != nil {
		fmt.Fprintf(ios.ErrOut, "trying the %s suite's listing in the sandbox, over the prepare (%s, with the network) ...\n", js[0].Framework, strings.Join(trial.prepare.Run, " "))
	}
	counts, busy, err := site.ListSuites(ctx)
	for _, n := range site.Notes("prepare ") {
		fmt.Fprintf(ios.ErrOut, "  %s\n", termsafe.Line(n))
	}
	if err == nil && busy != "" {
		err = errors.New(busy)
	}
	if err != nil {
		return drop("its listing did not run: " + err.Error())
	}
	for i, c := range counts {
		s := js[i]
		switch {
		case c.Err != nil:
			*notes = append(*notes, "the "+s.Framework+" suite "+s.Path+" is not written: its listing does not run in the sandbox as written: "+c.Err.Error()+" (docs/suites.md)")
		case c.Tests == 0:
			*notes = append(*notes, "the "+s.Framework+" suite "+s.Path+" is not written: the sandbox's listing names no test")
		default:
			*notes = append(*notes, fmt.Sprintf("the %s suite %s lists %d tests in the sandbox: written", s.Framework, s.Path, c.Tests))
			keep = append(keep, s)
			prepared = trial.prepare != nil
		}
	}
	return keep, prepared
}
