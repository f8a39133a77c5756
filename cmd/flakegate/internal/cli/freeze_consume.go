package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/spf13/cobra"
)

// FreezeConsumeOptions are the inputs of `flakegate freeze consume`.
type FreezeConsumeOptions struct {
	IO *IO

	Ledger string
	Triple flakegate.Triple
	// PropertySHA256 is the property file's digest now; "" digests it in
	// the working tree when the command runs.
	PropertySHA256 string
	By             string
	JSON           bool
}

// NewCmdFreezeConsume builds `flakegate freeze consume`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdFreezeConsume(ios *IO, runF func(*FreezeConsumeOptions) error) *cobra.Command {
	opts := &FreezeConsumeOptions{IO: ios}
	var tf tripleFlags
	cmd := &cobra.Command{
		Use:   "consume --property P --seed S --fixture-sha256 H [--property-sha256 H2]",
		Short: "Count one skip of a frozen triple: exit 0 to skip it, 1 to run it",
		Long: `consume is for those who drive their own runner. It exits 0 when the
triple may be skipped (the skip is counted), 1 when it must run. A freeze
that fails a check (its record changed, or the property file did) is voided.

Without --property-sha256 the property file is digested in the working tree
of the repository in the current directory.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Ledger = ledgerFlag(ios, c)
			var err error
			if opts.Triple, err = tf.triple("freeze consume"); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runFreezeConsume(c.Context(), opts)
		},
	}
	tf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&opts.PropertySHA256, "property-sha256", "", "the property file's digest now (default: digest it in the working tree)")
	fl.StringVar(&opts.By, "by", "", "who skips, for the audit log (default $USER)")
	fl.BoolVar(&opts.JSON, "json", false, "print the decision as JSON")
	return cmd
}

func runFreezeConsume(ctx context.Context, opts *FreezeConsumeOptions) error {
	t := opts.Triple
	propertySHA := opts.PropertySHA256
	if propertySHA == "" {
		var err error
		if propertySHA, err = propertyDigest(ctx, t.PropertyPath); err != nil {
			return err
		}
	}
	s, err := openLedger(ctx, opts.IO, opts.Ledger)
	if err != nil {
		return err
	}
	defer s.Close()
	if t, err = resolveFixturePrefix(ctx, s, t, "freeze consume"); err != nil {
		return err
	}
	d, err := flakegate.Skip(ctx, s, t, propertySHA, actor(opts.IO, opts.By, "flakegate freeze consume"))
	if err != nil {
		return err
	}
	out := opts.IO.Out
	switch {
	case opts.JSON:
		err = printJSON(out, d)
	case d.Skipped:
		_, err = fmt.Fprintf(out, "skip %s: %s\n", termsafe.Line(t.String()), termsafe.Line(d.Reason))
	default:
		_, err = fmt.Fprintf(out, "run %s: %s\n", termsafe.Line(t.String()), termsafe.Line(d.Reason))
	}
	if err != nil {
		return err
	}
	if !d.Skipped {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

// propertyDigest digests the property file at the top of the current
// repository's working tree (the current directory outside a repository).
func propertyDigest(ctx context.Context, property string) (string, error) {
	root, err := (&git.Client{}).TopLevel(ctx)
	if err != nil {
		root = "."
	}
	sha, err := digest.Path(ctx, filepath.Join(root, filepath.FromSlash(property)))
	if err != nil {
		return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze consume", Message: "cannot digest the property file", Err: err,
			Hint: "run in the repository, or pass --property-sha256 H"}
	}
	return sha, nil
}
