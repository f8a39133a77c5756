// Command flakegate is the failure-class merge check.
package main

import (
	"os"

	"github.com/flakegate/flakegate/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
