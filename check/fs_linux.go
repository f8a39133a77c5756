//go:build linux

package check

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fsNames names the file systems a CI runner is likely to use.
var fsNames = map[int64]string{
	unix.EXT4_SUPER_MAGIC:      "ext4",
	unix.TMPFS_MAGIC:           "tmpfs",
	unix.OVERLAYFS_SUPER_MAGIC: "overlay",
	unix.XFS_SUPER_MAGIC:       "xfs",
	unix.BTRFS_SUPER_MAGIC:     "btrfs",
	unix.NFS_SUPER_MAGIC:       "nfs",
	unix.F2FS_SUPER_MAGIC:      "f2fs",
	unix.FUSE_SUPER_MAGIC:      "fuse",
	unix.V9FS_MAGIC:            "9p",
	unix.SMB2_SUPER_MAGIC:      "smb2",
	unix.CIFS_SUPER_MAGIC:      "cifs",
	unix.SQUASHFS_MAGIC:        "squashfs",
	unix.RAMFS_MAGIC:           "ramfs",
}

// fileSystem returns the type of the file system dir lives on (statfs).
func fileSystem(dir string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", err
	}
	if name, ok := fsNames[int64(st.Type)]; ok {
		return name, nil
	}
	return fmt.Sprintf("0x%x", uint64(st.Type)), nil
}
