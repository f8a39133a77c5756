//go:build !linux

package runner

import (
	"errors"
	"os/exec"
	"syscall"
)

func overlayHelper([]string) int { return overlayExit }

func newLayer() (string, error) { return "", errors.ErrUnsupported }

func overlayCommand(_, _, bwrap string, args []string) *exec.Cmd { return exec.Command(bwrap, args...) }

func overlayAttr() *syscall.SysProcAttr { return sandboxAttr() }

func probeOverlay(string) error { return errors.New("overlays are Linux only") }
