package sandbox

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"
)

// Resident reports whether every page of the files under dir stays in
// memory whatever an attempt does: dir is on a tmpfs (or ramfs) and no
// swap is on, so a tmpfs page cannot be written out and dropped. Its
// files' residency is then the same before every attempt, and the page
// cache sweep (pagecache_linux.go) skips dir: nothing an attempt reads
// or pushes out there changes what the next one finds. With swap on, a
// tmpfs page can be swapped out by memory pressure an attempt makes, so
// dir is not resident (a sweep could not put it back either: the advice
// does not move tmpfs pages).
func Resident(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch int64(st.Type) {
	case unix.RAMFS_MAGIC:
		return true
	case unix.TMPFS_MAGIC:
		return !SwapOn()
	}
	return false
}

// SwapOn reports whether the kernel has any swap area in use
// (/proc/swaps lists one below its heading); true when that cannot be
// read.
func SwapOn() bool {
	b, err := os.ReadFile("/proc/swaps")
	if err != nil {
		return true
	}
	return swapLines(b) > 0
}

// swapLines counts the swap areas in the text of /proc/swaps.
func swapLines(b []byte) int {
	n := 0
	for i, line := range bytes.Split(b, []byte("\n")) {
		if i > 0 && len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}
