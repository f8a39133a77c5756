package site

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/bytesize"
)

// Where the worktrees live. Their lock is always in <git common
// dir>/flakegate/worktrees, and so are the trees, unless the attempts'
// page cache is swept (no memory cgroup reclaims it: flakegate is not
// root, or has no cgroup) and the machine has a tmpfs without swap at
// ShmRoot. Then the trees go to ShmRoot/flakegate-UID/REPO: a tmpfs
// page never leaves memory without swap, so nothing an attempt reads
// there changes what the next attempt finds, and the sweep before every
// attempt, about 3 µs a file (tens of milliseconds per attempt in a big
// repository), skips them (sandbox.Resident). A reboot empties the
// tmpfs; the next check adds the trees again. The repository's Go caches
// get a resident mirror there too (gocache/mirror.go).
//
// The folder flakegate-UID must be flakegate's user's own, mode 0700,
// and no symlink: another local user who made it first cannot see or
// change the trees, and gets them left on disk. The trees must fit:
// every worker's base and candidate tree, at whole pages per file, in
// half of the tmpfs's free space and a quarter of the memory available.

// ShmRoot is the tmpfs the trees may move to.
const ShmRoot = "/dev/shm"

// TreeRoot is where one check's worktrees are.
type TreeRoot struct {
	Dir  string // the trees' folder
	Lock string // their lock file, on the repository's disk
	Shm  string // the repository's folder on the tmpfs ("" when Dir is on disk)
	Why  string // where the trees are and why, for the progress ("" on disk where nothing is swept)
}

// ShmUserDir is flakegate's user's folder on the tmpfs.
func ShmUserDir() string {
	return filepath.Join(ShmRoot, "flakegate-"+strconv.Itoa(os.Geteuid()))
}

// repo is the repository whose trees they are: its git, its git common
// dir, and the base commit the trees are sized by.
type repo struct {
	git     *git.Client
	common  string
	baseSHA string
}

// ChooseTreeRoot chooses where the worktrees of a check with workers
// workers live (see above), the base at baseSHA of the repository at
// git common dir common, attempts isolated by iso (nil: not set up).
// Probe first: it needs the sandbox's level.
func ChooseTreeRoot(ctx context.Context, g *git.Client, common, baseSHA string, iso *Isolation, workers int) (TreeRoot, error) {
	c := &repo{git: g, common: common, baseSHA: baseSHA}
	disk, err := MakeWorktreeRoot(c.common)
	if err != nil {
		return TreeRoot{}, err
	}
	r := TreeRoot{Dir: disk, Lock: filepath.Join(disk, ".lock")}
	if iso == nil || iso.Mode != IsolationBwrap || iso.Sandbox.Reclaimed() || iso.Sandbox.Level.Copy {
		return r, nil // nothing sweeps the trees
	}
	shm, why := c.residentRoot(ctx, 2*max(workers, 1))
	if shm == "" {
		r.Why = "on disk, swept from the page cache before every attempt (" + why + ")"
		return r, nil
	}
	r.Dir, r.Shm = filepath.Join(shm, "worktrees"), shm
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return TreeRoot{}, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: r.Dir, Message: "cannot create the worktree folder", Err: err}
	}
	r.Why = "on a tmpfs without swap (" + r.Dir + "): their pages never leave memory, so they need no sweep"
	return r, nil
}

// residentRoot returns the repository's folder on the tmpfs for trees
// trees, created if missing, or "" and why they stay on disk.
func (c *repo) residentRoot(ctx context.Context, trees int) (string, string) {
	if sandbox.SwapOn() {
		return "", "swap is on, so a tmpfs page could be swapped out"
	}
	if !sandbox.Resident(ShmRoot) {
		return "", ShmRoot + " is not a tmpfs"
	}
	user := ShmUserDir()
	if err := os.Mkdir(user, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Sprintf("cannot create %s: %v", user, err)
	}
	if why := ownFolder(user); why != "" {
		return "", why
	}
	size, err := c.checkoutSize(ctx)
	if err != nil {
		return "", "cannot size the base's checkout: " + err.Error()
	}
	need := int64(trees) * (size + size/4) // a candidate may be larger than its base
	free, err := FreeBytes(user)
	if err != nil {
		return "", "cannot read the free space of " + ShmRoot
	}
	if need > free/2 {
		return "", fmt.Sprintf("%d trees of %s need more than half of the %s free on %s", trees, bytesize.Format(size), bytesize.Format(free), ShmRoot)
	}
	if avail := memAvailable(); avail <= 0 || need > avail/4 {
		return "", fmt.Sprintf("%d trees of %s need more than a quarter of the memory available", trees, bytesize.Format(size))
	}
	dropOrphans(user)
	dir := filepath.Join(user, flakegate.SHA256Hex([]byte(c.common))[:16])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Sprintf("cannot create %s: %v", dir, err)
	}
	// Whose folder it is, for dropOrphans (and a person looking),
	// written once.
	mark, want := filepath.Join(dir, repoMark), []byte(c.common+"\n")
	if have, err := os.ReadFile(mark); err != nil || !bytes.Equal(have, want) {
		if err := atomicfile.WriteFile(mark, want, 0o600); err != nil {
			return "", fmt.Sprintf("cannot write in %s: %v", dir, err)
		}
	}
	return dir, ""
}

// FreeBytes is the space an unprivileged user may still write on the
// file system of dir.
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// repoMark names, in a repository's folder on the tmpfs, the file that
// holds the repository's git common dir.
const repoMark = "repository"

// dropOrphans removes the repositories' folders in user whose
// repository is gone (its git common dir no longer exists): their
// worktrees and mirrors would hold memory until a reboot. A folder
// without its mark is one being made, and is left.
func dropOrphans(user string) {
	ents, _ := os.ReadDir(user)
	for _, e := range ents {
		dir := filepath.Join(user, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, repoMark))
		if err != nil {
			continue
		}
		common := strings.TrimSpace(string(b))
		if _, err := os.Stat(filepath.Join(common, "HEAD")); errors.Is(err, fs.ErrNotExist) {
			_ = sandbox.RemoveTree(dir)
		}
	}
}

// ownFolder says why dir is not a folder only flakegate's user can
// reach ("" when it is): not a symlink, owned by the user, mode 0700 or
// narrower.
func ownFolder(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err.Error()
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return dir + " is not a folder"
	case !ok || int(st.Uid) != os.Geteuid():
		return dir + " belongs to another user"
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("%s has mode %04o: others may reach it", dir, fi.Mode().Perm())
	}
	return ""
}

// memAvailable is MemAvailable of /proc/meminfo in bytes, 0 when unknown.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// checkoutSize is git.Client.CheckoutSize of the base at this machine's
// page size, kept per base commit in <git common dir>/flakegate/
// worktrees/sizes (a commit's size never changes): git reads every
// blob's header to tell it, over a second for 50,000 loose objects.
func (c *repo) checkoutSize(ctx context.Context) (int64, error) {
	page := int64(os.Getpagesize())
	key := c.baseSHA + " " + strconv.FormatInt(page, 10)
	file := filepath.Join(c.common, "flakegate", "worktrees", "sizes")
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, key+" "); ok {
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	n, err := c.git.CheckoutSize(ctx, c.baseSHA, page)
	if err != nil {
		return 0, err
	}
	if len(lines) > 50 {
		lines = lines[len(lines)-50:]
	}
	lines = append(lines, key+" "+strconv.FormatInt(n, 10))
	_ = atomicfile.WriteFile(file, []byte(strings.TrimSpace(strings.Join(lines, "\n"))+"\n"), 0o600) // a lost line costs the next check a git run
	return n, nil
}
