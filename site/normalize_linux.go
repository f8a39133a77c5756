//go:build linux

package site

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// normalizeTree undoes, in a worktree that was reset and cleaned in full,
// what git leaves alone: the modes of folders and the permission bits of
// files (git knows only whether a file is executable) go back to what a
// checkout makes under flakegate's umask, and the extended attributes in
// the user namespace (user.*, which the tree's owner may set) are
// removed. An attempt of an older flakegate (its reset mode), or of
// sandbox mode none, could leave them; attempts in a sandbox never write
// the worktree now. Times are left: no attempt of this check can change
// them, so they tell no attempt from another. The .git entry is skipped.
func normalizeTree(dir string) error {
	mask := umask()
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && p != dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o666)
		if d.IsDir() || fi.Mode().Perm()&0o100 != 0 {
			want = 0o777
		}
		want &^= mask
		if fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != want {
			if err := os.Chmod(p, want); err != nil {
				return err
			}
		}
		return dropUserXattrs(p)
	})
}

// dropUserXattrs removes p's extended attributes named user.*.
func dropUserXattrs(p string) error {
	size, err := unix.Llistxattr(p, nil)
	if err == unix.ENOTSUP || size == 0 {
		return nil // none here
	}
	if err != nil {
		return err
	}
	buf := make([]byte, size+256)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		return err
	}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if strings.HasPrefix(name, "user.") {
			if err := unix.Lremovexattr(p, name); err != nil && err != unix.ENODATA {
				return err
			}
		}
	}
	return nil
}

// umask is this process's file mode creation mask, as /proc says (022
// when it cannot be read): reading it so does not change it for the
// other goroutines, as umask(2) would.
func umask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m)
				}
			}
		}
	}
	return 0o022
}
