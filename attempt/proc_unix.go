//go:build unix

package attempt

import (
	"errors"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupAttr starts the command as the leader of a new process group, so
// that everything it spawns can be killed with one signal.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to every process in the group pgid. A group that
// is already empty is not an error.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// signalName returns "SIGKILL" style names, "signal N" for the rest.
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
