package cli

import (
	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// NewCmdClassify is being written.
func NewCmdClassify(io *IO) *cobra.Command {
	return &cobra.Command{Use: "classify", RunE: func(c *cobra.Command, args []string) error {
		return flakegate.Errorf(flakegate.EINTERNAL, "classify is not built yet")
	}}
}
