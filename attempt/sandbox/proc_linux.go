package sandbox

import "syscall"

// sandboxAttr starts the helper as the leader of a new process group
// that also dies with flakegate: bwrap's --die-with-parent then takes
// the whole sandbox with it.
func sandboxAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
