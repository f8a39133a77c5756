package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdDigest is being written; it will be replaced by the real command.
func NewCmdDigest(io *IO) *cobra.Command {
	return &cobra.Command{
		Use: "digest",
		RunE: func(c *cobra.Command, args []string) error {
			return flakegate.Errorf(flakegate.EINTERNAL, "digest is not built yet")
		},
	}
}
