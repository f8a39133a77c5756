//go:build unix && !linux

package sandbox

import "syscall"

// sandboxAttr starts a new process group: bwrap is Linux only, so it
// never runs here.
func sandboxAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
