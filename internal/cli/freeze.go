package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdFreeze is being written; it will be replaced by the real command.
func NewCmdFreeze(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "freeze",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "freeze is not built yet")
		},
	}
}
