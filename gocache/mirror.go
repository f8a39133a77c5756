package gocache

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flakegate/flakegate/attempt/sandbox"
)

// The Go caches' resident mirror. Where the worktrees are on a tmpfs
// without swap (site/treeroot.go), the attempts' Go build and module
// caches would still be swept from the page cache before every attempt, and
// every attempt would read the compiled packages it links from disk
// again: most of a warm go test's time without a memory cgroup. So,
// after the fill, the check mirrors both into the repository's folder
// on the tmpfs (gocache/KEY and gomod/DIGEST, named as on disk) and the
// attempts read the mirror. The disk caches stay the durable copies:
// the fill writes them, a reboot empties the tmpfs, and the next check
// mirrors again. A mirror is brought up to date file by file (a file of
// another size or time is copied again, one the cache no longer has is
// removed), so a check whose caches did not change copies nothing.
// Only flakegate writes it, in a folder only its user can reach; the
// attempts see it read-only, below their throwaway layers, as they see
// the disk caches.

// Mirror points sb's Go caches (BuildDir and ModDir, or what the
// caller made of them) at mirrors under shm, the repository's folder on
// the worktrees' tmpfs, when they take at most room bytes there; it
// reports whether they fit, and an error when they could not be
// mirrored (sb is then left as it was).
func Mirror(sb *sandbox.Sandbox, shm string, room int64) (bool, error) {
	pairs := [][2]string{
		{sb.GoCache, filepath.Join(shm, "gocache", filepath.Base(filepath.Dir(sb.GoCache)))},
		{sb.GoModCache, filepath.Join(shm, "gomod", filepath.Base(sb.GoModCache))},
	}
	var need int64
	for _, p := range pairs {
		need += treeBytes(p[0])
	}
	if need > room {
		return false, nil
	}
	for _, p := range pairs {
		keepOnly(filepath.Dir(p[1]), filepath.Base(p[1])) // the mirrors of older caches
		if err := mirrorTree(p[0], p[1]); err != nil {
			return true, err
		}
	}
	sb.GoCache, sb.GoModCache = pairs[0][1], pairs[1][1]
	return true, nil
}

// treeBytes is what the regular files under dir take, at whole pages.
func treeBytes(dir string) int64 {
	page := int64(os.Getpagesize())
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += (fi.Size() + page - 1) / page * page
			}
		}
		return nil
	})
	return n
}

// keepOnly removes every entry of dir but the one named keep.
func keepOnly(dir, keep string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != keep {
			_ = sandbox.RemoveTree(filepath.Join(dir, e.Name()))
		}
	}
}

// mirrorTree makes dst hold what src holds: folders, regular files (a
// file whose size or modification time differs is copied again, through
// a temporary name) and symlinks; what src lacks is removed from dst.
// Nothing outside dst is written, and no link in src is followed.
func mirrorTree(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	// Folders are writable while the mirror is written (the module
	// cache's are read-only) and get their modes last, deepest first.
	type dirMode struct {
		path string
		perm fs.FileMode
	}
	var dirs []dirMode
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			dirs = append(dirs, dirMode{to, fi.Mode().Perm()})
			return mkdirWritable(to)
		case d.Type().IsRegular():
			return copyIfChanged(p, to, d)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if have, err := os.Readlink(to); err == nil && have == target {
				return nil
			}
			_ = os.RemoveAll(to)
			return os.Symlink(target, to)
		}
		return nil // a socket or a fifo: a cache holds none
	})
	if err != nil {
		return err
	}
	// What the cache no longer has (trimmed entries).
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dst, p)
		if _, err := os.Lstat(filepath.Join(src, rel)); errors.Is(err, fs.ErrNotExist) {
			_ = sandbox.RemoveTree(p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].perm); err != nil {
			return err
		}
	}
	return nil
}

// mkdirWritable makes to a folder its owner may write, replacing what
// else is there.
func mkdirWritable(to string) error {
	if have, err := os.Lstat(to); err == nil && !have.IsDir() {
		_ = os.Remove(to)
	}
	if err := os.Mkdir(to, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(to, 0o700)
}

// copyIfChanged copies the regular file from to to, with its mode and
// modification time, unless to is a regular file of that size and time.
func copyIfChanged(from, to string, d fs.DirEntry) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	if have, err := os.Lstat(to); err == nil && have.Mode().IsRegular() && have.Size() == fi.Size() && have.ModTime().Equal(fi.ModTime()) {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := to + ".mirror-tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, fi.Mode().Perm())
	}
	if err == nil {
		err = os.Chtimes(tmp, time.Time{}, fi.ModTime())
	}
	if err == nil {
		err = os.Rename(tmp, to)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
