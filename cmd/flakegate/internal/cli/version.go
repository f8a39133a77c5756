package cli

import (
	"fmt"
	"runtime"

	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// VersionOptions are the inputs of `flakegate version`.
type VersionOptions struct {
	IO *IO
}

// NewCmdVersion prints the tool version.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdVersion(ios *IO, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: ios}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the flakegate version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
}

func runVersion(opts *VersionOptions) error {
	_, err := fmt.Fprintf(opts.IO.Out, "flakegate %s (%s, schema %s)\n", flakegate.Version, runtime.Version(), flakegate.Schema)
	return err
}
