package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/spf13/cobra"
)

// FreezeVerifyOptions are the inputs of `flakegate freeze verify`.
type FreezeVerifyOptions struct {
	IO *IO

	Ledger string
	By     string
	JSON   bool
}

// NewCmdFreezeVerify builds `flakegate freeze verify`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdFreezeVerify(ios *IO, runF func(*FreezeVerifyOptions) error) *cobra.Command {
	opts := &FreezeVerifyOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "verify [--json]",
		Short: "Check every freeze and the audit log; void what fails (exit 1)",
		Long: `verify checks that every entry's stored record exists, still hashes to its
record_sha256 and still classifies SCHEDULER, that the audit log's chain is
intact, and that replaying the log gives exactly the ledger (an entry edited
by hand differs). It voids every freeze that fails, with an audit event, and
exits 1 when anything was wrong.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Ledger = ledgerFlag(ios, c)
			if runF != nil {
				return runF(opts)
			}
			return runFreezeVerify(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.By, "by", "", "who verifies, for the audit log (default $USER)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

func runFreezeVerify(ctx context.Context, opts *FreezeVerifyOptions) error {
	s, err := openLedger(ctx, opts.IO, opts.Ledger)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := flakegate.VerifyLedger(ctx, s, actor(opts.IO, opts.By, "flakegate freeze verify"))
	if err != nil {
		return err
	}
	if opts.JSON {
		err = printJSON(opts.IO.Out, rep)
	} else {
		err = printVerify(opts.IO.Out, rep)
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

func printVerify(w io.Writer, rep flakegate.VerifyReport) error {
	for _, p := range rep.Problems {
		switch {
		case p.Triple == nil:
			fmt.Fprintf(w, "broken: %s\n", termsafe.Line(p.Reason))
			fmt.Fprintln(w, "  (this stays until the audit log is restored from a backup; until then verify voids every freeze)")
		case p.Voided:
			fmt.Fprintf(w, "void %s: %s\n", termsafe.Line(p.Triple.String()), termsafe.Line(p.Reason))
		default:
			fmt.Fprintf(w, "problem %s: %s\n", termsafe.Line(p.Triple.String()), termsafe.Line(p.Reason))
		}
	}
	verdict := "ok"
	if !rep.OK() {
		verdict = fmt.Sprintf("%d problem(s)", len(rep.Problems))
	}
	_, err := fmt.Fprintf(w, "%s: %d freezes, %d audit lines checked\n", verdict, rep.Freezes, rep.AuditLines)
	return err
}
