package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// overlayHelper mounts the overlay of args[0] (the tree) with its layers in
// args[1], then execs args[2:] (bwrap and its arguments) in the same
// environment; with no command it only mounts (the probe). It runs in the
// private mount namespace its parent made; it refuses to mount in its
// parent's namespace.
func overlayHelper(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "flakegate: overlay helper: missing arguments")
		return overlayExit
	}
	tree, layer, argv := args[0], args[1], args[2:]
	if err := mountOverlay(tree, layer); err != nil {
		fmt.Fprintf(os.Stderr, "flakegate: cannot mount the attempt's overlay on %s: %v\n", tree, err)
		return overlayExit
	}
	if len(argv) == 0 {
		return 0
	}
	err := unix.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "flakegate: cannot run %s: %v\n", argv[0], err)
	return overlayExit
}

// mountOverlay mounts over tree an overlay whose lower layer is tree and
// whose upper and work folders are in layer, and moves the working
// directory onto it.
func mountOverlay(tree, layer string) error {
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt")
	if err1 != nil || err2 != nil || self == parent {
		return errors.New("not in a private mount namespace")
	}
	upper, work := filepath.Join(layer, "upper"), filepath.Join(layer, "work")
	for _, p := range []string{tree, upper, work} {
		if !filepath.IsAbs(p) || strings.ContainsAny(p, ",:\\") {
			return fmt.Errorf("%q: an overlay path must be absolute, without ',', ':' or '\\'", p)
		}
	}
	wd, _ := os.Getwd()
	opts := "lowerdir=" + tree + ",upperdir=" + upper + ",workdir=" + work
	if err := unix.Mount("overlay", tree, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return err
	}
	if wd != "" {
		_ = unix.Chdir(wd) // into the overlay when wd is in the tree
	}
	return nil
}

// newLayer makes an attempt's layer folder: 0700, with empty upper and
// work folders, under os.TempDir().
func newLayer() (string, error) {
	dir, err := os.MkdirTemp("", layerPattern())
	if err != nil {
		return "", err
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// overlayCommand is the command that runs bwrap with args on an overlay of
// tree with its layers in layer: flakegate's own binary as the helper, in
// a new mount namespace (Go makes it private: no mount propagates back).
func overlayCommand(tree, layer, bwrap string, args []string) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe", append([]string{tree, layer, bwrap}, args...)...)
	cmd.Args[0] = overlayArg0
	return cmd
}

// overlayAttr is sandboxAttr in a new mount namespace.
func overlayAttr() *syscall.SysProcAttr {
	a := sandboxAttr()
	a.Unshareflags = syscall.CLONE_NEWNS
	return a
}

func probeOverlay(tree string) error {
	layer, err := newLayer()
	if err != nil {
		return err
	}
	defer os.RemoveAll(layer)
	cmd := overlayCommand(tree, layer, "", nil)
	cmd.Args = cmd.Args[:3] // no command: mount, then exit
	cmd.SysProcAttr = overlayAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}
