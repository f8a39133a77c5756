package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// FreezeRevokeOptions are the inputs of `flakegate freeze revoke`.
type FreezeRevokeOptions struct {
	IO *IO

	Ledger string
	Triple flakegate.Triple
	By     string
	Reason string
}

// NewCmdFreezeRevoke builds `flakegate freeze revoke`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdFreezeRevoke(ios *IO, runF func(*FreezeRevokeOptions) error) *cobra.Command {
	opts := &FreezeRevokeOptions{IO: ios}
	var tf tripleFlags
	cmd := &cobra.Command{
		Use:   "revoke --property P --seed S --fixture-sha256 H --by NAME",
		Short: "Remove a freeze before it runs out",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Ledger = ledgerFlag(ios, c)
			var err error
			if opts.Triple, err = tf.triple("freeze revoke"); err != nil {
				return err
			}
			if opts.By = strings.TrimSpace(opts.By); opts.By == "" {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze revoke", Message: "--by is required",
					Hint: "name who revokes the freeze: --by NAME"}
			}
			if opts.Reason == "" {
				opts.Reason = "revoked by hand"
			}
			if runF != nil {
				return runF(opts)
			}
			return runFreezeRevoke(c.Context(), opts)
		},
	}
	tf.add(cmd)
	cmd.Flags().StringVar(&opts.By, "by", "", "who revokes, for the audit log (required)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, for the audit log")
	return cmd
}

func runFreezeRevoke(ctx context.Context, opts *FreezeRevokeOptions) error {
	s, err := openLedger(ctx, opts.IO, opts.Ledger)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Triple, err = resolveFixturePrefix(ctx, s, opts.Triple, "freeze revoke"); err != nil {
		return err
	}
	if err := s.Remove(ctx, opts.Triple, flakegate.ActionRevoke, opts.By, opts.Reason); err != nil {
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			return &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "freeze revoke", Message: err.Error(),
				Hint: "see 'flakegate freeze list' for the frozen triples"}
		}
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "revoked %s\n", opts.Triple)
	return err
}
