package attempt

import (
	"context"
	"os"
	"os/exec"
)

// Sandbox starts an attempt's command inside a sandbox (the one
// implementation is package attempt/sandbox). Run supervises what it
// started as it supervises a plain process: its group, its wall budget,
// its output.
type Sandbox interface {
	// Start starts c in the sandbox. It returns nil and no error when
	// there is no sandbox (a nil one): c then runs as a plain process.
	Start(c *Command) (Sandboxed, error)
}

// Sandboxed is one attempt's sandbox while it runs.
type Sandboxed interface {
	// Process is the started leader of the attempt's process group and
	// the read end of its output (stdout and stderr in order).
	Process() (*exec.Cmd, *os.File)
	// Polled says whether Limit must be read while the attempt runs.
	Polled() bool
	// Limit names a limit the attempt reached so far, "" if none.
	Limit() string
	// Settle corrects the outcome once the process ended, from what the
	// sandbox reported: its own exit, the limit reached, what a prepare
	// could not keep.
	Settle(ctx context.Context, out *Outcome)
	// Cleanup removes what the sandbox made for the attempt; Run calls
	// it last.
	Cleanup()
}
