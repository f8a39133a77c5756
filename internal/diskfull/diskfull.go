// Package diskfull is the error of flakegate's own failure to use the
// disk (exit 3): a full disk says "no space left on", the folder and its
// file system, and what to free.
package diskfull

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate"
)

// Error is flakegate's own failure to use the disk at p (exit 3); a
// full disk says "no space left on" and where (NoSpace).
func Error(err error, p, message string) error {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return NoSpace(err, p, message)
	}
	return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: p, Message: message, Err: err}
}

// NoSpace is the error of a full disk at p: exit 3, "no space left on"
// the folder and its file system, and what to free; never a hint about
// the sandbox or the configuration.
func NoSpace(err error, p, message string) error {
	where := p
	if mnt := mountOf(p); mnt != "" && mnt != p {
		where += " (the file system at " + mnt + ")"
	}
	return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: p,
		Message: message + ": no space left on " + where, Err: err,
		Hint: "free space there and run the check again (old prepared layers are under " + filepath.Join(".git", "flakegate", "prepared") + "; prepare.keep bounds them)"}
}

// mountOf is the mount point of the file system that holds p, "" if
// unknown: the deepest /proc/self/mountinfo entry above p.
func mountOf(p string) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	best := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := strings.ReplaceAll(f[4], "\\040", " ")
		if (p == mp || strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > len(best) {
			best = mp
		}
	}
	return best
}
