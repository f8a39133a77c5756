package runner

import (
	"syscall"
	"unsafe"
)

const pPID = 1 // idtype P_PID of waitid(2)

// waitNoReap blocks until process pid has exited but leaves it a zombie
// (waitid with WNOWAIT). While the zombie exists its pid, and so its
// process group id, cannot be reused, which makes the group kill that
// follows safe. The caller reaps it with exec.Cmd.Wait.
func waitNoReap(pid int) error {
	var info [128]byte // siginfo_t; the status is read later by Wait
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}
