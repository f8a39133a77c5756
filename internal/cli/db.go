package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdDB is being written; it will be replaced by the real command.
func NewCmdDB(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "db",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "db is not built yet")
		},
	}
}
