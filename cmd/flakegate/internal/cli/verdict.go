package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/postgres"
	"github.com/spf13/cobra"
)

// VerdictOptions are the inputs of `flakegate verdict`: shard summaries
// to merge, or a joined check to read from PostgreSQL.
type VerdictOptions struct {
	IO *IO

	// Summaries are the shards' summary files; CheckID (with Ledger, else
	// $FLAKEGATE_LEDGER) names a joined check instead.
	Summaries       []string
	Ledger, CheckID string
	// Wait waits for the joined check, looking every Poll, and for its
	// first runner at most StartTimeout.
	Wait               bool
	Poll, StartTimeout time.Duration
	JSON, GitHub       bool
	JUnit, Markdown    string
}

// NewCmdVerdict gives the verdict of a check run by many runners: the
// shard summaries merged, or the queued check read from PostgreSQL.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdVerdict(ios *IO, runF func(*VerdictOptions) error) *cobra.Command {
	opts := &VerdictOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "verdict (SUMMARY.json ... | --ledger postgres://... --check-id ID [--wait]) [flags]",
		Short: "Merge the summaries of a sharded check, or read the verdict of a joined one",
		Long: `verdict SUMMARY.json ... merges the summaries of the shards of one check
('check --shard I/N', one file per shard, any order) into the summary the
unsharded check gives: the same JSON as 'check --json', JUnit and Markdown.
Shards that disagree on the base, the candidate or the config digest, a
shard missing or given twice, and a triple missing or doubled are exit 2.

verdict --ledger postgres://... --check-id ID reads a check run by runners
with 'check --join': once every triple is labelled it prints the summary,
each result naming the runner that labelled it (runner_id, runner_host).
Until then it prints the progress on stderr and exits 3 (no verdict yet,
never a pass); with --wait it waits, printing the progress now and then.
An unknown check id is exit 2 (with --wait, once --start-timeout has passed
without a runner creating it).

Exit status: 0 the check passes, 1 a reject label, 2 usage error or
inconsistent shards, 3 flakegate failed or the check is not finished.`,
		Example: `  flakegate verdict --json shard-1/summary.json shard-2/summary.json shard-3/summary.json
  flakegate verdict --ledger "$FLAKEGATE_LEDGER" --check-id "$GITHUB_RUN_ID" --wait --json --junit junit.xml`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Summaries = args
			if err := opts.validate(); err != nil {
				return err
			}
			if opts.CheckID != "" && opts.Ledger == "" {
				opts.Ledger = ios.Getenv("FLAKEGATE_LEDGER")
			}
			if runF != nil {
				return runF(opts)
			}
			return runVerdict(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Ledger, "ledger", "", "the PostgreSQL `DSN` of a joined check (default $FLAKEGATE_LEDGER)")
	fl.StringVar(&opts.CheckID, "check-id", "", "the `ID` the runners of the joined check were started with")
	fl.BoolVar(&opts.Wait, "wait", false, "wait until every triple of the joined check is labelled")
	fl.DurationVar(&opts.Poll, "poll", time.Second, "with --wait: how often to look")
	fl.DurationVar(&opts.StartTimeout, "start-timeout", 5*time.Minute, "with --wait: how long to wait for the first runner to create the check")
	fl.BoolVar(&opts.JSON, "json", false, "print the summary as one JSON object on stdout")
	fl.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	fl.StringVar(&opts.Markdown, "markdown", "", "also write a Markdown report to `FILE`")
	fl.BoolVar(&opts.GitHub, "github", false, "print GitHub annotations and append the Markdown report to $GITHUB_STEP_SUMMARY")
	return cmd
}

// validate refuses a command line that names both or neither of shard
// summaries and a joined check.
func (opts *VerdictOptions) validate() error {
	usage := func(msg string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "verdict", Message: msg, Hint: "run 'flakegate verdict --help'"}
	}
	switch {
	case opts.CheckID != "" && len(opts.Summaries) > 0:
		return usage("give shard summaries or --check-id, not both")
	case opts.CheckID != "":
		return nil
	case opts.Wait || opts.Ledger != "":
		return usage("--ledger and --wait need --check-id ID")
	case len(opts.Summaries) == 0:
		return usage("nothing to merge: give the shard summaries, or --ledger DSN --check-id ID")
	}
	return nil
}

func runVerdict(ctx context.Context, opts *VerdictOptions) error {
	var sum *flakegate.Summary
	var err error
	if opts.CheckID != "" {
		sum, err = queuedVerdict(ctx, opts)
	} else {
		sums := make([]*flakegate.Summary, len(opts.Summaries))
		for i, a := range opts.Summaries {
			if sums[i], err = readSummary(opts.IO, a); err != nil {
				return asVerdictError(err)
			}
		}
		sum, err = fleet.MergeShards(sums, opts.Summaries)
	}
	if err != nil {
		return err
	}
	outs := summaryOutputs{JSON: opts.JSON, GitHub: opts.GitHub, JUnit: opts.JUnit, Markdown: opts.Markdown}
	if err := writeSummaryOutputs(opts.IO, "verdict", outs, sum); err != nil {
		return err
	}
	if sum.Verdict == flakegate.VerdictReject {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

// queuedVerdict reads a joined check's summary from PostgreSQL, waiting
// for it with --wait.
func queuedVerdict(ctx context.Context, opts *VerdictOptions) (*flakegate.Summary, error) {
	ios, spec := opts.IO, opts.Ledger
	if !postgres.IsDSN(spec) {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "verdict --check-id", Message: "a joined check lives in a PostgreSQL ledger",
			Hint: "pass --ledger postgres://... (or set FLAKEGATE_LEDGER) as the runners did"}
	}
	st, err := store.Open(ctx, spec, "")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := store.UseKey(st, ios.Getenv(config.DefaultLedgerKeyEnv)); err != nil {
		return nil, err
	}
	q, ok := st.(flakegate.CheckQueue)
	if !ok {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "verdict", Message: "the store has no check queue"}
	}
	id := strings.TrimSpace(opts.CheckID)
	poll := max(opts.Poll, 50*time.Millisecond)
	var shown time.Time
	started := time.Now()
	for {
		sum, p, err := fleet.QueuedSummary(ctx, q, id)
		if flakegate.ErrorCode(err) == flakegate.EINVALID && opts.Wait && time.Since(started) < opts.StartTimeout {
			// The runners may start after the verdict job.
			if time.Since(shown) >= 10*time.Second {
				fmt.Fprintf(ios.ErrOut, "queue: no check %s yet; waiting for a runner to create it\n", termsafe.Line(id))
				shown = time.Now()
			}
			if err := sleepCtx(ctx, id, poll); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if sum != nil {
			return sum, nil
		}
		if !opts.Wait {
			fmt.Fprintf(ios.ErrOut, "queue: %s\n", termsafe.Line(fleet.ProgressLine(p)))
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "verdict", Path: id,
				Message: fmt.Sprintf("the check is not finished: %d of %d triples labelled; no verdict yet", p.Done, p.Total),
				Hint:    "add --wait to wait for the runners"}
		}
		if time.Since(shown) >= 10*time.Second {
			fmt.Fprintf(ios.ErrOut, "queue: %s\n", termsafe.Line(fleet.ProgressLine(p)))
			shown = time.Now()
		}
		if err := sleepCtx(ctx, id, poll); err != nil {
			return nil, err
		}
	}
}

func sleepCtx(ctx context.Context, id string, d time.Duration) error {
	select {
	case <-ctx.Done():
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "verdict", Path: id, Message: "interrupted while waiting for the runners"}
	case <-time.After(d):
		return nil
	}
}

// asVerdictError names verdict, not report --from, in an error reading a
// summary, and says what to pass.
func asVerdictError(err error) error {
	if e, ok := errors.AsType[*flakegate.Error](err); ok {
		e.Op = "verdict"
		if e.Hint == "" {
			e.Hint = "pass the stdout of 'flakegate check --shard I/N --json' (or the summary.json in its --out folder) of each shard"
		}
	}
	return err
}
