package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/digest"
	"github.com/spf13/cobra"
)

// DigestOptions are the inputs of `flakegate digest`.
type DigestOptions struct {
	IO    *IO
	Paths []string
}

// NewCmdDigest builds `flakegate digest`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdDigest(ios *IO, runF func(*DigestOptions) error) *cobra.Command {
	opts := &DigestOptions{IO: ios}
	return &cobra.Command{
		Use:   "digest PATH ...",
		Short: "Print the sha256 digest flakegate pins a fixture or property file with",
		Long: `Prints one line per PATH, "<digest>  <path>", as sha256sum does. A file's digest
is the sha256 of its bytes (the same as sha256sum); a folder's digest is the
flakegate-tree-v1 digest of every file and symlink under it (see digest/FORMAT.md).
Use it to fill fixture_sha256 or to check a pin by hand.

A path that does not exist is reported on stderr and makes the exit status 2; the
other paths are still printed.`,
		Example: "  flakegate digest tests/fixtures/retry tests/props/test_retry_budget.py",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "digest", Message: "no path given", Hint: "flakegate digest PATH ..."}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return runDigest(c.Context(), opts)
		},
	}
}

func runDigest(ctx context.Context, opts *DigestOptions) error {
	worst := ExitOK
	for _, p := range opts.Paths {
		sum, err := digest.Path(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Report and go on, as sha256sum does; exitCode prints the
			// error the way every command does.
			worst = max(worst, exitCode(err, opts.IO.ErrOut))
			continue
		}
		if _, err := fmt.Fprintln(opts.IO.Out, sumLine(sum, p)); err != nil {
			return err
		}
	}
	if worst != ExitOK {
		return &ExitError{Code: worst}
	}
	return nil
}

// sumLine formats a line as sha256sum does, so `sha256sum -c` can check
// the lines of plain files: a name holding a backslash or a newline is
// escaped and the line starts with a backslash.
func sumLine(sum, path string) string {
	if !strings.ContainsAny(path, "\\\n\r") {
		return sum + "  " + path
	}
	esc := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(path)
	return `\` + sum + "  " + esc
}
