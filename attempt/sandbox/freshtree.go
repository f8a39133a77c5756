package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// An attempt's tree is fresh in every mode that has a sandbox: a
// throwaway overlay of the worktree (as root, or in the helper's own
// user namespace without root), or else a fresh copy of it made for the
// attempt and removed after it (Level.Copy). Nothing an attempt does to
// its tree (a file, a mode, a time, an extended attribute, a folder it
// cannot list) reaches the worktree, so nothing of it reaches a retry or
// a later check.

// Unlock makes every folder under dir (dir included) readable, writable
// and searchable by its owner, so that an attempt's leftovers (a folder of
// mode 000, a read-only folder) can be listed and removed: the owner may
// always chmod what it owns. It walks into each folder after unlocking
// it, and skips what it cannot change (another user's folder), so that
// the remove or clean after it says what is still in the way.
func Unlock(dir string) error {
	var first error
	var walk func(p string)
	walk = func(p string) {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return
		}
		if fi.Mode().Perm()&0o700 != 0o700 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o700); err != nil && first == nil {
				first = err
				return
			}
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			if first == nil {
				first = err
			}
			return
		}
		for _, e := range entries {
			if e.IsDir() {
				walk(filepath.Join(p, e.Name()))
			}
		}
	}
	walk(dir)
	return first
}

// RemoveTree removes dir and everything in it, whatever modes an attempt
// left on its folders: when a plain remove fails, it unlocks the folders
// (Unlock) and removes again. A dir that does not exist is no error.
func RemoveTree(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	if _, serr := os.Lstat(dir); errors.Is(serr, fs.ErrNotExist) {
		return nil
	}
	_ = Unlock(dir)
	return os.RemoveAll(dir)
}
