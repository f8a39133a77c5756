package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// stagedEtc is the attempts' /etc: a copy of etcFiles in one folder
// under layerBase() (readable by nobody), so that bwrap binds one folder
// instead of one file at a time: each read-only bind costs it a mount and
// a read of the mount table, and thirty of them cost about 20 ms per
// attempt. Files keep their mode and symlinks stay symlinks (they point
// into /usr, which the sandbox has).
//
// The copy is kept between runs, named after a fingerprint of what it
// copies (every entry's name, mode, size, time and link target): making
// it takes about half a second on a slow disk, checking it a few
// milliseconds, which is too much for every attempt (it reads hundreds of
// certificate links): one process checks it once, and its later attempts
// use the same folder while it is still there and still flakegate's. A
// check that runs for hours does not see /etc change under it; that
// costs nothing in trust, since /etc is the host's, not the attempt's.
// A folder of that name is used only when flakegate's own user owns it
// and nobody else may write it.
func stagedEtc() (string, error) {
	etcMu.Lock()
	defer etcMu.Unlock()
	base := layerBase()
	if dir := etcStaged[base]; dir != "" && ownedAndClosed(dir) {
		return dir, nil
	}
	dir, err := stageEtc(base)
	if err == nil {
		etcStaged[base] = dir
	}
	return dir, err
}

var (
	etcMu     sync.Mutex
	etcStaged = map[string]string{} // layerBase() -> the folder this process staged or checked there
)

// stageEtc finds or makes the staged /etc for the files as they are now.
func stageEtc(base string) (string, error) {
	fp, err := etcFingerprint()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "flakegate-etc-"+strconv.Itoa(os.Geteuid())+"-"+fp)
	if ownedAndClosed(dir) {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(base, layerPrefix+strconv.Itoa(os.Getpid())+"-etc-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	for _, f := range etcFiles {
		if err := copyTree(filepath.Join("/etc", f), filepath.Join(tmp, f)); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if ownedAndClosed(dir) { // another flakegate made it first
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// ownedAndClosed reports whether dir is a folder of flakegate's own user
// that no one else may write.
func ownedAndClosed(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// etcFingerprint is a short digest of the metadata of every entry that
// stagedEtc copies.
func etcFingerprint() (string, error) {
	h := sha256.New()
	for _, f := range etcFiles {
		_ = filepath.WalkDir(filepath.Join("/etc", f), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			link := ""
			if d.Type()&fs.ModeSymlink != 0 {
				link, _ = os.Readlink(p)
			}
			fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d\x00%s\n", p, info.Mode(), info.Size(), info.ModTime().UnixNano(), link)
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// copyTree copies src (a file, a symlink or a folder) to dst, skipping
// what does not exist or cannot be read: a missing part of /etc is
// missing inside too.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == src {
				return nil // absent here
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o755)
		case d.Type().IsRegular():
			if info.Mode().Perm()&0o004 == 0 {
				return nil // not world-readable: not for the sandbox
			}
			in, err := os.Open(p)
			if err != nil {
				return nil
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}
