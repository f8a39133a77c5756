package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/plan"
	"github.com/spf13/cobra"
)

// InitOptions are the inputs of `flakegate init`.
type InitOptions struct {
	IO     *IO
	DryRun bool
	Force  bool
	// Measure tries every property (one sandboxed attempt each) and sets
	// its wall budget from that attempt's time.
	Measure bool
	// NoTry writes the config without trying it.
	NoTry bool
	// Dir is where init starts looking for the repository ("" is the
	// current folder).
	Dir string
}

// NewCmdInit builds `flakegate init`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdInit(ios *IO, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "init [--dry-run] [--force] [--measure]",
		Short: "Write a commented flakegate.yaml for the property tests of this repository",
		Long: `Finds the seeded property tests of the repository it stands in (the root is
git's) and writes flakegate.yaml there, each entry with its path and name,
seeds [1, 2, 3] and random_seeds: 2, the framework's run template, a wall
budget and a prepare guess:

  Go          tests calling pgregory.net/rapid's Check or MakeCheck (-rapid.seed)
  pytest      tests decorated with Hypothesis's @given, and state machines
              exposed as TestX = Machine.TestCase (--hypothesis-seed)
  vitest/jest tests whose body calls fast-check's assert (the seed in
              FAST_CHECK_SEED, read by a setup file; see docs/writing-properties.md)

Source is read, never run (Go with go/parser, Python and JavaScript with a
tokenizer): a call or a decorator in a string or a comment does not count.
The file is checked with flakegate's own config loader before it is written.

For pytest it picks the interpreter the sandbox sees (never one under $HOME,
such as a pyenv shim) that has pytest, Hypothesis and most of the tests'
imports, puts a src/ layout on PYTHONPATH (unless pytest's own pythonpath
setting does), and writes a prepare only when something must be built
(extension modules), and only one that can work here.

Before it writes, init tries the file as check will run it: on a commit that
is HEAD plus the file (reachable from nothing), the prepare once, then one
attempt (and its base replay) of the first property of each framework, in the
sandbox. With --measure every property is tried, and each wall_budget is 5
times its attempt, rounded up to 10 s, at least 30s (else 5m). What failed is
printed one line per cause, with the fix. The suites are measured by one run
(a check of the suites alone, each test once per side with its first order
seed, in the sandbox) when that is cheap: it ends within 2 minutes (30 with
--measure). The times are kept under the git common directory
(flakegate/measured.json), and init prints what a check will cost (the same
lines as flakegate check --plan, the suites' tests counted).

Exit 0: written (or printed) and tried; 1: written, but it would not run here
(the problems are listed); 2: not in a git repository, flakegate.yaml exists
(use --force), or no property test was found.`,
		Example: "  flakegate init --dry-run\n  flakegate init --measure\n  flakegate init --force",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runInit(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the file on stdout and write nothing")
	f.BoolVar(&opts.Force, "force", false, "overwrite an existing flakegate.yaml")
	f.BoolVar(&opts.Measure, "measure", false, "try every property (one sandboxed attempt each) and set its wall_budget from that attempt's time")
	f.BoolVar(&opts.NoTry, "no-try", false, "write the config without trying it in the sandbox")
	return cmd
}

func initErr(code, msg, hint string) error {
	return &flakegate.Error{Code: code, Op: "init", Message: msg, Hint: hint}
}

func runInit(ctx context.Context, opts *InitOptions) error {
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	root, err := (&git.Client{Dir: dir}).TopLevel(ctx)
	if err != nil {
		return initErr(flakegate.EINVALID, "not inside a git repository: "+err.Error(), "run flakegate init in the repository the gate is for")
	}
	target := filepath.Join(root, config.DefaultPath)
	if _, err := os.Lstat(target); err == nil && !opts.Force && !opts.DryRun {
		return initErr(flakegate.ECONFLICT, target+" exists already; init does not overwrite it",
			"flakegate init --dry-run prints what it would write; --force overwrites it")
	}
	found, err := discover.Find(os.DirFS(root))
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: "reading the repository: " + err.Error()}
	}
	report := opts.IO.ErrOut
	for _, s := range found.Skipped {
		fmt.Fprintf(report, "skipped %s: %s\n", termsafe.String(s.Path), termsafe.String(s.Reason))
	}
	suites, suiteNotes := initconfig.Suites(os.DirFS(root), "")
	if len(found.Tests) == 0 && len(suites) == 0 {
		return initErr(flakegate.ENOTFOUND, "no property test found in "+root+", and no test suite",
			"init looks for Go tests calling rapid.Check, pytest tests with Hypothesis's @given or a state machine's TestCase, "+
				"and vitest/jest tests calling fast-check's assert; docs/writing-properties.md shows how to write one, or write flakegate.yaml by hand (docs/configuration.md)")
	}
	fsys := os.DirFS(root)
	bopts, pyLines, tests := buildOptions(ctx, opts.IO, report, root, fsys, found.Tests)
	pl := initconfig.Build(fsys, tests, bopts)
	for _, s := range pl.Skipped {
		fmt.Fprintf(report, "skipped %s: %s\n", termsafe.String(s.Path), termsafe.String(s.Reason))
	}
	pl.Suites = planSuites(ctx, opts, root, fsys, pl, bopts, suites, &suiteNotes)
	for _, n := range suiteNotes {
		fmt.Fprintf(report, "note: %s\n", termsafe.Line(n))
	}
	if len(pl.Entries) == 0 && len(pl.Suites) == 0 {
		return initErr(flakegate.ENOTFOUND, "no property test found in "+root+" that a config can name", "the skipped and note lines above say why each was left out and what to do; or write flakegate.yaml by hand (docs/configuration.md)")
	}
	printFound(report, found)
	for _, l := range pyLines {
		fmt.Fprintln(report, termsafe.Line(l))
	}
	problems := append([]string(nil), pl.Problems...)
	raw, err := initconfig.Render(pl, found.SeedHook)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: err.Error()}
	}
	// Try it: the prepare once, then one attempt of one property per
	// framework (every property with --measure), in the sandbox, as check
	// will run the written file.
	tried := trialIndexes(pl, opts.Measure)
	secs := map[string]float64{}
	source := ""
	if opts.NoTry {
		fmt.Fprintln(report, "not tried (--no-try): the config is written as found, unchecked")
	} else if len(pl.Entries) > 0 {
		fmt.Fprintf(report, "trying %d of %d %s in the sandbox (the prepare once, then one attempt each, as check runs them) ...\n",
			len(tried), len(pl.Entries), plural(len(pl.Entries), "property", "properties"))
		trialRaw, err := initconfig.RenderTrial(pl, found.SeedHook, tried)
		if err != nil {
			return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: err.Error()}
		}
		outs, err := tryConfig(ctx, opts.IO, root, trialRaw, tried, opts.DryRun)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			problems = append(problems, err.Error())
		}
		problems = append(problems, noteTrials(report, pl, outs, secs, opts.Measure)...)
		if opts.Measure {
			if raw, err = initconfig.Render(pl, found.SeedHook); err != nil {
				return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: err.Error()}
			}
		}
		source = "flakegate init"
		if opts.Measure {
			source = "flakegate init --measure"
		}
		source += ", one sandboxed attempt each, " + time.Now().UTC().Format("2006-01-02 15:04 UTC")
		if common, err := (&git.Client{Dir: root}).CommonDir(ctx); err == nil && len(secs) > 0 && !opts.DryRun {
			if err := plan.KeepTimings(common, source, secs, nil); err != nil {
				fmt.Fprintf(report, "warning: cannot keep the timings: %s\n", termsafe.Line(err.Error()))
			}
		}
	}
	if opts.Measure && len(pl.Suites) > 0 {
		measureSuites(ctx, opts.IO, report, root, bopts.Python, pl)
		if raw, err = initconfig.Render(pl, found.SeedHook); err != nil {
			return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: err.Error()}
		}
	}
	measureSuiteTrial(ctx, opts, report, root, pl)
	warnSeedHook(report, found)
	printInitCost(ctx, opts, report, root, raw, secs, source)
	return writeInit(opts, report, target, raw, pl, problems)
}

// buildOptions are what initconfig.Build needs to know of this machine:
// the interpreter (choosePythonFor, which also says which tests it left
// out) and how node_modules comes into the tree (nodeOptions).
func buildOptions(ctx context.Context, ios *IO, report io.Writer, root string, fsys fs.FS, tests []discover.Test) (initconfig.Options, []string, []discover.Test) {
	bopts, lines, kept := choosePythonFor(ctx, ios, report, root, fsys, tests)
	return nodeOptions(ctx, ios, root, bopts), lines, kept
}

// warnSeedHook warns when fast-check properties were found and no file
// passes the seed on to fast-check.
func warnSeedHook(report io.Writer, found *discover.Result) {
	if !found.SeedHook && hasJS(found.Tests) {
		fmt.Fprintf(report, "warning: no file reads %s: fast-check draws random inputs for every seed until a setup file\n"+
			"  passes it on, e.g. fc.configureGlobal({ seed: Number(process.env.%s) }) (docs/writing-properties.md)\n", discover.SeedEnv, discover.SeedEnv)
	}
}

// noteTrials prints each tried entry's result, keeps the timings in secs,
// sets the measured budgets (with --measure), and returns the problems of
// the entries that failed.
func noteTrials(report io.Writer, pl *initconfig.Plan, outs []trialOutcome, secs map[string]float64, measure bool) []string {
	var problems []string
	for _, o := range outs {
		e := &pl.Entries[o.Entry]
		id := e.Test.Path + "::" + e.Test.Name
		switch {
		case o.Passed:
			fmt.Fprintf(report, "  ok   %s: %.1f s\n", termsafe.Line(id), o.Seconds)
		default:
			fmt.Fprintf(report, "  fail %s\n", termsafe.Line(id))
			problems = append(problems, o.Cause)
		}
		if o.Timed {
			secs[id] = o.Seconds
		}
		if measure && o.Passed && o.Timed {
			e.WallBudget = initconfig.MeasuredBudget(time.Duration(o.Seconds * float64(time.Second)))
			e.BudgetNote = fmt.Sprintf("measured: one sandboxed attempt took %.1f s; %dx, at least %s", o.Seconds, initconfig.MeasureFactor, initconfig.MeasureFloor)
		} else if measure {
			e.BudgetNote = "default; the measured attempt did not pass"
		}
	}
	return problems
}

// printInitCost prints what a check of the written config will cost,
// from this run's timings and the kept ones. A suite's tests are counted
// as check --plan counts them, listed in the sandbox on a commit of the
// work tree with the file (not with --no-try, which runs nothing).
func printInitCost(ctx context.Context, opts *InitOptions, report io.Writer, root string, raw []byte, secs map[string]float64, source string) {
	cfg, err := config.Load(raw, config.DefaultPath)
	if err != nil {
		return
	}
	var t plan.Timings
	if common, err := (&git.Client{Dir: root}).CommonDir(ctx); err == nil {
		t = plan.ReadTimings(common)
	}
	if len(secs) > 0 {
		if t.Seconds == nil {
			t.Seconds = map[string]float64{}
		}
		for k, v := range secs {
			t.Seconds[k] = v
		}
		t.Source = source
	}
	unlisted := ""
	switch n := len(cfg.Suites); {
	case n == 0:
	case opts.NoTry:
		unlisted = "(--no-try lists nothing)"
	default:
		listed, lines := initSuiteCost(ctx, opts.IO, root, raw)
		for _, l := range lines {
			fmt.Fprintln(report, termsafe.Line(l))
		}
		if listed != nil {
			cfg = listed
		} else {
			unlisted = "(they could not be listed here)"
		}
	}
	for _, l := range check.PlanCost(cfg, t, "").Lines() {
		fmt.Fprintln(report, l)
	}
	if n := len(cfg.Suites); unlisted != "" {
		// A suite's tests are listed on the base tree, in the sandbox,
		// when a check runs.
		fmt.Fprintf(report, "cost: the tests of %s are not in that count %s; once the config is committed, "+
			"flakegate check --plan --base REV counts them\n", plural(n, "the suite", fmt.Sprintf("the %d suites", n)), unlisted)
	}
}

// writeInit prints the problems, then writes the config (or prints it,
// with --dry-run) and what to do next; a config with problems is exit 1.
func writeInit(opts *InitOptions, report io.Writer, target string, raw []byte, pl *initconfig.Plan, problems []string) error {
	for _, p := range problems {
		fmt.Fprintf(report, "problem: %s\n", termsafe.Line(p))
	}
	var failed error
	if len(problems) > 0 {
		fmt.Fprintf(report, "the config as written would not run here: %d %s above, each with its fix\n", len(problems), plural(len(problems), "problem", "problems"))
		failed = &ExitError{Code: ExitReject}
	}
	if opts.DryRun {
		if _, err := opts.IO.Out.Write(raw); err != nil {
			return err
		}
		return failed
	}
	if err := atomicfile.WriteFile(target, raw, 0o644); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Path: target, Message: err.Error()}
	}
	fmt.Fprintf(report, "wrote %s (%d %s, %d %s)\n\nNext:\n", target, len(pl.Entries), plural(len(pl.Entries), "property", "properties"), len(pl.Suites), plural(len(pl.Suites), "suite", "suites"))
	if failed != nil {
		fmt.Fprintf(report, "  0. fix the problems above, then flakegate init --force (or edit %s)\n", config.DefaultPath)
	}
	fmt.Fprintf(report, "  1. commit it on the base branch: git add %s && git commit -m \"flakegate: gate %s\"\n", config.DefaultPath, gatedWhat(pl))
	fmt.Fprintf(report, "  2. on a candidate branch: flakegate check --base %s   (the base branch or revision the config is on)\n", baseName(opts))
	return failed
}

// baseName is the branch init ran on (the base a check names), "main"
// when HEAD is detached or git cannot say.
func baseName(opts *InitOptions) string {
	b, err := (&git.Client{Dir: opts.Dir}).Branch(context.Background())
	if err != nil || b == "" {
		return "main"
	}
	return termsafe.Line(b)
}

// gatedWhat names what the config gates, for its commit message: "the
// property tests", "the test suite", or both.
func gatedWhat(pl *initconfig.Plan) string {
	suites := plural(len(pl.Suites), "the test suite", "the test suites")
	switch {
	case len(pl.Entries) == 0:
		return suites
	case len(pl.Suites) == 0:
		return "the property tests"
	}
	return "the property tests and " + suites
}

// trialIndexes are the entries init tries: every one with --measure,
// else the first of each framework.
func trialIndexes(pl *initconfig.Plan, all bool) []int {
	var out []int
	seen := map[string]bool{}
	for i, e := range pl.Entries {
		if all || !seen[e.Test.Framework] {
			seen[e.Test.Framework] = true
			out = append(out, i)
		}
	}
	return out
}

// choosePythonFor chooses the interpreter of pytest entries (none when
// there is no pytest test): the build options, what init says about it,
// and the tests to configure: those of a file that skips itself there
// (a module-level pytest.importorskip of a module it lacks) are left out,
// and report says so.
func choosePythonFor(ctx context.Context, ios *IO, report io.Writer, root string, fsys fs.FS, tests []discover.Test) (initconfig.Options, []string, []discover.Test) {
	opts, lines, skips := pickPythonFor(ctx, ios, root, fsys, tests)
	if len(skips) > 0 {
		tests = leaveOutSkipped(report, tests, skips, opts.Python)
	}
	return opts, lines, tests
}

// pickPythonFor is choosePythonFor's choice: the options, the lines, and
// each self-skipping file's modules the interpreter lacks.
func pickPythonFor(ctx context.Context, ios *IO, root string, fsys fs.FS, tests []discover.Test) (initconfig.Options, []string, map[string][]string) {
	var opts initconfig.Options
	layout := initconfig.PythonLayout(fsys)
	if !slices.ContainsFunc(tests, func(t discover.Test) bool { return t.Framework == discover.PytestHypothesis }) {
		// No property: the suite's tests may still import the code
		// from a folder (suiteLayout).
		var lines []string
		layout, lines = suiteLayout(ctx, ios, root, fsys, layout)
		opts.Layout = &layout
		return opts, lines, nil
	}
	imports := initconfig.PythonImports(fsys, tests, layout)
	optional := initconfig.PythonOptional(fsys, tests, layout)
	ask := append(slices.Clone(imports), layout.BuildRequires...)
	for _, mods := range optional {
		for _, m := range mods {
			if !slices.Contains(ask, m) {
				ask = append(ask, m)
			}
		}
	}
	cands, err := askPython(ctx, ios, root, pythonCandidates(ios.Getenv("PATH"), ios.Getenv("HOME")), ask)
	if err != nil {
		// No interpreter of PATH runs outside the sandbox: the trial
		// below (which needs the sandbox too) says what the tests lack.
		opts.Python = "python3"
		return opts, []string{"python: the interpreters on PATH were not asked: no sandbox to ask them in (" + err.Error() + "); init starts none outside it: python3 is written"}, nil
	}
	var lines []string
	best, ok := choosePython(cands)
	if !ok {
		var looked []string
		for _, c := range cands {
			looked = append(looked, c.Path)
		}
		opts.Python = "python3"
		lines = append(lines, "python: no interpreter the sandbox sees has pytest and Hypothesis (looked at: "+orNoneList(looked)+
			"; interpreters under $HOME are left out: the sandbox hides the home folder)")
		return opts, lines, nil
	}
	opts.Python = best.Path
	if dirs := packageDirs(fsys, layout, best.Missing); len(dirs) > 0 {
		// The tests import the code from a folder nothing puts on
		// sys.path: it goes on PYTHONPATH, and is the code's own.
		layout.SrcDirs = append(layout.SrcDirs, dirs...)
		imports = initconfig.PythonImports(fsys, tests, layout)
	}
	opts.Layout = &layout
	skips := map[string][]string{}
	for file, mods := range optional {
		for _, m := range mods {
			if slices.Contains(best.Missing, m) {
				skips[file] = append(skips[file], m)
			}
		}
	}
	missingTests := slices.DeleteFunc(slices.Clone(best.Missing), func(m string) bool {
		return slices.Contains(layout.BuildRequires, m) || !slices.Contains(imports, m)
	})
	line := "python: " + best.Path + " has pytest and Hypothesis"
	switch {
	case len(imports) > 0 && len(missingTests) == 0:
		line += " and every module the tests and conftest.py files import"
	case len(imports) > 0:
		line += fmt.Sprintf(" and %d of the %d modules the tests and conftest.py files import", len(imports)-len(missingTests), len(imports))
	}
	switch {
	case len(layout.SrcDirs) > 0:
		line += "; the tests import the code from " + strings.Join(layout.SrcDirs, ", ") + ": PYTHONPATH=" + strings.Join(layout.SrcDirs, ":")
	case layout.PytestPythonpath != "":
		line += "; pytest's pythonpath (" + layout.PytestPythonpath + ") puts the code on sys.path"
	}
	lines = append(lines, line)
	if len(missingTests) > 0 {
		lines = append(lines, "python: "+best.Path+" cannot import "+strings.Join(missingTests, ", ")+" (the trial below says whether a test needs it)")
	}
	if layout.Build != "" {
		opts.BuildRequiresMet = !slices.ContainsFunc(layout.BuildRequires, func(m string) bool { return slices.Contains(best.Missing, m) })
		if !opts.BuildRequiresMet {
			opts.IndexReachable = indexReachable(ctx, ios.Getenv("PIP_INDEX_URL"))
		}
	}
	return opts, lines, skips
}

// leaveOutSkipped returns tests without those of the files that skip
// themselves under python (skips: each file's modules it lacks), and says
// which files it left out and why. Such a file's tests never run here: a
// check of them would be INCOMPLETE on every patch.
func leaveOutSkipped(report io.Writer, tests []discover.Test, skips map[string][]string, python string) []discover.Test {
	n := map[string]int{}
	kept := slices.DeleteFunc(slices.Clone(tests), func(t discover.Test) bool {
		_, skip := skips[t.Path]
		if skip && t.Framework == discover.PytestHypothesis {
			n[t.Path]++
			return true
		}
		return false
	})
	files := slices.Sorted(maps.Keys(n))
	for _, f := range files {
		fmt.Fprintf(report, "skipped %s: %d %s left out: the file skips itself here (pytest.importorskip): %s cannot import %s; install %s for that interpreter and run flakegate init again to gate %s\n",
			termsafe.String(f), n[f], plural(n[f], "property", "properties"), termsafe.String(python),
			termsafe.String(strings.Join(skips[f], ", ")), plural(len(skips[f]), "it", "them"), plural(n[f], "it", "them"))
	}
	return kept
}

func orNoneList(xs []string) string {
	if len(xs) == 0 {
		return "none found"
	}
	return strings.Join(xs, ", ")
}

func hasJS(tests []discover.Test) bool {
	for _, t := range tests {
		if t.Framework == discover.VitestFastCheck || t.Framework == discover.JestFastCheck {
			return true
		}
	}
	return false
}

// printFound writes per framework the count and the tests.
func printFound(w io.Writer, found *discover.Result) {
	byFw := map[string][]discover.Test{}
	var order []string
	for _, t := range found.Tests {
		if _, ok := byFw[t.Framework]; !ok {
			order = append(order, t.Framework)
		}
		byFw[t.Framework] = append(byFw[t.Framework], t)
	}
	for _, fw := range order {
		ts := byFw[fw]
		fmt.Fprintf(w, "%s: %d %s\n", fw, len(ts), plural(len(ts), "property test", "property tests"))
		for _, t := range ts {
			fmt.Fprintf(w, "  %s:%d %s (%s)\n", termsafe.String(t.Path), t.Line, termsafe.String(t.Name), t.Kind)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine keeps a comment on one printable line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
