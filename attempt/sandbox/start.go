package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

var _ attempt.Sandbox = (*Sandbox)(nil)

// Start starts c in the sandbox, in c.Dir (a host path inside Tree; ""
// is Tree itself), for attempt.Run to supervise. A nil s is no sandbox:
// it returns nil, and c runs as a plain process.
func (s *Sandbox) Start(c *attempt.Command) (attempt.Sandboxed, error) {
	if s == nil {
		return nil, nil
	}
	dir := c.Dir
	if dir == "" {
		dir = s.Tree
	}
	if !filepath.IsAbs(dir) || !filepath.IsAbs(s.Tree) || !filepath.IsAbs(s.Bwrap) {
		return nil, errors.New("the sandbox needs absolute paths for bwrap, the tree and the working directory")
	}
	s.sweepPageCache() // no memory cgroup: what an earlier attempt loaded leaves the cache (pagecache_linux.go)
	swept := time.Now()
	sr, err := s.start(dir, c)
	if err != nil {
		return nil, fmt.Errorf("cannot start the attempt's sandbox: %w", err)
	}
	if sr.ready.IsZero() {
		sr.ready = swept // the sweep is flakegate's time, not the attempt's
	}
	return sr, nil
}

// drainGrace bounds how long an ended attempt waits for what bwrap and
// the helper report.
const drainGrace = 500 * time.Millisecond

// Process is the helper (the leader of the attempt's group) and the read
// end of the attempt's output.
func (r *sandboxRun) Process() (*exec.Cmd, *os.File) { return r.cmd, r.pr }

// Polled says whether the attempt has a cgroup whose limits are read
// while it runs.
func (r *sandboxRun) Polled() bool { return r.cg != nil }

// Limit names a cgroup limit the attempt reached so far, "" if none.
func (r *sandboxRun) Limit() string { return r.hit() }

// Ready is when the attempt's own time began: after the page-cache
// sweep, and after its fresh copy was made.
func (r *sandboxRun) Ready() time.Time { return r.ready }

// Cleanup removes the attempt's cgroup, layer folder and fresh copy.
func (r *sandboxRun) Cleanup() { r.cleanup() }

// Settle corrects the outcome of the ended attempt: from what bwrap
// reported for the command, and the limit it reached (a limit decides
// the outcome, whatever the exit: the attempt did not run to its own end
// within its bounds); and it says what a prepare could not keep.
func (r *sandboxRun) Settle(ctx context.Context, out *attempt.Outcome) {
	sandboxed(out, r.status)
	if lim := r.finish(); lim != "" && ctx.Err() == nil {
		out.Result, out.Limit, out.Reason = attempt.Timeout, lim, lim+" reached"
		out.ExitCode = -1
	}
	out.KeepErr = r.keepErr()
}

// sandboxed corrects an outcome classified from bwrap's own exit: bwrap
// exits 1 when it cannot build the sandbox, which must not read as a
// failing test. Only an exit code bwrap reports for the command counts.
func sandboxed(out *attempt.Outcome, status chan bwrapStatus) {
	if out.Result == attempt.Timeout || out.Signal != "" {
		return // bwrap itself was killed: the budget, the context or a signal
	}
	var st bwrapStatus
	select {
	case st = <-status:
	case <-time.After(drainGrace):
	}
	if !st.exited {
		out.Result, out.ExitCode = attempt.Errored, -1
		out.Reason = "the sandbox (bwrap) did not run the command; its output ends: " + lastLine(out.Tail)
		return
	}
	if st.exitCode != out.ExitCode {
		out.Result, out.Reason = attempt.Errored, "bwrap exited "+strconv.Itoa(out.ExitCode)+" but reported "+strconv.Itoa(st.exitCode)+" for the command"
		out.ExitCode = -1
		return
	}
	// 126 and 127 are a command that could not be run (not found, not
	// executable), as the shell and env(1) that start it say: the reason
	// quotes their message.
	if st.exitCode == 126 || st.exitCode == 127 {
		out.Result = attempt.Errored
		out.Reason = "the command could not be run (exit " + strconv.Itoa(st.exitCode) + "): " + lastLine(out.Tail)
		return
	}
	// bwrap reports a command killed by signal N as exit 128+N, as a
	// shell does; a real exit code that high is an error all the same.
	if n := st.exitCode - 128; n > 0 && n < 65 {
		out.Result, out.ExitCode = attempt.Errored, -1
		out.Signal = signalName(syscall.Signal(n))
		out.Reason = "killed by " + out.Signal + " (the sandbox reports exit " + strconv.Itoa(st.exitCode) + ")"
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
