package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The sandbox helper is flakegate re-executed (argv[0] helperArg0, the
// helperSpec as JSON in argv[1]) between flakegate and bwrap. It does
// what bwrap cannot do for an unprivileged caller, then runs bwrap as
// that caller and waits for it:
//
//   - as root, in the private mount namespace its parent made: a tmpfs of
//     the disk limit for the attempt's layer, tmpfs of the tmp limit for
//     /tmp, /dev/shm and $HOME, the tree (an overlay whose lower layer is
//     an idmapped view of the tree, or the idmapped tree itself in reset
//     mode) and the shared paths, idmapped so the unprivileged identity
//     can write what the tree's owner could; then it drops to that
//     identity, so bwrap and the attempt hold no capability and own
//     nothing of the host's;
//   - always: it joins the attempt's cgroup (or sets rlimits where there
//     is none) before bwrap starts, and leaves it once bwrap has;
//   - after bwrap: it reports on descriptor 5 which size-limited tmpfs the
//     attempt filled, then exits as bwrap did.
//
// The mounts live in the helper's mount namespace only, and go away with
// it: nothing is left on the host when an attempt is killed.

func helperMain(arg string) int {
	// No descriptor of the helper's reaches bwrap and the attempt but the
	// ones handed to it below: not the report (an attempt could write
	// its own), not the user namespaces, and not whatever flakegate
	// itself inherited (a CI runner's pipes and sockets).
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper: cannot close its descriptors on exec:", err)
		return helperExit
	}
	var spec helperSpec
	if err := json.Unmarshal([]byte(arg), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper: bad spec:", err)
		return helperExit
	}
	if err := spec.mount(); err != nil {
		fmt.Fprintf(os.Stderr, "flakegate: cannot prepare the attempt's sandbox: %v\n", err)
		return helperExit
	}
	if len(spec.Argv) == 0 && !spec.Standby {
		return 0 // the probe
	}
	for _, r := range spec.Rlimits {
		if err := unix.Setrlimit(r.Resource, &unix.Rlimit{Cur: r.Value, Max: r.Value}); err != nil {
			fmt.Fprintf(os.Stderr, "flakegate: cannot set rlimit %d: %v\n", r.Resource, err)
			return helperExit
		}
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	for _, d := range spec.Cgroups {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), self, 0); err != nil {
			fmt.Fprintf(os.Stderr, "flakegate: cannot join the attempt's cgroup %s: %v\n", d, err)
			return helperExit
		}
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "status"), os.NewFile(4, "seccomp")}
	if spec.Standby {
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(helperSpecFD, "attempt")) // execFD in bwrap: 3 + its index
		cmd.Env = execEnv
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if spec.UID >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(spec.UID), Gid: uint32(spec.GID), Groups: []uint32{}}
	}
	signal.Ignore(syscall.SIGPIPE)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "flakegate: cannot run %s: %v\n", spec.Argv[0], err)
		return helperExit
	}
	for _, d := range spec.Leave {
		_ = os.WriteFile(filepath.Join(d, "cgroup.procs"), self, 0) // only the helper's own memory stays counted otherwise
	}
	_ = cmd.Wait()
	spec.report(cmd.ProcessState.ExitCode() == 0)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		// Die the way bwrap did, so the caller reads the same status.
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		time.Sleep(time.Second)
	}
	return cmd.ProcessState.ExitCode()
}

// report writes which of the attempt's tmpfs are full on descriptor 5;
// a prepare that exited 0 (ok) within its bounds has its layers kept
// first (keepLayers), and the report says why they could not be.
func (spec *helperSpec) report(ok bool) {
	f := os.NewFile(helperReportFD, "report")
	if f == nil || spec.Layer == "" {
		return
	}
	defer f.Close()
	var rep helperReport
	for _, m := range []struct{ dir, name string }{{"tmp", "tmp"}, {"shm", "tmp"}, {"home", "tmp"}, {"upper", "disk"}} {
		var st unix.Statfs_t
		if unix.Statfs(filepath.Join(spec.Layer, m.dir), &st) == nil && st.Bavail == 0 && !slices.Contains(rep.Full, m.name) {
			rep.Full = append(rep.Full, m.name)
		}
	}
	if spec.Persist != "" && ok && len(rep.Full) == 0 {
		if err := spec.keepLayers(); err != nil {
			rep.KeepErr, rep.NoSpace = err.Error(), errors.Is(err, unix.ENOSPC)
		}
	}
	_ = json.NewEncoder(f).Encode(rep)
}

// mount builds the layer: it refuses to run in its parent's mount
// namespace, where the mounts would be the host's.
func (spec *helperSpec) mount() error {
	if spec.Layer == "" {
		return nil
	}
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt")
	if err1 != nil || err2 != nil || self == parent {
		return errors.New("not in a private mount namespace")
	}
	L := spec.Layer
	if err := unix.Mount("tmpfs", L, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0711,size="+strconv.FormatInt(spec.Disk, 10)); err != nil {
		return fmt.Errorf("the layer's tmpfs: %w", err)
	}
	for _, d := range []string{"tmp", "shm", "home", "upper", "work", "lower", "tree", "root"} {
		if err := os.Mkdir(filepath.Join(L, d), 0o711); err != nil {
			return err
		}
	}
	owner := "uid=" + strconv.Itoa(spec.UID) + ",gid=" + strconv.Itoa(spec.GID)
	size := "size=" + strconv.FormatInt(spec.Tmp, 10)
	for _, m := range []struct{ dir, opts string }{{"tmp", "mode=1777," + size}, {"shm", "mode=1777," + size}, {"home", "mode=0700," + owner + "," + size}} {
		if err := unix.Mount("tmpfs", filepath.Join(L, m.dir), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, m.opts); err != nil {
			return fmt.Errorf("the %s tmpfs: %w", m.dir, err)
		}
	}
	if err := spec.buildRoot(); err != nil {
		return err
	}
	return spec.mountAttempt()
}

// mountAttempt mounts what belongs to one attempt: the prepared layer,
// the tree and the Go build cache. A prepare's upper layers are on the
// attempt's tmpfs like any attempt's; the helper keeps them after it
// (keepLayers).
func (spec *helperSpec) mountAttempt() error {
	L := spec.Layer
	if spec.Prepared != "" {
		if err := os.Mkdir(filepath.Join(L, "prepared"), 0o711); err != nil {
			return err
		}
		if err := unix.Mount(spec.Prepared, filepath.Join(L, "prepared"), "", unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("the prepared layer: %w", err)
		}
	}
	if spec.Tree != "" {
		if err := spec.mountTree(); err != nil {
			return err
		}
	}
	if err := spec.mountGoCache(); err != nil {
		return err
	}
	return spec.attachToRoot()
}

// mountTree puts the attempt's view of the tree at L/tree: an overlay of
// the idmapped tree, or the idmapped tree itself. The overlay's options
// name its layers relative to L, so that /proc/self/mountinfo reads the
// same in every attempt.
func (spec *helperSpec) mountTree() error {
	L := spec.Layer
	if !spec.Overlay {
		return idmapBind(spec.Tree, filepath.Join(L, "tree"), helperUsernsFD)
	}
	if err := idmapBind(spec.Tree, filepath.Join(L, "lower"), helperUsernsFD); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(spec.Tree, &st); err != nil {
		return err
	}
	lower, upper, work := "lower", "upper", "work"
	if spec.Prepared != "" {
		lower = "prepared/tree:lower"
	}
	if err := spec.ownUpper(filepath.Join(L, upper), os.FileMode(st.Mode&0o7777)); err != nil {
		return err
	}
	return overlayAt(L, "tree", "lowerdir="+lower+",upperdir="+upper+",workdir="+work)
}

// ownUpper gives an upper layer's root to the identity, with mode.
func (spec *helperSpec) ownUpper(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	if err := os.Chmod(dir, mode); err != nil {
		return err
	}
	if spec.UID >= 0 {
		return os.Chown(dir, spec.UID, spec.GID)
	}
	return nil
}

// overlayAt mounts an overlay at L/dst with opts naming its layers
// relative to L, so that /proc/self/mountinfo reads the same in every
// attempt.
func overlayAt(L, dst, opts string) error {
	wd, _ := os.Getwd()
	if err := unix.Chdir(L); err != nil {
		return err
	}
	defer unix.Chdir(wd) //nolint:errcheck // the helper's own working directory is not used
	if err := unix.Mount("overlay", filepath.Join(L, dst), "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("the %s overlay: %w", dst, err)
	}
	return nil
}

// mountGoCache puts the attempt's Go build cache at L/gocache: an
// overlay whose lower layers are the prepared layer's cache and the
// host's own cache (idmapped, read-only: the overlay never writes a
// lower layer), and whose upper layer is on the attempt's tmpfs.
// Metadata-only copy-ups (Go touches
// the entries it uses) copy no data where the kernel allows metacopy.
func (spec *helperSpec) mountGoCache() error {
	if len(spec.GoCache) == 0 && spec.Prepared == "" {
		return nil
	}
	L := spec.Layer
	var lowers []string
	if spec.Prepared != "" {
		lowers = append(lowers, "prepared/gocache")
	}
	for i, g := range spec.GoCache {
		rel := filepath.Join("gocache-lower", strconv.Itoa(i))
		dst := filepath.Join(L, rel)
		if err := os.MkdirAll(dst, 0o711); err != nil {
			return err
		}
		var err error
		if g.Idmap {
			err = idmapBind(g.Src, dst, helperCacheUsernsFD)
		} else {
			err = unix.Mount(g.Src, dst, "", unix.MS_BIND|unix.MS_RDONLY, "")
		}
		if err != nil {
			return fmt.Errorf("the Go build cache %s: %w", g.Src, err)
		}
		lowers = append(lowers, rel)
	}
	upper, work := "gocache-upper", "gocache-work"
	if err := os.MkdirAll(filepath.Join(L, work), 0o700); err != nil {
		return err
	}
	if err := spec.ownUpper(filepath.Join(L, upper), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(L, "gocache"), 0o711); err != nil {
		return err
	}
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + upper + ",workdir=" + work
	if err := overlayAt(L, "gocache", opts+",metacopy=on"); err == nil {
		return nil
	}
	return overlayAt(L, "gocache", opts)
}

// idmapBind binds src at dst as seen through the user namespace on
// descriptor 6: the files of the tree's owner appear as the unprivileged
// identity's. Without that descriptor it is a plain bind.
func idmapBind(src, dst string, usernsFD int) error {
	if _, err := unix.FcntlInt(uintptr(usernsFD), unix.F_GETFD, 0); err != nil {
		return unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(usernsFD)}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("an idmapped mount of %s: %w", src, err)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s: %w", src, err)
	}
	return nil
}

// newLayer makes an attempt's layer folder under layerBase(): 0711, so
// that the unprivileged identity can reach into it but not list it.
func newLayer() (string, error) {
	dir, err := os.MkdirTemp(layerBase(), layerPattern())
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// helperCommand is flakegate's own binary as the helper.
func helperCommand(spec *helperSpec) (*exec.Cmd, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", string(b))
	cmd.Args[0] = helperArg0
	attr := sandboxAttr()
	if spec.Layer != "" {
		attr.Unshareflags = syscall.CLONE_NEWNS // Go makes it private: no mount propagates back
	}
	cmd.SysProcAttr = attr
	return cmd, nil
}

// idmapUserns returns a descriptor of a user namespace mapping owner (the
// tree's uid and gid) to id, for idmapped mounts: made once per pair, by a
// child that lives just long enough for its namespace to be opened.
func idmapUserns(ownerUID, ownerGID, uid, gid int) (*os.File, error) {
	key := [4]int{ownerUID, ownerGID, uid, gid}
	usernsMu.Lock()
	defer usernsMu.Unlock()
	if f, ok := usernsCache[key]; ok {
		return f, nil
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args[0] = holderArg0
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: ownerUID, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: ownerGID, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/user")
	stdin.Close()
	_ = cmd.Wait()
	if err != nil {
		return nil, err
	}
	usernsCache[key] = f
	return f, nil
}

// holderMain is the namespace holder: it waits for its stdin to close.
func holderMain() int {
	var b [1]byte
	_, _ = os.Stdin.Read(b[:])
	return 0
}

func sleepBriefly() { time.Sleep(20 * time.Millisecond) }

// dropIdentity is the host identity an attempt runs as when flakegate
// runs as root: nobody, which owns nothing.
func dropIdentity() (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return -1, -1, false
	}
	uid, gid = 65534, 65534
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) > 3 && f[0] == "nobody" {
				u, err1 := strconv.Atoi(f[2])
				g, err2 := strconv.Atoi(f[3])
				if err1 == nil && err2 == nil && u != 0 && g != 0 {
					uid, gid = u, g
				}
			}
		}
	}
	return uid, gid, true
}
