package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The attempt's root, built by the helper (as root, in its private mount
// namespace) under Layer/root and put at fixedRoot(), for bwrap to bind
// at / in one step. It is the root bwrap builds for a caller without
// root (Sandbox.bwrapArgs), with one difference: its top is read-only,
// so an attempt cannot make folders at /.
//
// A standby helper builds all of it, the tree and the Go build cache
// included, while the attempt before runs. Every mount is nosuid; only
// /dev's device nodes (read-only) are not nodev.

// devNodes are the device nodes of the attempt's /dev, bound from the
// host's, as bwrap's --dev has them, but read-only: a write to a device
// needs no writable mount, while changing the node's times, mode, owner
// or xattrs does, so no attempt can leave a mark on a host node (touch
// /dev/full) for a later one to read. nodev stays off: on a nodev mount
// the nodes could not be opened at all.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are /dev's symlinks, as bwrap's --dev has them.
var devLinks = [][2]string{
	{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
	{"/proc/self/fd/2", "stderr"}, {"/proc/kcore", "core"}, {"pts/ptmx", "ptmx"},
}

// buildRoot builds Layer/root from spec.Root, up to the tree.
func (spec *helperSpec) buildRoot() error {
	if len(spec.Root) == 0 {
		return nil
	}
	R := filepath.Join(spec.Layer, "root")
	if err := os.Chmod(R, 0o755); err != nil {
		return err
	}
	// A mount of its own, so that its top can be made read-only.
	if err := unix.Mount(R, R, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("the root: %w", err)
	}
	for _, op := range spec.Root {
		if op.Op == "tree" || op.Op == "gocache" {
			if err := os.MkdirAll(filepath.Join(R, op.Dst), 0o755); err != nil { // its mount point
				return err
			}
			continue
		}
		if err := spec.rootStep(R, op); err != nil {
			return fmt.Errorf("the root's %s: %w", op.Dst, err)
		}
	}
	return unix.Mount("", R, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "")
}

// rootStep does one op under R.
func (spec *helperSpec) rootStep(R string, op rootOp) error {
	dst := filepath.Join(R, op.Dst)
	switch op.Op {
	case "ro":
		fi, err := os.Stat(op.Src)
		if err != nil {
			return nil // absent here: absent inside
		}
		if err := mountPoint(dst, !fi.IsDir()); err != nil {
			return err
		}
		if err := unix.Mount(op.Src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		return setAttr(dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	case "rw":
		fi, err := os.Stat(op.Src)
		if err != nil {
			return err // a read-write path must exist
		}
		if err := mountPoint(dst, !fi.IsDir()); err != nil {
			return err
		}
		if err := idmapBind(op.Src, dst, spec.fds.get(fdShareUserns)); err != nil {
			return err
		}
		return setAttr(dst, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	case "link":
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(op.Src, dst)
	case "dir", "proc":
		return os.MkdirAll(dst, 0o755)
	case "layer":
		if err := mountPoint(dst, false); err != nil {
			return err
		}
		return unix.Mount(filepath.Join(spec.Layer, op.Src), dst, "", unix.MS_BIND, "")
	case "hide":
		if err := mountPoint(dst, op.File); err != nil {
			return err
		}
		if op.File {
			if err := unix.Mount("/dev/null", dst, "", unix.MS_BIND, ""); err != nil {
				return err
			}
			return setAttr(dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
		}
		return unix.Mount("tmpfs", dst, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=4k,nr_inodes=2")
	case "dev":
		return buildDev(dst)
	}
	return fmt.Errorf("unknown step %q", op.Op)
}

// buildDev makes the attempt's /dev at dst: a small tmpfs with the host's
// harmless device nodes bound in read-only, its own devpts, and the usual
// links.
func buildDev(dst string) error {
	if err := mountPoint(dst, false); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, n := range devNodes {
		p := filepath.Join(dst, n)
		if err := mountPoint(p, true); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+n, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
		if err := setAttr(p, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return err
		}
	}
	for _, l := range devLinks {
		if err := os.Symlink(l[0], filepath.Join(dst, l[1])); err != nil {
			return err
		}
	}
	for _, d := range []string{"shm", "pts"} {
		if err := os.Mkdir(filepath.Join(dst, d), 0o755); err != nil {
			return err
		}
	}
	return unix.Mount("devpts", filepath.Join(dst, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
}

// attachToRoot mounts the attempt's tree and Go build cache into the
// root built by buildRoot, then puts the root at spec.RootAt.
func (spec *helperSpec) attachToRoot() error {
	if len(spec.Root) == 0 {
		return nil
	}
	R := filepath.Join(spec.Layer, "root")

	for _, op := range spec.Root {
		var src string
		switch op.Op {
		case "tree":
			src = filepath.Join(spec.Layer, "tree")
		case "gocache":
			src = filepath.Join(spec.Layer, "gocache")
			if _, err := os.Stat(src); err != nil {
				continue // no cache to share
			}
		default:
			continue
		}
		if err := unix.Mount(src, filepath.Join(R, op.Dst), "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("the root's %s: %w", op.Dst, err)
		}
	}
	if spec.RootAt != "" && spec.RootAt != R {
		if err := unix.Mount(R, spec.RootAt, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("the root at %s: %w", spec.RootAt, err)
		}
	}
	return nil
}

// fixedRoot is the folder where every helper of this user puts the root
// it built, each in its own mount namespace: bwrap's arguments (which an
// attempt can read in /proc/1/cmdline) then name the same path in every
// attempt, not the attempt's own layer folder. An empty folder under
// layerBase(), used only while it is flakegate's user's and no one
// else's to write.
func fixedRoot() (string, error) {
	dir := filepath.Join(layerBase(), "flakegate-root-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if !ownedAndClosed(dir) {
		return "", fmt.Errorf("%s is not flakegate's own folder", dir)
	}
	return dir, nil
}

// mountPoint makes dst (a folder, or an empty file) unless it exists.
func mountPoint(dst string, file bool) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if !file {
		return os.Mkdir(dst, 0o755)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// setAttr sets attrs on the mount at dst and every mount below it.
func setAttr(dst string, attrs uint64) error {
	attr := unix.MountAttr{Attr_set: attrs}
	err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &attr)
	if errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("mount_setattr needs Linux 5.12: %w", err)
	}
	return err
}
