// Package attempt runs one attempt of a property command and supervises
// it: a process in its own group, bounded in wall time and output, plain
// or in the sandbox it is given (package attempt/sandbox, through the
// Sandbox interface). It knows no test framework: what the output means
// is evidence's.
//
// An attempt never uses a shell: a command is an argv. Each attempt runs
// in its own process group, and the whole group is killed when the
// attempt ends, so nothing the command spawned outlives it.
package attempt

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/flakegate/flakegate"
)

// Results of an attempt (the domain's, named here for the attempt's
// callers).
const (
	Pass    = flakegate.ResultPass
	Fail    = flakegate.ResultFail
	Errored = flakegate.ResultError
	Timeout = flakegate.ResultTimeout
)

// DefaultTailBytes is how much of an attempt's output Outcome.Tail keeps.
const DefaultTailBytes = 8 << 10

// drainGrace bounds how long Run waits for output after the process group
// is gone: a process that left the group (setsid) may hold the pipe open.
const drainGrace = 500 * time.Millisecond

// Command is one attempt to run.
type Command struct {
	// Argv is the command and its arguments. An Argv[0] without a slash
	// is looked up in flakegate's own PATH (not Env's); a relative one
	// with a slash is relative to Dir.
	Argv []string
	// Dir is the working directory; "" is the current one.
	Dir string
	// Env is the environment; nil inherits flakegate's own.
	Env []string
	// WallBudget kills the attempt after this long; 0 means no budget
	// (the context still cancels it).
	WallBudget time.Duration
	// TailBytes is how much output Outcome.Tail keeps; 0 means
	// DefaultTailBytes.
	TailBytes int
	// NoTestMarkers turn an exit 0 into an error when one of them occurs
	// anywhere in the output; none, no such check. The attempt knows no
	// test framework: the markers of go test and pytest are evidence's
	// (evidence.NoTestMarkers).
	NoTestMarkers []string
	// Output, if set, also receives the output (stdout and stderr
	// interleaved) as it is produced. Write errors stop the copy to Output
	// only, never the attempt.
	Output io.Writer
	// Sandbox, if set, runs the command inside bubblewrap
	// (attempt/sandbox); Argv[0] is then looked up in Env's PATH inside
	// the sandbox, and a relative Dir is refused.
	Sandbox Sandbox
	// KeepCacheOnPass leaves what the attempt read in the page cache when
	// it exits 0. Otherwise its memory cgroup is reclaimed before Run
	// returns (attempt/sandbox/cgroup_linux.go), so that an attempt that follows cannot
	// tell it ran by what it left cached. The check sets it for candidate
	// attempts: an exit 0 (a pass, or an error) ends its triple, so no
	// retry follows that could tell, and a harmless candidate keeps its
	// warm caches.
	KeepCacheOnPass bool
	// KeepCache, when set, decides instead of KeepCacheOnPass, from the
	// exit code, once the command and everything it started ended and
	// its output was read: a batch whose known answer fails exits 1 when
	// every member passed.
	KeepCache func(exitCode int) bool
}

// Seconds is d in seconds, to the millisecond, as records and summaries
// write wall times.
func Seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// Outcome is what an attempt did.
type Outcome struct {
	Result   string // Pass, Fail, Errored or Timeout
	ExitCode int    // -1 unless the command exited by itself
	Signal   string // the signal that ended it ("SIGKILL"), if any
	Started  time.Time
	Wall     time.Duration
	// Tail is the end of the output, stdout and stderr interleaved.
	Tail string
	// OutputBytes is the size of the whole output.
	OutputBytes int64
	// Reason says why the result is Errored or Timeout.
	Reason string
	// Limit names the sandbox limit the attempt reached ("memory limit
	// 4GiB"), "" if none; its Result is then Timeout, as for the wall
	// budget.
	Limit string
	// KeepErr says why a prepare's (sandbox.Sandbox.Persist) layers could not be
	// kept after it exited 0; it wraps ENOSPC when the disk is full.
	KeepErr error
}

// limitPoll is how often a running attempt's cgroup counters are read.
const limitPoll = 100 * time.Millisecond

// Run runs one attempt and waits for it and everything it spawned to end.
// It never returns an error: a command that cannot start is an Errored
// outcome with the reason.
//
// Results: exit 0 is Pass (Errored if a no-test marker occurs in the
// output), exit 1 is Fail, the wall budget or ctx ending first is Timeout,
// and any other exit code, a signal or a failure to start is Errored.
//
// Run is three steps: build starts the command, supervise waits for it
// under its budget and limits and kills what it leaves, collect turns
// what happened into the outcome.
func Run(ctx context.Context, c Command) Outcome {
	a, failed := build(ctx, c)
	if a == nil {
		return failed
	}
	if a.sr != nil {
		defer a.sr.Cleanup() // after the wait in supervise
	}
	a.supervise(ctx)
	return a.collect(ctx)
}

// attempt is one started command: its process (the leader of its own
// process group), the pipe that carries its output and what reads it, and
// its sandbox (nil without one).
type attempt struct {
	c    Command
	out  Outcome
	cmd  *exec.Cmd
	pr   *os.File // the read end of the output pipe, stdout and stderr in order
	sr   Sandboxed
	tail *tailBuffer
	scan *markerScanner

	waitErr    error  // the leader's wait
	killReason string // why supervise killed the group, "" if it did not
}

// build checks c and starts it: inside its sandbox, or as the leader of
// a process group of its own with its output on one pipe. When nothing
// started it returns nil and the Errored or Timeout outcome that says why.
func build(ctx context.Context, c Command) (*attempt, Outcome) {
	out := Outcome{ExitCode: -1, Started: time.Now()}
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		out.Result, out.Reason = Errored, "the command is empty"
		return nil, out
	}
	if err := ctx.Err(); err != nil {
		out.Result, out.Reason = Timeout, "cancelled before start: "+context.Cause(ctx).Error()
		return nil, out
	}
	a := &attempt{c: c, tail: &tailBuffer{max: c.TailBytes}}
	if a.tail.max <= 0 {
		a.tail.max = DefaultTailBytes
	}
	a.scan = newMarkerScanner(c.NoTestMarkers)

	if c.Sandbox != nil {
		out.Started = time.Now()
		sr, err := c.Sandbox.Start(&a.c)
		if err != nil {
			out.Result, out.Reason = Errored, err.Error() // the sandbox says what it could not start
			return nil, out
		}
		if sr != nil {
			a.sr = sr
			a.cmd, a.pr = sr.Process()
			if r, ok := sr.(interface{ Ready() time.Time }); ok && !r.Ready().IsZero() {
				out.Started = r.Ready() // what the sandbox made first (a fresh copy) is not the test's time, nor its budget's
			}
			a.out = out
			return a, Outcome{}
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		out.Result, out.Reason = Errored, "cannot create the output pipe: "+err.Error()
		return nil, out
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe keeps the two streams in order
	cmd.SysProcAttr = groupAttr()
	out.Started = time.Now()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		out.Result, out.Reason = Errored, "cannot start "+strconv.Quote(cmd.Args[0])+": "+startError(err)
		return nil, out
	}
	a.cmd, a.pr, a.out = cmd, pr, out
	return a, Outcome{}
}

// supervise reads the attempt's output while it runs, kills its process
// group at the wall budget, a sandbox limit or the end of ctx, and waits
// for the leader. Whatever the leader left behind in its group goes with
// it; the output is read to its end, or until drainGrace after the group
// is gone.
func (a *attempt) supervise(ctx context.Context) {
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		drain(a.pr, a.tail, a.scan, a.c.Output)
	}()

	// The killer ends the group when watch says so, unless the leader
	// has exited first.
	pgid := a.cmd.Process.Pid
	var (
		mu     sync.Mutex
		exited bool
	)
	stop := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		reason := a.watch(ctx, stop)
		if reason == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !exited {
			a.killReason = reason
			_ = killGroup(pgid)
		}
	}()

	reaped := false
	if waitNoReap(pgid) != nil {
		a.waitErr, reaped = a.cmd.Wait(), true
	}
	a.out.Wall = time.Since(a.out.Started)
	mu.Lock()
	exited = true
	mu.Unlock()
	close(stop)
	<-killerDone
	_ = killGroup(pgid)
	if !reaped {
		a.waitErr = a.cmd.Wait()
	}

	select {
	case <-readDone:
	case <-time.After(drainGrace):
		_ = a.pr.SetReadDeadline(time.Now())
		<-readDone
	}
	a.pr.Close()
}

// watch waits until the attempt must end and says why: its wall budget
// is spent, ctx ended, or a sandbox limit was reached. It returns "" when
// stop closes first (the leader exited).
func (a *attempt) watch(ctx context.Context, stop <-chan struct{}) string {
	var budget <-chan time.Time
	if a.c.WallBudget > 0 {
		t := time.NewTimer(time.Until(a.out.Started.Add(a.c.WallBudget)))
		defer t.Stop()
		budget = t.C
	}
	var poll <-chan time.Time
	if a.sr != nil && a.sr.Polled() {
		t := time.NewTicker(limitPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-stop:
			return ""
		case <-budget:
			return "wall budget " + a.c.WallBudget.String() + " exceeded"
		case <-ctx.Done():
			return "cancelled: " + context.Cause(ctx).Error()
		case <-poll:
			if lim := a.sr.Limit(); lim != "" {
				return lim + " reached"
			}
		}
	}
}

// collect turns what supervise saw into the outcome: the exit, the
// signal or the kill, the output's tail and size, and for a sandboxed
// attempt what bwrap reported and the limit it reached.
func (a *attempt) collect(ctx context.Context) Outcome {
	out := a.out
	out.Tail = a.tail.String()
	out.OutputBytes = a.tail.total
	classify(&out, a.cmd.ProcessState, a.waitErr, a.killReason, a.scan.found)
	if a.sr != nil {
		a.sr.Settle(ctx, &out)
	}
	return out
}

func classify(out *Outcome, ps *os.ProcessState, waitErr error, killReason, marker string) {
	if ps == nil {
		out.Result, out.Reason = Errored, "wait: "+waitErr.Error()
		return
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		out.Signal = signalName(ws.Signal())
		if killReason != "" {
			out.Result, out.Reason = Timeout, killReason
			return
		}
		out.Result, out.Reason = Errored, "killed by "+out.Signal
		return
	}
	out.ExitCode = ps.ExitCode()
	switch out.ExitCode {
	case 0:
		if marker != "" {
			out.Result, out.Reason = Errored, "no test executed: the output says "+strconv.Quote(marker)
			return
		}
		out.Result = Pass
	case 1:
		out.Result = Fail
	default:
		out.Result, out.Reason = Errored, "exit code "+strconv.Itoa(out.ExitCode)
	}
}

// drain copies the pipe into the tail, the marker scanner and w until EOF
// or the read deadline.
func drain(r io.Reader, tail *tailBuffer, scan *markerScanner, w io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			tail.Write(buf[:n])
			scan.Write(buf[:n])
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					w = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func startError(err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return "not found in PATH"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
