package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdVerify is being written; it will be replaced by the real command.
func NewCmdVerify(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "verify",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "verify is not built yet")
		},
	}
}
