package runner

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// stagedEtc is the attempts' /etc: a copy of etcFiles in a folder made
// once per flakegate process under layerBase() (readable by nobody), so
// that bwrap binds one folder instead of one file at a time: each
// read-only bind costs it a mount and a read of the mount table, and
// thirty of them cost about 20 ms per attempt. Files keep their mode and
// symlinks stay symlinks (they point into /usr, which the sandbox has).
// Finish removes it; SweepLayers removes one a killed flakegate left. It
// is made again if it went missing (a temporary folder cleaned under it).
func stagedEtc() (string, error) {
	etcMu.Lock()
	defer etcMu.Unlock()
	if d, ok := etcDir.Load(""); ok {
		if _, err := os.Stat(d.(string)); err == nil {
			return d.(string), nil
		}
	}
	dir, err := os.MkdirTemp(layerBase(), layerPrefix+strconv.Itoa(os.Getpid())+"-etc-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	for _, f := range etcFiles {
		if err := copyTree(filepath.Join("/etc", f), filepath.Join(dir, f)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	etcDir.Store("", dir)
	return dir, nil
}

var (
	etcMu  sync.Mutex
	etcDir sync.Map // "" -> the staged folder, once made
)

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

// Finish ends flakegate's use of the sandbox: it ends the standby
// helpers, waits until the cgroups of finished attempts are removed and
// removes the staged /etc. The CLI
// calls it before it exits.
func Finish() {
	dropStandbys()
	WaitCgroups()
	if d, ok := etcDir.Load(""); ok {
		os.RemoveAll(d.(string))
	}
}
