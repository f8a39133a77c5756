package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/plan"
	"github.com/flakegate/flakegate/postgres"
	"github.com/flakegate/flakegate/report"
	"github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
	"github.com/spf13/cobra"
)

// report.Progress draws the progress of a check on stderr.
var (
	_ check.ProgressHandler     = (*report.Progress)(nil)
	_ check.TestProgressHandler = (*report.Progress)(nil) // a batch's tests as they end
)

// DefaultLockTimeout is how long check waits for a lock another check
// holds before it gives up with exit 3.
const DefaultLockTimeout = 5 * time.Minute

// CheckOptions are the inputs of `flakegate check`.
type CheckOptions struct {
	IO *IO

	Base, Candidate, Config, Out string
	// Ledger is --ledger, else $FLAKEGATE_LEDGER: a folder, a postgres://
	// DSN, or "" for the embedded store of the repository.
	Ledger                       string
	JSON, GitHub, NoReplayCache  bool
	JUnit, Markdown, FreezeOwner string
	// ExplainWatch lists what each property watches and runs nothing;
	// RunContaminated runs triples the diff alone makes CONTAMINATED or
	// the fixture digests FIXTURE (--run-contaminated, --run-decided).
	ExplainWatch, RunContaminated bool
	// Plan prints what the check will cost and runs nothing.
	Plan bool
	// LockTimeout bounds each wait for a lock another check holds.
	LockTimeout time.Duration
	fleet       fleetFlags // fleet.go
}

// NewCmdCheck is the failure-class merge check.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdCheck(ios *IO, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "check --base REV [--candidate REV] [flags]",
		Short: "Run the failure-class merge check of a candidate against a base",
		Long: `check reads flakegate.yaml from the base revision, runs every (property,
fixture, seed) triple on a clean candidate worktree under the retry cap,
replays each seed once on a clean base worktree, writes a run record per
triple and labels it with the decision table.

Exit status: 0 the check passes (PASS, SCHEDULER or frozen), 1 a reject
label, 2 usage or configuration error, 3 flakegate itself failed.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if strings.TrimSpace(opts.Base) == "" {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Message: "--base is required",
					Hint: "pass the revision the candidate is measured against, e.g. --base origin/main"}
			}
			if opts.Ledger == "" {
				opts.Ledger = ios.Getenv("FLAKEGATE_LEDGER")
			}
			opts.FreezeOwner = strings.TrimSpace(opts.FreezeOwner)
			if runF != nil {
				return runF(opts)
			}
			return runCheck(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Base, "base", "", "base revision the candidate is measured against (required)")
	fl.StringVar(&opts.Candidate, "candidate", "HEAD", "candidate revision")
	fl.StringVar(&opts.Config, "config", "flakegate.yaml", "config path in the repository, read at the base revision")
	fl.StringVar(&opts.Out, "out", "", "folder for records, transcripts and summary.json (default <git common dir>/flakegate/out/<candidate sha>)")
	fl.StringVar(&opts.Ledger, "ledger", "", "ledger folder or postgres:// DSN (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
	fl.BoolVar(&opts.JSON, "json", false, "print the summary as one JSON object on stdout")
	fl.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.StringVar(&opts.Markdown, "markdown", "", "also write a Markdown report to `FILE`")
	fl.BoolVar(&opts.GitHub, "github", false, "print GitHub annotations and append the Markdown report to $GITHUB_STEP_SUMMARY")
	fl.BoolVar(&opts.NoReplayCache, "no-replay-cache", false, "replay every seed on base, neither reading nor writing the replay cache")
	fl.StringVar(&opts.FreezeOwner, "freeze-owner", "", "grant a freeze, owned by `NAME`, to every SCHEDULER result")
	fl.BoolVar(&opts.Plan, "plan", false, "print the triples, attempts and processes the base config will cost and the time they take (from measured runs), and exit without running anything")
	fl.BoolVar(&opts.ExplainWatch, "explain-watch", false, "list what each property of the base config watches, and exit without running anything")
	fl.BoolVar(&opts.RunContaminated, "run-contaminated", false, "run the attempts of triples the diff alone makes CONTAMINATED or the fixture digests FIXTURE (the label stays); same as --run-decided")
	fl.BoolVar(&opts.RunContaminated, "run-decided", false, "run the attempts of triples whose label the diff or the fixture digests decide before any attempt (CONTAMINATED, FIXTURE; the label stays)")
	fl.DurationVar(&opts.LockTimeout, "lock-timeout", DefaultLockTimeout, "give up (exit 3) after waiting this long for a lock another check holds")
	addFleetFlags(fl, &opts.fleet)
	return cmd
}

func runCheck(ctx context.Context, opts *CheckOptions) error {
	ios := opts.IO
	spec := opts.Ledger
	ledgerPath := ""
	var secrets []string
	if spec != "" && !postgres.IsDSN(spec) {
		ledgerPath = spec
	} else if spec != "" {
		secrets = append(secrets, spec)
	}
	if opts.LockTimeout < 0 {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "check --lock-timeout", Message: opts.LockTimeout.String() + " is negative",
			Hint: "pass a duration such as 5m, or 0 to wait until interrupted"}
	}
	if opts.Plan {
		return planCheck(ctx, opts)
	}
	progress := report.NewProgress(ios.ErrOut, ios.ErrIsTerminal)
	copts := check.Options{
		Dir:           ".",
		Base:          opts.Base,
		Candidate:     opts.Candidate,
		ConfigPath:    opts.Config,
		OutDir:        opts.Out,
		LedgerPath:    ledgerPath,
		NoReplayCache: opts.NoReplayCache,
		FreezeOwner:   opts.FreezeOwner,
		By:            "flakegate check",
		Secrets:       secrets,
		Env:           ios.environ(),
		NoOverlay:     ios.Getenv(sandbox.NoOverlayEnv) == "1",
		LockTimeout:   opts.LockTimeout,
		OpenStore: func(ctx context.Context, commonDir string) (flakegate.Store, error) {
			s, err := store.Open(ctx, spec, commonDir)
			if fs, ok := s.(*filestore.Store); ok {
				fs.LockTimeout, fs.LockWait = opts.LockTimeout, check.NoteWriter(progress)
			}
			return s, err
		},
		Progress:        progress,
		RunContaminated: opts.RunContaminated,
	}
	if opts.ExplainWatch {
		return explainWatch(ctx, ios, opts.JSON, copts)
	}
	if err := opts.fleet.apply(ios, spec, &copts); err != nil {
		return err
	}
	sum, err := check.Run(ctx, copts)
	if err != nil {
		return err
	}
	if err := writeCheckOutputs(opts, sum); err != nil {
		return err
	}
	if sum.Verdict == flakegate.VerdictReject {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

// planCheck prints what a check of the base config will cost (JSON with
// --json), from the timings earlier checks and flakegate init kept
// (plan.ReadTimings); it runs nothing.
func planCheck(ctx context.Context, opts *CheckOptions) error {
	b, err := site.OpenBase(ctx, site.BaseOptions{Dir: ".", Base: opts.Base, ConfigPath: opts.Config})
	if err != nil {
		return err
	}
	// A suite's triples are its tests, which only its framework can list,
	// in the check's sandbox on the base tree (PlanSuites).
	var secrets []string
	if postgres.IsDSN(opts.Ledger) {
		secrets = append(secrets, opts.Ledger)
	}
	planned, sandboxLine, notListed, err := check.PlanSuites(ctx, b, check.SiteOptions{Env: opts.IO.environ(),
		NoOverlay: opts.IO.Getenv(sandbox.NoOverlayEnv) == "1", Secrets: secrets})
	if err != nil {
		return err
	}
	cost := check.PlanCost(b.Config, plan.ReadTimings(b.Common), b.SHA)
	cost.Suites, cost.SuitesNotListed = planned, notListed
	cost.Impact = b.Config.Impact
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(cost)
	}
	for _, l := range append(suites.PlanLines(planned, sandboxLine, notListed), cost.Lines()...) {
		fmt.Fprintln(opts.IO.Out, termsafe.Line(l))
	}
	return nil
}

// writeCheckOutputs prints the summary and writes the requested reports.
func writeCheckOutputs(opts *CheckOptions, sum *flakegate.Summary) error {
	return writeSummaryOutputs(opts.IO, "check", summaryOutputs{JSON: opts.JSON, GitHub: opts.GitHub, JUnit: opts.JUnit, Markdown: opts.Markdown}, sum)
}

// summaryOutputs are the output flags check and verdict share.
type summaryOutputs struct {
	JSON, GitHub    bool
	JUnit, Markdown string
}

// writeSummaryOutputs prints a check summary (JSON or text) and writes
// the requested reports; cmd names the command in errors.
func writeSummaryOutputs(ios *IO, cmd string, o summaryOutputs, sum *flakegate.Summary) error {
	if o.JSON {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printCheckText(ios.Out, sum)
	}
	printReproduce(ios.ErrOut, sum)
	if err := writeReportFiles(ios, cmd, o.JUnit, o.Markdown, sum); err != nil {
		return err
	}
	if o.GitHub {
		// Workflow commands are read from stdout; with --json stdout is the
		// summary, so they go to stderr, which the runner reads too.
		w := ios.Out
		if o.JSON {
			w = ios.ErrOut
		}
		if err := writeGitHub(ios, cmd+" --github", w, sum); err != nil {
			return err
		}
	}
	printVerdictLine(ios.ErrOut, sum)
	return nil
}

// printReproduce writes on stderr, in every output mode (stdout may be
// the --json summary), the command that replays each reject and
// SCHEDULER seed: "reproduce PATH::NAME seed S: flakegate replay ...".
func printReproduce(w io.Writer, sum *flakegate.Summary) {
	for _, r := range sum.Results {
		if r.Skipped || r.Label == flakegate.Pass || r.Reproduce == "" {
			continue
		}
		fmt.Fprintf(w, "reproduce %s seed %s (%s): %s\n", termsafe.Line(r.ID()), termsafe.Line(r.Seed.String()), r.Label, termsafe.Line(r.Reproduce))
	}
}

// explainWatch prints what each property watches (JSON with --json).
func explainWatch(ctx context.Context, ios *IO, asJSON bool, opts check.Options) error {
	b, err := site.OpenBase(ctx, site.BaseOptions{Dir: opts.Dir, Base: opts.Base, ConfigPath: opts.ConfigPath, Git: opts.Git})
	if err != nil {
		return err
	}
	lists, err := check.ExplainWatch(ctx, b, opts.LedgerPath)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(lists)
	}
	for _, wl := range lists {
		fw := ""
		if wl.Framework != "" {
			fw = " (" + wl.Framework + ")"
		}
		fmt.Fprintf(ios.Out, "%s%s\n", termsafe.Line(wl.Property), termsafe.Line(fw))
		if len(wl.Prepare) > 0 {
			b, _ := json.Marshal(wl.Prepare)
			fmt.Fprintf(ios.Out, "  prepare (once per tree, not watched): %s\n", termsafe.Line(string(b)))
		}
		for _, w := range wl.Watch {
			fmt.Fprintf(ios.Out, "  %-40s %s\n", termsafe.Line(w.Glob), termsafe.Line(w.Why))
		}
	}
	return nil
}

// printCheckText writes one line per triple, the command that replays a
// reject or SCHEDULER seed, and the verdict, last. What a result carries
// from the code under test (a reason quoting its output, a test name) is
// rendered on its line by termsafe.Line, so no line but flakegate's own
// starts with "verdict:".
func printCheckText(w io.Writer, sum *flakegate.Summary) {
	line := termsafe.Line
	folded := 0
	for _, r := range sum.Results {
		if r.Suite != "" && r.Label == flakegate.Pass && !r.Skipped {
			folded++ // a suite's passes are counted, not listed: it may have thousands
			continue
		}
		label := string(r.Label)
		if r.Skipped {
			label += " skipped (frozen)"
			if r.FrozenCandidate != "" {
				label += " from " + flakegate.ShortSHA(r.FrozenCandidate)
			}
		}
		seed := r.Seed.String()
		if r.SeedOrigin != "" {
			seed += " (" + r.SeedOrigin + ")"
		}
		fmt.Fprintf(w, "%-28s %s seed %s", line(label), line(r.ID()), line(seed))
		if r.Record != "" {
			fmt.Fprintf(w, "  %s", line(r.Record))
		}
		fmt.Fprintln(w)
		if !r.Skipped && r.Label != flakegate.Pass && r.Reason != "" {
			fmt.Fprintf(w, "    reason: %s\n", line(r.Reason))
		}
		if !r.Skipped && r.Label != flakegate.Pass && r.Reproduce != "" {
			fmt.Fprintf(w, "    reproduce: %s\n", line(r.Reproduce))
		}
	}
	if folded > 0 {
		fmt.Fprintf(w, "PASS: %d more %s of the suites (not listed here; --json and the reports list every one)\n", folded, plural(folded, "triple", "triples"))
	}
	for _, t := range sum.NewTests {
		fmt.Fprintf(w, "new test %s: %d of %d passed", line(t.Path+"::"+t.Name), t.Passed, t.Runs)
		if t.Flaky() && sum.RejectFlakyNewTests {
			fmt.Fprint(w, " (reject_flaky_new_tests: the patch is rejected)")
		}
		fmt.Fprintln(w)
	}
	for _, si := range sum.Impact {
		fmt.Fprintf(w, "suites[%d] (%s %s) impact: %s\n", si.Suite, line(si.Framework), line(si.Path), line(si.Line()))
	}
	if sum.Isolation == "none" {
		fmt.Fprintln(w, "isolation: none: the attempts ran without the sandbox, so no freeze is granted")
	}
	if n := sum.NewFlakes(); n > 0 && sum.RejectNewFlakes {
		fmt.Fprintf(w, "reject_new_flakes: %d new or unknown flake(s): this base was never seen failing the seed, so the patch may have introduced it\n", n)
	}
	fmt.Fprintf(w, "verdict: %s (base %s, candidate %s)\n", sum.Verdict, flakegate.ShortSHA(sum.Base), flakegate.ShortSHA(sum.Candidate))
}
