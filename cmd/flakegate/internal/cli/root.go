// Package cli holds flakegate's commands, one file per command. Only this
// package knows about flags, environment variables and the process streams.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/spf13/cobra"
)

// Exit codes a CI system can act on.
const (
	ExitOK       = 0 // the check passes (or the command did what was asked)
	ExitReject   = 1 // the gate said no
	ExitUsage    = 2 // usage or configuration error, unreadable input
	ExitInternal = 3 // flakegate itself failed
)

// IO is what a command needs from the process.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads the environment and Environ lists it; tests replace
	// them. Only the CLI reads the environment: the libraries are given
	// what they need (check.Options.Env, NoOverlay).
	Getenv  func(string) string
	Environ func() []string
	// ErrIsTerminal reports whether ErrOut is a terminal (progress bars).
	ErrIsTerminal bool
}

// environ is the environment the command was started with (none when
// the IO was built without one).
func (ios *IO) environ() []string {
	if ios.Environ == nil {
		return nil
	}
	return ios.Environ()
}

// ExitError carries an exit code out of a command without printing.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// NewRootCmd builds the command tree.
func NewRootCmd(ios *IO) *cobra.Command {
	root := &cobra.Command{
		Use:           "flakegate",
		Short:         "The failure-class merge check: only SCHEDULER may enter the freeze ledger",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetIn(ios.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: c.CommandPath(), Message: err.Error(), Hint: "run '" + c.CommandPath() + " --help'"}
	})
	root.AddCommand(
		NewCmdClassify(ios, nil),
		NewCmdVersion(ios, nil),
		NewCmdDigest(ios, nil),
		NewCmdReplay(ios, nil),
		NewCmdCheck(ios, nil),
		NewCmdVerify(ios, nil),
		NewCmdFreeze(ios),
		NewCmdReport(ios, nil),
		NewCmdDB(ios),
		NewCmdVerdict(ios, nil),
		NewCmdDoctor(ios, nil),
		NewCmdInit(ios, nil),
	)
	return root
}

// Main runs flakegate with args and returns the exit code. Errors are
// printed as "Error: ..." and "Try: ..." lines, never as stack traces.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ios := &IO{In: in, Out: out, ErrOut: errOut, Getenv: os.Getenv, Environ: os.Environ, ErrIsTerminal: isTerminal(errOut)}
	root := NewRootCmd(ios)
	started := false
	root.PersistentPreRun = func(*cobra.Command, []string) { started = true }
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !started && flakegate.ErrorCode(err) == flakegate.EINTERNAL {
		// cobra refused the arguments before any command ran.
		err = &flakegate.Error{Code: flakegate.EINVALID, Message: err.Error(), Hint: "run 'flakegate --help'"}
	}
	return exitCode(err, errOut)
}

func exitCode(err error, errOut io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	// A message may quote a name or a line from the repository under test.
	fmt.Fprintf(errOut, "Error: %s\n", termsafe.String(err.Error()))
	if hint := flakegate.ErrorHint(err); hint != "" {
		fmt.Fprintf(errOut, "Try: %s\n", termsafe.String(hint))
	}
	switch flakegate.ErrorCode(err) {
	case flakegate.EINVALID, flakegate.ENOTFOUND, flakegate.ECONFLICT:
		return ExitUsage
	case flakegate.EREJECT:
		return ExitReject
	default:
		return ExitInternal
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// noArgs rejects positional args for commands that take none.
var noArgs = cobra.NoArgs
