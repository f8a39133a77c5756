package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/internal/termsafe"
)

// suiteMeasureLimit bounds one bare run of a suite under --measure.
const suiteMeasureLimit = 30 * time.Minute

// measureSuites times one bare run of each suite (go test -count=1 ./...,
// python -m pytest -q PATH) in the repository root, on this machine
// outside the sandbox, and sets its wall_budget to MeasuredBudget of it.
// A run that fails keeps the default budget, and says so.
func measureSuites(ctx context.Context, report io.Writer, root, python string, pl *initconfig.Plan) {
	for i := range pl.Suites {
		s := &pl.Suites[i]
		argv := append([]string(nil), s.Measure...)
		if s.Framework == "pytest" && python != "" {
			argv[0] = python
		}
		rctx, cancel := context.WithTimeout(ctx, suiteMeasureLimit)
		cmd := exec.CommandContext(rctx, argv[0], argv[1:]...)
		cmd.Dir = root
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		cancel()
		if err != nil {
			s.BudgetNote = "default; the measured bare run did not pass"
			fmt.Fprintf(report, "  fail suite %s (%s): %s\n", termsafe.Line(s.Path), s.Framework, termsafe.Line(err.Error()))
			continue
		}
		s.WallBudget = initconfig.MeasuredBudget(took)
		s.BudgetNote = fmt.Sprintf("measured: one bare run took %.1f s (outside the sandbox); %dx, at least %s", took.Seconds(), initconfig.MeasureFactor, initconfig.MeasureFloor)
		fmt.Fprintf(report, "  ok   suite %s (%s): %.1f s\n", termsafe.Line(s.Path), s.Framework, took.Seconds())
	}
}

// initSuites are the suites init writes: a pytest suite only when the
// pytest properties need no prepare (a suite is listed and its new tests
// run with the sandbox's own interpreter, without the prepare).
func initSuites(pl *initconfig.Plan, suites []initconfig.Suite, notes *[]string) []initconfig.Suite {
	prepared, env := pl.PrepareTop != nil, ""
	for _, e := range pl.Entries {
		if e.Test.Framework != discover.PytestHypothesis {
			continue
		}
		prepared = prepared || e.Prepare != nil
		if len(e.Run) > 1 && e.Run[0] == "env" && env == "" {
			env = e.Run[1] // e.g. PYTHONPATH=src: a src layout the project's pytest settings do not name
		}
	}
	var out []initconfig.Suite
	for _, s := range suites {
		if s.Framework == "pytest" && prepared {
			*notes = append(*notes, "the pytest suite "+s.Path+" is not written: its tests need the prepare, which a suite's listing does not run; add it by hand if the system interpreter runs them (docs/suites.md)")
			continue
		}
		if s.Framework == "pytest" && env != "" {
			*notes = append(*notes, "the pytest suite "+s.Path+" is not written: its tests need "+env+", which a suite's run does not set; name the folder in pytest's own pythonpath setting (pytest.ini or pyproject.toml) and run flakegate init again (docs/suites.md)")
			continue
		}
		out = append(out, s)
	}
	return out
}
