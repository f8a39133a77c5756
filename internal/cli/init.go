package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/discover"
	"github.com/flakegate/flakegate/internal/initconfig"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/template"
	"github.com/spf13/cobra"
)

// MeasureTimeout bounds the one bare run of `init --measure` per test.
const MeasureTimeout = 10 * time.Minute

// InitOptions are the inputs of `flakegate init`.
type InitOptions struct {
	IO     *IO
	DryRun bool
	Force  bool
	// Measure times one bare run per test for its wall budget.
	Measure bool
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

Without --measure every wall_budget is 5m. With it, each test runs once, bare
(outside the sandbox, seed 1), and its budget is 5 times that run, rounded up
to 10 s, at least 30s; a run that fails keeps 5m and says so.

Exit 0: written (or printed); 2: not in a git repository, flakegate.yaml
exists (use --force), or no property test was found.`,
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
	f.BoolVar(&opts.Measure, "measure", false, "time one bare run of each test for its wall_budget")
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
	if len(found.Tests) == 0 {
		return initErr(flakegate.ENOTFOUND, "no property test found in "+root,
			"init looks for Go tests calling rapid.Check, pytest tests with Hypothesis's @given or a state machine's TestCase, "+
				"and vitest/jest tests calling fast-check's assert; docs/writing-properties.md shows how to write one, or write flakegate.yaml by hand (docs/configuration.md)")
	}
	_, lookErr := exec.LookPath("pytest")
	pl := initconfig.Build(os.DirFS(root), found.Tests, initconfig.Options{PytestOnPath: lookErr == nil})
	for _, s := range pl.Skipped {
		fmt.Fprintf(report, "skipped %s: %s\n", termsafe.String(s.Path), termsafe.String(s.Reason))
	}
	if len(pl.Entries) == 0 {
		return initErr(flakegate.ENOTFOUND, "no property test found in "+root+" that a config can name", "see the skipped lines above; write flakegate.yaml by hand (docs/configuration.md)")
	}
	if opts.Measure {
		measure(ctx, root, pl, report)
	}
	raw, err := initconfig.Render(pl, found.SeedHook)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Message: err.Error()}
	}
	printFound(report, found)
	if !found.SeedHook && hasJS(found.Tests) {
		fmt.Fprintf(report, "warning: no file reads %s: fast-check draws random inputs for every seed until a setup file\n"+
			"  passes it on, e.g. fc.configureGlobal({ seed: Number(process.env.%s) }) (docs/writing-properties.md)\n", discover.SeedEnv, discover.SeedEnv)
	}
	if opts.DryRun {
		_, err := opts.IO.Out.Write(raw)
		return err
	}
	if err := atomicfile.WriteFile(target, raw, 0o644); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "init", Path: target, Message: err.Error()}
	}
	fmt.Fprintf(report, "wrote %s (%d %s)\n\nNext:\n", target, len(pl.Entries), plural(len(pl.Entries), "property", "properties"))
	fmt.Fprintf(report, "  1. commit it on the base branch: git add %s && git commit -m \"flakegate: gate the property tests\"\n", config.DefaultPath)
	fmt.Fprintf(report, "  2. on a candidate branch: flakegate check --base main   (the base branch or revision the config is on)\n")
	return nil
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

// measure runs each entry once, bare, in the repository with seed 1 and
// sets its budget from the wall time.
func measure(ctx context.Context, root string, pl *initconfig.Plan, w io.Writer) {
	for i := range pl.Entries {
		e := &pl.Entries[i]
		argv, err := template.Expand(e.Run, template.Vars{Path: e.Test.Path, Name: e.Test.Name, Seed: strconv.Itoa(initconfig.Seeds[0])})
		if err != nil {
			e.BudgetNote = "default; measuring failed: " + err.Error()
			continue
		}
		fmt.Fprintf(w, "measuring %s::%s ... ", termsafe.String(e.Test.Path), termsafe.String(e.Test.Name))
		out := runner.Run(ctx, runner.Command{Argv: evidence.Argv(argv), Dir: root, WallBudget: MeasureTimeout})
		if out.Result != runner.Pass {
			why := out.Result
			if out.ExitCode >= 0 {
				why += ", exit " + strconv.Itoa(out.ExitCode)
			}
			if out.Reason != "" {
				why += ": " + out.Reason
			}
			why = strings.ReplaceAll(why, "\n", " ")
			fmt.Fprintf(w, "%s; keeping the default\n", termsafe.String(why))
			if last := lastLine(out.Tail); last != "" {
				fmt.Fprintf(w, "  its output ended with: %s\n", termsafe.String(oneLine(last, 200)))
			}
			e.BudgetNote = "default; the measured run did not pass (" + oneLine(why, 80) + ")"
			continue
		}
		e.WallBudget = initconfig.MeasuredBudget(out.Wall)
		e.BudgetNote = fmt.Sprintf("measured: one bare run took %.1f s; %dx, at least %s", out.Wall.Seconds(), initconfig.MeasureFactor, initconfig.MeasureFloor)
		fmt.Fprintf(w, "%.1f s\n", out.Wall.Seconds())
	}
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

// lastLine is the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n\r\t "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
