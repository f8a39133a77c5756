// Command flakegate is the failure-class merge check.
package main

import (
	"os"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/cli"
)

func main() {
	sandbox.MaybeOverlayExec() // flakegate re-executed as the overlay helper ends here
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
