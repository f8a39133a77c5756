// Package flock takes the exclusive file locks flakegate's checks share
// (the file store's lock, the worktree lock, the replay locks): a wait
// that says on stderr who it waits for, ends when the context ends and
// gives up at a deadline, so no lock can hang a check for ever.
package flock

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flakegate/flakegate"
)

// Options tune one Lock call.
type Options struct {
	// What names the lock in messages ("the ledger lock").
	What string
	// Timeout gives up after this long with an EINTERNAL error; 0 waits
	// until the context ends.
	Timeout time.Duration
	// Wait, if set, receives one line when the wait lasts longer than
	// Notice: what is waited for, the holder's pid and since when.
	Wait io.Writer
	// Notice is how long a wait stays silent; 0 means one second (two
	// goroutines of one check contend for a few milliseconds all the time).
	Notice time.Duration
	// Op names the operation in errors ("check", "open ledger").
	Op string
}

// poll bounds how long a released lock stays unnoticed.
const poll = 20 * time.Millisecond

// Lock opens path (creating it) and takes an exclusive flock on it. The
// lock belongs to the returned file: closing it releases the lock, and a
// process that dies releases it with its files. A context that ends first
// returns context.Cause(ctx) wrapped in an EINTERNAL error ("interrupted");
// the deadline returns an EINTERNAL error naming the holder.
func Lock(ctx context.Context, path string, o Options) (*os.File, error) {
	if o.What == "" {
		o.What = "the lock " + path
	}
	if o.Op == "" {
		o.Op = "lock"
	}
	if o.Notice <= 0 {
		o.Notice = time.Second
	}
	if err := ctx.Err(); err != nil {
		return nil, interrupted(o, path, ctx)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: o.Op, Path: path, Message: "cannot open " + o.What, Err: err}
	}
	start := time.Now()
	var deadline <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	told := false
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: o.Op, Path: path, Message: "cannot take " + o.What, Err: err}
		}
		if !told && o.Wait != nil && time.Since(start) >= o.Notice {
			told = true
			limit := "until interrupted"
			if o.Timeout > 0 {
				limit = "at most " + o.Timeout.String() + " (--lock-timeout)"
			}
			fmt.Fprintf(o.Wait, "waiting for another check (%s) holding %s, since %s; waiting %s\n",
				Holder(f), o.What, start.Format("15:04:05"), limit)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, interrupted(o, path, ctx)
		case <-deadline:
			holder := Holder(f)
			f.Close()
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: o.Op, Path: path,
				Message: fmt.Sprintf("gave up after %s waiting for %s, held by %s", o.Timeout, o.What, holder),
				Hint:    "let that process finish, or end it if it is stuck; --lock-timeout sets how long to wait"}
		case <-tick.C:
		}
	}
}

func interrupted(o Options, path string, ctx context.Context) error {
	return &flakegate.Error{Code: flakegate.EINTERNAL, Op: o.Op, Path: path,
		Message: "interrupted while waiting for " + o.What, Err: context.Cause(ctx)}
}

// Holder describes the process holding the flock on f's file, from
// /proc/locks: "pid N, <command>", or "pid unknown" when the kernel does
// not say (another pid namespace, or not Linux).
func Holder(f *os.File) string {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return "pid unknown"
	}
	raw, err := os.ReadFile("/proc/locks")
	if err != nil {
		return "pid unknown"
	}
	// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
	ino := strconv.FormatUint(st.Ino, 10)
	for _, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		id := strings.Split(fields[5], ":")
		if len(id) != 3 || id[2] != ino || !sameDev(id[0], id[1], st.Dev) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		desc := "pid " + fields[4]
		if comm, err := os.ReadFile("/proc/" + fields[4] + "/comm"); err == nil {
			desc += ", " + strings.TrimSpace(string(comm))
		}
		return desc
	}
	return "pid unknown"
}

// sameDev compares /proc/locks' hex major:minor with a stat device number.
func sameDev(major, minor string, dev uint64) bool {
	ma, err1 := strconv.ParseUint(major, 16, 32)
	mi, err2 := strconv.ParseUint(minor, 16, 32)
	if err1 != nil || err2 != nil {
		return false
	}
	// Linux's encoding of dev_t (glibc's gnu_dev_major/minor).
	gotMa := (dev>>8)&0xfff | (dev>>32)&^0xfff
	gotMi := dev&0xff | (dev>>12)&^0xff
	return ma == gotMa && mi == gotMi
}

// Share takes a shared flock on path, a file or folder that must exist,
// waiting while an exclusive one is held (a collector removing it) until
// ctx ends. Closing the returned file releases it.
func Share(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// TryExclusive takes an exclusive flock on path, a file or folder that
// must exist, if no one holds a lock on it: ok is false when someone does.
func TryExclusive(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
	case nil:
		return f, true, nil
	case syscall.EWOULDBLOCK:
		f.Close()
		return nil, false, nil
	default:
		f.Close()
		return nil, false, err
	}
}
