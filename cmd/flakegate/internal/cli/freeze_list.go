package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/spf13/cobra"
)

// FreezeListOptions are the inputs of `flakegate freeze list`.
type FreezeListOptions struct {
	IO *IO

	Ledger string
	JSON   bool
}

// NewCmdFreezeList builds `flakegate freeze list`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdFreezeList(ios *IO, runF func(*FreezeListOptions) error) *cobra.Command {
	opts := &FreezeListOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the freezes, sorted by triple",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Ledger = ledgerFlag(ios, c)
			if runF != nil {
				return runF(opts)
			}
			return runFreezeList(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array of entries")
	return cmd
}

func runFreezeList(ctx context.Context, opts *FreezeListOptions) error {
	s, err := openLedger(ctx, opts.IO, opts.Ledger)
	if err != nil {
		return err
	}
	defer s.Close()
	fs, err := s.ListFreezes(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		if fs == nil {
			fs = []flakegate.Freeze{}
		}
		return printJSON(opts.IO.Out, fs)
	}
	return printFreezes(opts.IO.Out, fs)
}

func printFreezes(w io.Writer, fs []flakegate.Freeze) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "no freezes")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPERTY\tSEED\tFIXTURE\tRUNS LEFT\tOWNER\tRECORD\tGRANTED")
	for _, f := range fs {
		prop := f.PropertyPath
		if f.Name != "" {
			prop += "::" + f.Name
		}
		// A cell is on one line with no tab of its own, and shows a
		// control sequence as text.
		cell := func(s string) string { return strings.ReplaceAll(termsafe.Line(s), "\t", `\t`) }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", cell(prop), cell(f.Seed.String()), flakegate.ShortSHA(f.FixtureSHA256),
			f.ExpiresAfterRuns, cell(f.Owner), flakegate.ShortSHA(f.RecordSHA256), f.GrantedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
