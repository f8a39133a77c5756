package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// WriteTreeFiles writes files into the tree at root and returns what
// removes them again. Every path is resolved inside root, following no
// symbolic link and crossing no mount (openat2 RESOLVE_IN_ROOT,
// RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV): the tree is the code under
// test's, and a link it holds must not lead a write of flakegate's
// elsewhere. An existing file is an error, never overwritten.
func WriteTreeFiles(root string, files []TreeFile) (func(), error) {
	var written []string
	undo := func() {
		for _, p := range written {
			_ = removeInRoot(root, p)
		}
	}
	for _, f := range files {
		if err := writeTreeFile(root, f); err != nil {
			undo()
			return nil, fmt.Errorf("cannot add %s to the attempt's tree: %w", f.Rel, err)
		}
		written = append(written, f.Rel)
	}
	return undo, nil
}

const resolveBeneath = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openInRoot opens rel (a slash path) inside root with flags and mode.
func openInRoot(root, rel string, flags uint64, mode uint64) (int, error) {
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	for {
		fd, err := unix.Openat2(rfd, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolveBeneath})
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

func cleanRel(rel string) (string, error) {
	c := path.Clean(rel)
	if rel == "" || path.IsAbs(rel) || c != rel || c == "." || strings.HasPrefix(c, "../") || c == ".." {
		return "", fmt.Errorf("%q is not a plain path inside the tree", rel)
	}
	return c, nil
}

func writeTreeFile(root string, f TreeFile) error {
	rel, err := cleanRel(f.Rel)
	if err != nil {
		return err
	}
	dir, name := path.Split(rel)
	if dir == "" {
		dir = "."
	}
	dfd, err := openInRoot(root, dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	mode := uint32(0o644)
	var like *unix.Stat_t
	if f.Like != "" {
		lrel, err := cleanRel(f.Like)
		if err != nil {
			return err
		}
		lfd, err := openInRoot(root, lrel, unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		var st unix.Stat_t
		err = unix.Fstat(lfd, &st)
		unix.Close(lfd)
		if err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			like, mode = &st, st.Mode&0o666
		}
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	file := os.NewFile(uintptr(fd), name)
	defer file.Close()
	if _, err := file.Write(f.Data); err != nil {
		return err
	}
	if like == nil {
		return nil
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		// Root, or the helper's user namespace's root: the owner its
		// neighbour has as the attempt sees it.
		if err := unix.Fchown(fd, int(like.Uid), int(like.Gid)); err != nil && !errors.Is(err, unix.EINVAL) {
			return err
		}
	}
	return unix.UtimesNanoAt(dfd, name, []unix.Timespec{like.Atim, like.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
}

// removeInRoot removes the file rel inside root, following no link.
func removeInRoot(root, rel string) error {
	dir, name := path.Split(rel)
	if dir == "" {
		dir = "."
	}
	dfd, err := openInRoot(root, dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return unix.Unlinkat(dfd, name, 0)
}
