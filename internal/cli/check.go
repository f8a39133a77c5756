package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/store"
	"github.com/spf13/cobra"
)

// DefaultLockTimeout is how long check waits for a lock another check
// holds before it gives up with exit 3.
const DefaultLockTimeout = 5 * time.Minute

// checkFlags are the command line of `flakegate check`.
type checkFlags struct {
	base, candidate, config, out, ledger string
	json, github, noReplayCache          bool
	junit, markdown, freezeOwner         string
	lockTimeout                          time.Duration
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
	fl.DurationVar(&f.lockTimeout, "lock-timeout", DefaultLockTimeout, "give up (exit 3) after waiting this long for a lock another check holds")
	return cmd
}

func runCheck(ctx context.Context, io *IO, f *checkFlags) error {
	spec := f.ledger
	if spec == "" {
		spec = io.Getenv("FLAKEGATE_LEDGER")
	}
	ledgerPath := ""
	var secrets []string
	if spec != "" && !store.IsDSN(spec) {
		ledgerPath = spec
	} else if spec != "" {
		secrets = append(secrets, spec)
	}
	if f.lockTimeout < 0 {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "check --lock-timeout", Message: f.lockTimeout.String() + " is negative",
			Hint: "pass a duration such as 5m, or 0 to wait until interrupted"}
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
		Secrets:       secrets,
		LockTimeout:   f.lockTimeout,
		OpenStore: func(ctx context.Context, commonDir string) (flakegate.Store, error) {
			s, err := store.Open(ctx, spec, commonDir)
			if fs, ok := s.(*filestore.Store); ok {
				fs.LockTimeout, fs.LockWait = f.lockTimeout, io.ErrOut
			}
			return s, err
		},
		Progress:           io.ErrOut,
		ProgressIsTerminal: io.ErrIsTerminal,
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

// printCheckText writes one line per triple, the command that replays a
// reject or SCHEDULER seed, and the verdict.
func printCheckText(w io.Writer, sum *flakegate.Summary) {
	for _, r := range sum.Results {
		label := string(r.Label)
		if r.Skipped {
			label += " (frozen)"
		}
		fmt.Fprintf(w, "%-21s %s seed %s", label, r.PropertyPath, r.Seed.String())
		if r.Record != "" {
			fmt.Fprintf(w, "  %s", r.Record)
		}
		fmt.Fprintln(w)
		if !r.Skipped && r.Label != flakegate.Pass && r.Reproduce != "" {
			fmt.Fprintf(w, "    reproduce: %s\n", r.Reproduce)
		}
	}
	if sum.Isolation == "none" {
		fmt.Fprintln(w, "isolation: none: the attempts ran without the sandbox, so no freeze is granted")
	}
	fmt.Fprintf(w, "verdict: %s (base %s, candidate %s)\n", sum.Verdict, short12(sum.Base), short12(sum.Candidate))
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
