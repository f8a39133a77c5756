package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The sandbox helper is flakegate re-executed (argv[0] helperArg0, the
// helperSpec as JSON in argv[1], or on its standard input when argv[1] is
// "-": a spec over 64 KiB) between flakegate and bwrap. It does
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
//   - without root, in a user and mount namespace of its own (the user
//     namespace maps its uid and gid 0 to flakegate's and nothing else,
//     so its capabilities reach only what the namespace owns): the same
//     layer, tmpfs and root, with the tree's overlay on it (overlayfs
//     with userxattr), or a bind of the attempt's fresh copy, and no
//     idmaps (the attempt writes as flakegate's user, its only uid);
//   - always: it joins the attempt's cgroup (or sets rlimits where there
//     is none) before bwrap starts, and leaves it once bwrap has;
//   - after bwrap: it reports on its report descriptor which size-limited tmpfs the
//     attempt filled, then exits as bwrap did.
//
// The mounts live in the helper's mount namespace only, and go away with
// it: nothing is left on the host when an attempt is killed.

func helperMain(args []string) int {
	var spec helperSpec
	defer func() { coverAtExit(spec.CoverDir) }()
	if len(args) == 0 {
		args = []string{""}
	}
	fds, err := parseFDs(args[1:])
	if err == nil {
		err = fds.output() // first: what the helper says goes to the attempt's output
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper:", err)
		return helperExit
	}
	// No descriptor of the helper's reaches bwrap and the attempt but the
	// ones handed to it below: not the report (an attempt could write
	// its own), not the user namespaces, and not whatever flakegate
	// itself inherited (a CI runner's pipes and sockets).
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper: cannot close its descriptors on exec:", err)
		return helperExit
	}
	if args[0] == specOnStdin {
		b, err := readSpec()
		if err != nil {
			fmt.Fprintln(os.Stderr, "flakegate: sandbox helper: cannot read its spec:", err)
			return helperExit
		}
		args[0] = string(b)
	}
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper: bad spec:", err)
		return helperExit
	}
	spec.fds = fds
	spec.uncover() // before bwrap inherits the helper's environment
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
	// The login uid is the thread's: set it on the thread that starts
	// bwrap (a fork copies the forking thread's), and keep that thread.
	runtime.LockOSThread()
	if err := pinLoginUID(spec.UID); err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper:", err)
		return helperExit
	}
	cmd, err := spec.bwrap()
	if err != nil {
		fmt.Fprintln(os.Stderr, "flakegate: sandbox helper:", err)
		return helperExit
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

// bwrap is the helper's bwrap command: spec.Argv with the status and
// seccomp descriptors handed on by bwrap's own flags, and, for a standby,
// the attempt line's descriptor at execFD, where its waiting command
// reads it.
func (spec *helperSpec) bwrap() (*exec.Cmd, error) {
	status, filter := spec.fds.file(fdStatus), spec.fds.file(fdSeccomp)
	if status == nil || filter == nil {
		return nil, errors.New("no status or seccomp descriptor was given")
	}
	var h handOff
	fdArgs := []string{"--json-status-fd", strconv.Itoa(h.add(status)), "--seccomp", strconv.Itoa(h.add(filter))}
	cmd := exec.Command(spec.Argv[0], append(fdArgs, spec.Argv[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if spec.Standby {
		line := spec.fds.file(fdAttempt)
		if line == nil {
			return nil, errors.New("a standby was given no attempt descriptor")
		}
		if n := h.add(line); n != execFD {
			return nil, fmt.Errorf("the attempt descriptor would be %d in bwrap, not %d", n, execFD)
		}
		cmd.Env = execEnv
	}
	cmd.ExtraFiles = h.files
	return cmd, nil
}

// output makes the descriptor given as fdOutput, the attempt's output,
// the helper's stdout and stderr, which bwrap and the attempt inherit;
// without one the helper keeps its own. The helper starts with both at
// /dev/null: nothing the Go runtime prints as it starts (a binary built
// with go build -cover and no GOCOVERDIR warns so) reaches the attempt.
func (f helperFDs) output() error {
	n := f.get(fdOutput)
	if n < 0 {
		return nil
	}
	for _, std := range []int{1, 2} {
		if err := unix.Dup3(n, std, 0); err != nil {
			return fmt.Errorf("cannot make the attempt's output its own: %w", err)
		}
	}
	delete(f, fdOutput)
	return unix.Close(n)
}

// pinLoginUID sets the calling thread's audit login uid, when it is unset, to
// the attempt's identity (uid; the helper's own when uid is -1), before
// bwrap starts: the attempt's processes inherit it, and changing a set
// login uid needs CAP_AUDIT_CONTROL. A process whose login uid is unset
// (a CI runner's service, a container) may set it once without
// privilege, and each such write takes the next number of a counter the
// kernel keeps for the whole machine (/proc/self/sessionid shows it): an
// attempt that could write it would leave a count a retry reads. Without
// audit in the kernel there is no such file, and no counter.
func pinLoginUID(uid int) error {
	const file = "/proc/thread-self/loginuid"
	const unset = "4294967295"
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil && strings.TrimSpace(string(b)) != unset {
		return nil
	}
	if uid < 0 {
		uid = os.Getuid()
	}
	werr := os.WriteFile(file, []byte(strconv.Itoa(uid)), 0)
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) == unset {
		return fmt.Errorf("cannot set its audit login uid, which an attempt could then set (and move the machine's session counter): %v", werr)
	}
	return nil
}

// report writes which of the attempt's tmpfs are full on its report
// descriptor;
// a prepare that exited 0 (ok) within its bounds has its layers kept
// first (keepLayers), and the report says why they could not be.
func (spec *helperSpec) report(ok bool) {
	f := spec.fds.file(fdReport)
	if f == nil || spec.Layer == "" {
		return
	}
	defer f.Close()
	var rep helperReport
	dirs := []struct{ dir, name string }{{"tmp", "tmp"}, {"shm", "tmp"}, {"home", "tmp"}, {"upper", "disk"}}
	for _, m := range dirs {
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
	if spec.Userns {
		// The parent's namespaces are out of reach from here: a mount
		// namespace owned by the helper's own user namespace is a new one.
		if !ownMountNamespace() {
			return errors.New("not in a mount namespace of its own user namespace")
		}
	} else {
		self, err1 := os.Readlink("/proc/self/ns/mnt")
		parent, err2 := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt")
		if err1 != nil || err2 != nil || self == parent {
			return errors.New("not in a private mount namespace")
		}
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
	// $HOME is the identity's: as root the unprivileged one; in the
	// helper's user namespace its uid 0, which is flakegate's user, as
	// the attempt is.
	uid, gid := spec.UID, spec.GID
	if spec.Userns {
		uid, gid = 0, 0
	}
	owner := "uid=" + strconv.Itoa(uid) + ",gid=" + strconv.Itoa(gid)
	size := "size=" + strconv.FormatInt(spec.Tmp, 10)
	for _, m := range []struct{ dir, opts string }{{"tmp", "mode=1777," + size}, {"shm", "mode=1777," + size}, {"home", "mode=0700," + owner + "," + size}} {
		if err := unix.Mount("tmpfs", filepath.Join(L, m.dir), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, m.opts); err != nil {
			return fmt.Errorf("the %s tmpfs: %w", m.dir, err)
		}
	}
	if err := goTelemetryOff(filepath.Join(L, "home"), uid, gid); err != nil {
		return fmt.Errorf("the home tmpfs: %w", err)
	}
	if err := spec.buildRoot(); err != nil {
		return err
	}
	return spec.mountAttempt()
}

// goTelemetryOff writes the Go telemetry mode "off" into the attempt's
// new home (.config/go/telemetry/mode, the identity's, as `go telemetry
// off` would): every go command would otherwise count into files there
// and, once a day, which a fresh home always is, start a child in a
// session of its own, which the filter refuses ("can't start telemetry
// child process" in every go command's output). Every attempt finds the
// same file.
func goTelemetryOff(home string, uid, gid int) error {
	dir := home
	for _, d := range []string{".config", "go", "telemetry"} {
		dir = filepath.Join(dir, d)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
	}
	mode := filepath.Join(dir, "mode")
	if err := os.WriteFile(mode, []byte("off\n"), 0o644); err != nil {
		return err
	}
	return os.Chown(mode, uid, gid)
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
		if spec.Overlay { // into the upper layer, which goes with the attempt (a copy has them already)
			if _, err := WriteTreeFiles(filepath.Join(L, "tree"), spec.TreeFiles); err != nil {
				return err
			}
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
	bind := func(src, dst string) error {
		if spec.Userns { // the tree is flakegate's user's already
			return unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
		}
		return idmapBind(src, dst, spec.fds.get(fdTreeUserns))
	}
	if !spec.Overlay {
		return bind(spec.Tree, filepath.Join(L, "tree"))
	}
	if err := bind(spec.Tree, filepath.Join(L, "lower")); err != nil {
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
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if spec.Userns {
		opts += ",userxattr" // the only overlay a user namespace may mount
	}
	return overlayAt(L, "tree", opts)
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
// repository's cache (read-only: the overlay never writes a lower
// layer), and whose upper layer is on the attempt's tmpfs (a prepare's
// too: the helper copies it into the layer folder when the prepare
// succeeds); for the fill, the repository's cache itself. Metadata-only
// copy-ups (Go touches
// the entries it uses) copy no data where the kernel allows metacopy.
func (spec *helperSpec) mountGoCache() error {
	L := spec.Layer
	if spec.FillGoCache != "" { // the fill: the cache itself, the identity's
		if spec.UID >= 0 {
			if err := os.Chown(spec.FillGoCache, spec.UID, spec.GID); err != nil {
				return err
			}
		}
		if err := os.Mkdir(filepath.Join(L, "gocache"), 0o711); err != nil {
			return err
		}
		if err := unix.Mount(spec.FillGoCache, filepath.Join(L, "gocache"), "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("the Go build cache %s: %w", spec.FillGoCache, err)
		}
		return nil
	}
	if len(spec.GoCache) == 0 && spec.Prepared == "" {
		return nil
	}
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
			err = idmapBind(g.Src, dst, spec.fds.get(fdCacheUserns))
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
	if spec.Userns {
		return overlayAt(L, "gocache", opts+",userxattr") // a user namespace's overlay: no metacopy
	}
	if err := overlayAt(L, "gocache", opts+",metacopy=on"); err == nil {
		return nil
	}
	return overlayAt(L, "gocache", opts)
}

// idmapBind binds src at dst as seen through the user namespace on
// descriptor usernsFD (-1: none given): the files of the tree's owner appear as the unprivileged
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

// ownMountNamespace reports whether this process's mount namespace is
// owned by its user namespace, one that is not the initial one.
func ownMountNamespace() bool {
	mnt, err := unix.Open("/proc/self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(mnt)
	owner, err := unix.IoctlRetInt(mnt, unix.NS_GET_USERNS)
	if err != nil {
		return false
	}
	defer unix.Close(owner)
	var a, b unix.Stat_t
	if unix.Fstat(owner, &a) != nil || unix.Stat("/proc/self/ns/user", &b) != nil {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	f := strings.Fields(string(m))
	initial := err != nil || len(f) < 3 || f[2] == "4294967295"
	return a.Ino == b.Ino && a.Dev == b.Dev && !initial
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

// maxSpecArg is the largest spec passed as the helper's argument; a
// larger one comes on its standard input (specOnStdin).
const maxSpecArg = 64 << 10

// specOnStdin, as the helper's argument, says its spec comes on its
// standard input.
const specOnStdin = "-"

// readSpec reads the helper's spec from its standard input, then points
// the standard input at /dev/null: what bwrap and the attempt inherit.
func readSpec() ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err != nil {
		return nil, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	if err := unix.Dup2(int(null.Fd()), 0); err != nil {
		return nil, err
	}
	return b, nil
}

// helperCommand is flakegate's own binary as the helper, with env (the
// attempt's, or a standby's own) as its environment.
func helperCommand(spec *helperSpec, env []string) (*exec.Cmd, error) {
	env = spec.cover(env)
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", string(b))
	if len(b) > maxSpecArg {
		// One argument holds at most 128 KiB (MAX_ARG_STRLEN): a batch of
		// a few thousand long node ids is more. The spec comes on the
		// helper's standard input instead, which it reads first and then
		// points at /dev/null, as every attempt's is.
		cmd = exec.Command("/proc/self/exe", specOnStdin)
		cmd.Stdin = bytes.NewReader(b)
	}
	cmd.Args[0] = helperArg0
	cmd.Env = env
	attr := sandboxAttr()
	if spec.Layer != "" {
		attr.Unshareflags = syscall.CLONE_NEWNS // Go makes it private: no mount propagates back
	}
	if spec.Userns {
		// A user namespace of its own, made before the mount namespace
		// (Go unshares that after writing the maps), which it then owns.
		// Its uid 0 is flakegate's user and nothing else is mapped: the
		// helper keeps its capabilities across exec there (for its
		// mounts), and they reach nothing the namespace does not own.
		// bwrap, run by it, maps the attempt back to flakegate's uid.
		attr.Cloneflags = syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
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

// shareIdentity is the host identity that owns what an attempt writes to
// a sandbox.rw folder when flakegate runs as root: neither root, nor
// flakegate's user, nor nobody (whom the attempt runs as, and who owns
// nothing). It is the first uid from 65533 down, and the first gid,
// that /etc/passwd and /etc/group do not name, so that no account of
// this host owns the files; the same on every check of the host.
var shareIdentity = sync.OnceValues(func() (int, int) {
	return freeID("/etc/passwd", 65533), freeID("/etc/group", 65533)
})

// freeID is the first id from start down that the file's third field
// never names (60000 when all are taken).
func freeID(file string, start int) int {
	taken := map[int]bool{}
	if b, err := os.ReadFile(file); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Split(line, ":"); len(f) > 2 {
				if id, err := strconv.Atoi(f[2]); err == nil {
					taken[id] = true
				}
			}
		}
	}
	for id := start; id > 60000; id-- {
		if !taken[id] {
			return id
		}
	}
	return 60000
}

// handedOver records the sandbox.rw folders given to the share identity
// by this process.
var (
	handedMu   sync.Mutex
	handedOver = map[string]bool{}
)

// handOver gives a sandbox.rw folder, and what in it the tree's owner
// owns, to the share identity, once per process: the attempt, seen as
// that identity through the folder's idmapped mount, can then write what
// it could write before, and what it writes is the share identity's on
// the host. Files of other owners stay theirs (the attempt could not
// write them before either). The walk opens every folder relative to
// its parent without following symbolic links, so a link an attempt
// left (or swaps in while the walk runs) cannot make root change an
// owner outside the folder.
func handOver(dir string, owner [2]int, uid, gid int) error {
	handedMu.Lock()
	defer handedMu.Unlock()
	if handedOver[dir] {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return handOverEntry(unix.AT_FDCWD, dir, owner, uid, gid)
		}
		return err
	}
	if err := handOverEntry(fd, "", owner, uid, gid); err != nil {
		unix.Close(fd)
		return err
	}
	if err := handOverTree(fd, owner, uid, gid); err != nil {
		return fmt.Errorf("handing %s to the sandbox's share identity: %w", dir, err)
	}
	handedOver[dir] = true
	return nil
}

// chownCopy gives an attempt's fresh copy dir, and what in it the tree's
// owner owns, to uid and gid, as handOver does for a share, but for
// every attempt (each has a copy of its own at the same path).
func chownCopy(dir string, owner [2]int, uid, gid int) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := handOverEntry(fd, "", owner, uid, gid); err != nil {
		unix.Close(fd)
		return err
	}
	if err := handOverTree(fd, owner, uid, gid); err != nil {
		return fmt.Errorf("handing the attempt's copy %s to the sandbox's share identity: %w", dir, err)
	}
	return nil
}

// handOverTree hands over every entry under the open folder fd, and
// closes it.
func handOverTree(fd int, owner [2]int, uid, gid int) error {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := handOverEntry(fd, e.Name(), owner, uid, gid); err != nil {
			return err
		}
		if !e.IsDir() {
			continue
		}
		sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOENT) {
			continue // swapped for a link or removed since it was listed: not followed
		}
		if err != nil {
			return err
		}
		if err := handOverTree(sub, owner, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// handOverEntry gives name under fd ("" for fd itself) to uid and gid
// where the owner owns it, without following a link.
func handOverEntry(fd int, name string, owner [2]int, uid, gid int) error {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, flags); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	nu, ng := -1, -1
	if int(st.Uid) == owner[0] {
		nu = uid
	}
	if int(st.Gid) == owner[1] {
		ng = gid
	}
	if nu == -1 && ng == -1 {
		return nil
	}
	return unix.Fchownat(fd, name, nu, ng, flags)
}
