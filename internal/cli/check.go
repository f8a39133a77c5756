package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdCheck is being written; it will be replaced by the real command.
func NewCmdCheck(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "check",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "check is not built yet")
		},
	}
}
