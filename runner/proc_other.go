//go:build unix && !linux

package runner

import (
	"errors"
	"syscall"
)

// waitNoReap is not available here; Run then reaps the leader before it
// kills the rest of its group.
func waitNoReap(pid int) error { return errors.ErrUnsupported }

// sandboxAttr is groupAttr: bwrap is Linux only, so it never runs here.
func sandboxAttr() *syscall.SysProcAttr { return groupAttr() }
