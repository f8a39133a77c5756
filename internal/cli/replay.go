package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdReplay is being written; it will be replaced by the real command.
func NewCmdReplay(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "replay",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "replay is not built yet")
		},
	}
}
