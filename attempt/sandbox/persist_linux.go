package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A prepare writes to upper layers on the attempt's tmpfs, of its disk
// limit, like any attempt: a prepare that writes more than the bound
// fills that tmpfs and has failed, and nothing it wrote reaches the
// repository's disk. Only a prepare that exits 0 within the bound is
// kept: the helper copies its upper layers (keepLayers) into the
// prepared layer's folder once bwrap has exited, with the whiteouts
// (character devices 0/0) and the overlay's extended attributes (an
// opaque folder) that make them an upper layer, so the kept layer reads
// under an attempt as the prepare's own view did.

// keepLayers copies the prepare's tree and Go cache upper layers from the
// attempt's tmpfs into spec.Persist/tree and spec.Persist/gocache.
func (spec *helperSpec) keepLayers() error {
	L := spec.Layer
	pairs := [][2]string{{filepath.Join(L, "upper"), filepath.Join(spec.Persist, "tree")}}
	if _, err := os.Lstat(filepath.Join(L, "gocache-upper")); err == nil {
		pairs = append(pairs, [2]string{filepath.Join(L, "gocache-upper"), filepath.Join(spec.Persist, "gocache")})
	}
	for _, p := range pairs {
		c := layerCopy{links: map[[2]uint64]string{}}
		if err := c.copy(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// layerCopy copies one upper layer; links maps a copied file's device and
// inode to its copy, so that hard links stay links.
type layerCopy struct {
	links map[[2]uint64]string
}

// copy copies src to dst (dst itself may exist as a folder: its
// metadata is replaced), everything below it, and their owners, modes,
// times and extended attributes.
func (c *layerCopy) copy(src, dst string) error {
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return err
	}
	mode := st.Mode & unix.S_IFMT
	if mode != unix.S_IFDIR && st.Nlink > 1 {
		key := [2]uint64{st.Dev, st.Ino}
		if first, ok := c.links[key]; ok {
			return os.Link(first, dst)
		}
		c.links[key] = dst
	}
	switch mode {
	case unix.S_IFDIR:
		if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := c.copy(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	case unix.S_IFREG:
		if err := copyFile(src, dst); err != nil {
			return err
		}
	case unix.S_IFLNK:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
	default: // a whiteout (a character device 0/0), a fifo or a socket
		if err := unix.Mknod(dst, st.Mode, int(st.Rdev)); err != nil {
			return fmt.Errorf("mknod %s: %w", dst, err)
		}
	}
	if err := copyXattrs(src, dst); err != nil {
		return err
	}
	if err := unix.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return err
	}
	if mode != unix.S_IFLNK {
		if err := unix.Chmod(dst, st.Mode&0o7777); err != nil {
			return err
		}
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	return unix.UtimesNanoAt(unix.AT_FDCWD, dst, ts, unix.AT_SYMLINK_NOFOLLOW)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyXattrs copies every extended attribute of src to dst (not
// following symlinks): the overlay's own (trusted.overlay.opaque) decide
// what the layer hides. A security attribute the disk refuses is left
// out; any other refusal fails the copy.
func copyXattrs(src, dst string) error {
	size, err := unix.Llistxattr(src, nil)
	if err != nil || size == 0 {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return err
	}
	buf := make([]byte, size)
	if size, err = unix.Llistxattr(src, buf); err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(string(buf[:size]), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		n, err := unix.Lgetxattr(src, name, nil)
		if err != nil {
			return fmt.Errorf("getxattr %s %s: %w", src, name, err)
		}
		val := make([]byte, n)
		if n, err = unix.Lgetxattr(src, name, val); err != nil {
			return fmt.Errorf("getxattr %s %s: %w", src, name, err)
		}
		if err := unix.Lsetxattr(dst, name, val[:n], 0); err != nil {
			if strings.HasPrefix(name, "security.") {
				continue
			}
			return fmt.Errorf("setxattr %s %s: %w", dst, name, err)
		}
	}
	return nil
}
