package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/internal/termsafe"
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
	b, err := check.OpenBase(ctx, check.BaseOptions{Dir: root, Base: sha})
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

// keepJSSuites keeps the vitest and jest suites whose listing runs in
// the sandbox as written: a config of those suites alone is committed on
// a commit reachable from nothing (HEAD plus the file, as the trial of
// the properties), and the base's list of each is made in the check's
// own sandbox on it, as a check makes it (check.Site.ListSuites). A suite
// whose framework is not in the tree (node_modules installed by a
// prepare: the listing runs none, and a check reaches no registry), whose
// listing fails or that lists no test is not written, and a note says
// why. With --no-try none is written.
func keepJSSuites(ctx context.Context, ios *IO, root string, suites []initconfig.Suite, noTry bool, notes *[]string) []initconfig.Suite {
	var keep, js []initconfig.Suite
	for _, s := range suites {
		if s.Framework == "vitest" || s.Framework == "jest" {
			js = append(js, s)
		} else {
			keep = append(keep, s)
		}
	}
	if len(js) == 0 {
		return suites
	}
	drop := func(why string) []initconfig.Suite {
		for _, s := range js {
			*notes = append(*notes, "the "+s.Framework+" suite "+s.Path+" is not written: "+why+" (docs/suites.md)")
		}
		return keep
	}
	if noTry {
		return drop("--no-try: init writes a vitest or jest suite only once its listing ran in the sandbox")
	}
	raw, err := initconfig.Render(&initconfig.Plan{Suites: js}, false)
	if err != nil {
		return drop(err.Error())
	}
	site, err := trialSite(ctx, ios, root, raw, "flakegate init: trial of the js suites")
	if err != nil {
		return drop("its listing did not run: " + err.Error())
	}
	defer site.Close()
	counts, busy, err := site.ListSuites(ctx)
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
		}
	}
	return keep
}
