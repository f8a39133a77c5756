package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdReport is being written; it will be replaced by the real command.
func NewCmdReport(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "report",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "report is not built yet")
		},
	}
}
