//go:build unix

package sandbox

import (
	"errors"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// processAlive reports whether a process pid exists (signal 0 reaches it,
// or it exists but belongs to someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// signalName returns "SIGKILL" style names, "signal N" for the rest.
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
