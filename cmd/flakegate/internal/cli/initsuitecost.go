package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/plan"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// suiteTrialLimit is what "cheap" means for the run of the suites init
// measures by default: it ends within this. A longer one is stopped and
// left to the first check to measure (--measure waits suiteMeasureLimit).
const suiteTrialLimit = 2 * time.Minute

// measureSuites runs, by default, one run of the suites as a check runs
// them: a check of the suites alone (initconfig.RenderSuiteTrial: each
// with its first order seed, no retry, no probe) on a commit of the work
// tree with that file, in the sandbox, whose timings the check keeps for
// check --plan (plan.KeepTimings). It is stopped after suiteTrialLimit
// (suiteMeasureLimit with --measure). It says what it measured, or why
// not, on report; nothing it finds is a problem of the config (the
// listing and the runs are the check's to judge).
func measureSuiteTrial(ctx context.Context, opts *InitOptions, report io.Writer, root string, pl *initconfig.Plan) {
	if len(pl.Suites) == 0 || opts.NoTry {
		return
	}
	if opts.DryRun {
		fmt.Fprintln(report, "suites: not measured (--dry-run keeps no timing); the first check measures them")
		return
	}
	raw, err := initconfig.RenderSuiteTrial(pl)
	if err != nil {
		fmt.Fprintf(report, "suites: not measured: %s\n", termsafe.Line(err.Error()))
		return
	}
	limit := suiteTrialLimit
	if opts.Measure {
		limit = suiteMeasureLimit
	}
	fmt.Fprintf(report, "measuring one run of the %s in the sandbox (each test once with order seed %d, as check runs it; stopped after %s) ...\n",
		plural(len(pl.Suites), "suite", fmt.Sprintf("%d suites", len(pl.Suites))), initconfig.Seeds[0], limit)
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	sum, err := trialCheck(rctx, opts.IO, root, raw, "flakegate init: measure the suites", false)
	took := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return
	case rctx.Err() != nil:
		fmt.Fprintf(report, "  suites: not measured: one run took over %s, so init stopped it; the first check measures it (flakegate init --measure waits up to %s)\n", limit, suiteMeasureLimit)
		return
	case err != nil:
		fmt.Fprintf(report, "  suites: not measured: %s\n", termsafe.Line(err.Error()))
		return
	}
	if len(sum.Results) == 0 {
		fmt.Fprintln(report, "  suites: not measured: the run gated no test (the suites list none here)")
		return
	}
	labels := map[flakegate.Label]int{}
	var failing []string
	exclude := map[string][]string{} // suite path -> names, each once
	for _, r := range sum.Results {
		labels[r.Label]++
		if r.Label != flakegate.Pass {
			failing = append(failing, fmt.Sprintf("%s (%s)", r.ID(), r.Label))
			if r.Suite != "" && r.Name != "" && !slices.Contains(exclude[r.Suite], excludePattern(r.Name)) {
				exclude[r.Suite] = append(exclude[r.Suite], excludePattern(r.Name))
			}
		}
	}
	fmt.Fprintf(report, "  measured: %d %s in %.1f s (%s); check --plan estimates from it\n",
		len(sum.Results), plural(len(sum.Results), "test", "tests"), took.Seconds(), strings.Join(labelCounts(labels), ", "))
	if n := len(failing); n > 0 {
		if n > 5 {
			failing = append(failing[:5], fmt.Sprintf("and %d more", n-5))
		}
		// A test that does not pass at HEAD, on both sides, rejects every
		// check: the user decides (fix it, or exclude it).
		fmt.Fprintf(report, "note: %d %s not pass at HEAD in the sandbox, so every check would reject %s: %s; fix %s, or name %s in the suite's exclude: (docs/suites.md)\n",
			n, plural(n, "test does", "tests do"), plural(n, "it", "them"), termsafe.Line(strings.Join(failing, ", ")), plural(n, "it", "them"), plural(n, "it", "them"))
		for _, suite := range slices.Sorted(maps.Keys(exclude)) {
			fmt.Fprintf(report, "  to exclude %s, add this line to the suite of path %q: %s\n", plural(len(exclude[suite]), "it", "them"), suite, termsafe.Line(excludeLine(exclude[suite])))
		}
	}
}

// excludePattern is an exclude: pattern that matches name alone: the
// characters a pattern reads as wildcards (a parametrised pytest id has
// brackets) are escaped.
func excludePattern(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// excludeLine is the YAML line of a suite's exclude key with patterns.
func excludeLine(patterns []string) string {
	q := make([]string, len(patterns))
	for i, p := range patterns {
		b, _ := json.Marshal(p) // a JSON string is a YAML double-quoted scalar
		q[i] = string(b)
	}
	return "exclude: [" + strings.Join(q, ", ") + "]"
}

// trialCheck runs a check of the config raw on a commit of the work tree
// with that file (msg is its message), as candidate and base, with a
// throwaway ledger and output folder: what init tries. The check keeps
// the seconds of its processes for check --plan, not its setup and Go
// cache fill (the trial's trees and build cache are new; a check's are
// kept from the check before), and none with noTimings (init --dry-run).
func trialCheck(ctx context.Context, ios *IO, root string, raw []byte, msg string, noTimings bool) (*flakegate.Summary, error) {
	sha, err := (&git.Client{Dir: root}).CommitWorkTree(ctx, config.DefaultPath, raw, msg)
	if err != nil {
		return nil, fmt.Errorf("cannot make the trial commit: %v", err)
	}
	tmp, err := os.MkdirTemp("", "flakegate-init-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	keep := plan.KeepProcessTimings
	if noTimings {
		keep = plan.KeepNoTimings
	}
	return check.Run(ctx, check.Options{
		Dir: root, Base: sha, Candidate: sha, OutDir: filepath.Join(tmp, "out"), NoReplayCache: true,
		By: "flakegate init", Env: ios.environ(), NoOverlay: ios.Getenv(sandbox.NoOverlayEnv) == "1", Timings: keep, Progress: trialNotes{ios.ErrOut},
		OpenStore: func(ctx context.Context, common string) (flakegate.Store, error) {
			return store.Open(ctx, filepath.Join(tmp, "ledger"), common)
		},
	})
}

// initSuiteCost lists the suites of the config raw as check --plan does,
// on a commit of the work tree with that file, in the check's sandbox,
// and returns the config with their tests added as properties (so that
// PlanCost counts them) and the lines saying what was listed; cfg is nil
// when they could not be listed (lines says why).
func initSuiteCost(ctx context.Context, ios *IO, root string, raw []byte) (cfg *config.Config, lines []string) {
	sha, err := (&git.Client{Dir: root}).CommitWorkTree(ctx, config.DefaultPath, raw, "flakegate init: list the suites")
	if err != nil {
		return nil, []string{"suites: not listed: cannot make a commit to list them on: " + err.Error()}
	}
	b, err := sitepkg.OpenBase(ctx, sitepkg.BaseOptions{Dir: root, Base: sha})
	if err != nil {
		return nil, []string{"suites: not listed: " + errLine(err)}
	}
	planned, sandboxLine, notListed, err := check.PlanSuites(ctx, b, check.SiteOptions{Env: ios.environ(), NoOverlay: ios.Getenv(sandbox.NoOverlayEnv) == "1"})
	switch {
	case err != nil:
		return nil, []string{"suites: not listed: " + errLine(err)}
	case notListed != "":
		return nil, suites.PlanLines(nil, "", notListed)
	}
	return b.Config, suites.PlanLines(planned, sandboxLine, "")
}

// errLine is an error's message and its hint, on one line.
func errLine(err error) string {
	msg := err.Error()
	var fe *flakegate.Error
	if errors.As(err, &fe) && fe.Hint != "" {
		msg += " (" + fe.Hint + ")"
	}
	return msg
}
