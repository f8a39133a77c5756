package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/internal/store"
	"github.com/spf13/cobra"
)

// checkFlags are the command line of `flakegate check`.
type checkFlags struct {
	base, candidate, config, out, ledger string
	json, github, noReplayCache          bool
	explainWatch, runContaminated        bool
	junit, markdown, freezeOwner         string
}

// NewCmdCheck is the failure-class merge check.
func NewCmdCheck(io *IO) *cobra.Command {
	var f checkFlags
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
			return runCheck(c.Context(), io, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "base revision the candidate is measured against (required)")
	fl.StringVar(&f.candidate, "candidate", "HEAD", "candidate revision")
	fl.StringVar(&f.config, "config", "flakegate.yaml", "config path in the repository, read at the base revision")
	fl.StringVar(&f.out, "out", "", "folder for records, transcripts and summary.json (default <git common dir>/flakegate/out/<candidate sha>)")
	fl.StringVar(&f.ledger, "ledger", "", "ledger folder or postgres:// DSN (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
	fl.BoolVar(&f.json, "json", false, "print the summary as one JSON object on stdout")
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.StringVar(&f.markdown, "markdown", "", "also write a Markdown report to `FILE`")
	fl.BoolVar(&f.github, "github", false, "print GitHub annotations and append the Markdown report to $GITHUB_STEP_SUMMARY")
	fl.BoolVar(&f.noReplayCache, "no-replay-cache", false, "replay every seed on base, neither reading nor writing the replay cache")
	fl.StringVar(&f.freezeOwner, "freeze-owner", "", "grant a freeze, owned by `NAME`, to every SCHEDULER result")
	fl.BoolVar(&f.explainWatch, "explain-watch", false, "list what each property of the base config watches, and exit without running anything")
	fl.BoolVar(&f.runContaminated, "run-contaminated", false, "run the attempts of triples the diff alone makes CONTAMINATED (the label stays)")
	return cmd
}

func runCheck(ctx context.Context, io *IO, f *checkFlags) error {
	spec := f.ledger
	if spec == "" {
		spec = io.Getenv("FLAKEGATE_LEDGER")
	}
	ledgerPath := ""
	if spec != "" && !store.IsDSN(spec) {
		ledgerPath = spec
	}
	opts := check.Options{
		Dir:           ".",
		Base:          f.base,
		Candidate:     f.candidate,
		ConfigPath:    f.config,
		OutDir:        f.out,
		LedgerPath:    ledgerPath,
		NoReplayCache: f.noReplayCache,
		FreezeOwner:   strings.TrimSpace(f.freezeOwner),
		By:            "flakegate check",
		OpenStore: func(ctx context.Context, commonDir string) (flakegate.Store, error) {
			return store.Open(ctx, spec, commonDir)
		},
		Progress:           io.ErrOut,
		ProgressIsTerminal: io.ErrIsTerminal,
		RunContaminated:    f.runContaminated,
	}
	if f.explainWatch {
		return explainWatch(ctx, io, f, opts)
	}
	sum, err := check.Run(ctx, opts)
	if err != nil {
		return err
	}
	if err := writeCheckOutputs(io, f, sum); err != nil {
		return err
	}
	if sum.Verdict == flakegate.VerdictReject {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

// writeCheckOutputs prints the summary and writes the requested reports.
func writeCheckOutputs(ios *IO, f *checkFlags, sum *flakegate.Summary) error {
	if f.json {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printCheckText(ios.Out, sum)
	}
	if err := writeReportFiles(ios, "check", f.junit, f.markdown, sum); err != nil {
		return err
	}
	if f.github {
		// Workflow commands are read from stdout; with --json stdout is the
		// summary, so they go to stderr, which the runner reads too.
		w := ios.Out
		if f.json {
			w = ios.ErrOut
		}
		return writeGitHub(ios, "check --github", w, sum)
	}
	return nil
}

// explainWatch prints what each property watches (JSON with --json).
func explainWatch(ctx context.Context, io *IO, f *checkFlags, opts check.Options) error {
	lists, err := check.ExplainWatch(ctx, opts)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(lists)
	}
	for _, wl := range lists {
		fw := ""
		if wl.Framework != "" {
			fw = " (" + wl.Framework + ")"
		}
		fmt.Fprintf(io.Out, "%s%s\n", wl.Property, fw)
		for _, w := range wl.Watch {
			fmt.Fprintf(io.Out, "  %-40s %s\n", w.Glob, w.Why)
		}
	}
	return nil
}

// printCheckText writes one line per triple, the command that replays a
// reject or SCHEDULER seed, and the verdict.
func printCheckText(w io.Writer, sum *flakegate.Summary) {
	for _, r := range sum.Results {
		label := string(r.Label)
		if r.Skipped {
			label += " skipped (frozen)"
		}
		seed := r.Seed.String()
		if r.SeedOrigin != "" {
			seed += " (" + r.SeedOrigin + ")"
		}
		fmt.Fprintf(w, "%-28s %s seed %s", label, r.ID(), seed)
		if r.Record != "" {
			fmt.Fprintf(w, "  %s", r.Record)
		}
		fmt.Fprintln(w)
		if !r.Skipped && r.Label != flakegate.Pass && r.Reason != "" {
			fmt.Fprintf(w, "    reason: %s\n", r.Reason)
		}
		if !r.Skipped && r.Label != flakegate.Pass && r.Reproduce != "" {
			fmt.Fprintf(w, "    reproduce: %s\n", r.Reproduce)
		}
	}
	fmt.Fprintf(w, "verdict: %s (base %s, candidate %s)\n", sum.Verdict, short12(sum.Base), short12(sum.Candidate))
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
