package attempt

import "golang.org/x/sys/unix"

// waitNoReap blocks until process pid has exited but leaves it a zombie
// (waitid with WNOWAIT). While the zombie exists its pid, and so its
// process group id, cannot be reused, which makes the group kill that
// follows safe. The caller reaps it with exec.Cmd.Wait.
func waitNoReap(pid int) error {
	var info unix.Siginfo // the status is read later by Wait
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
