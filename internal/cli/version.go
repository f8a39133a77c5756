package cli

import (
	"fmt"
	"runtime"

	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdVersion prints the tool version.
func NewCmdVersion(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the flakegate version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(io.Out, "flakegate %s (%s, schema %s)\n", flakegate.Version, runtime.Version(), flakegate.Schema)
			return err
		},
	}
}
