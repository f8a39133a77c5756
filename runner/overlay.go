package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// The overlay mode of a sandboxed attempt (Sandbox.Overlay): the attempt
// runs on a throwaway overlay of its tree instead of the tree itself. The
// tree is the overlay's read-only lower layer; every write of the attempt
// lands in an upper layer in a fresh 0700 folder under os.TempDir(),
// removed when the attempt ends. So the tree is never written by an
// attempt and needs no reset between attempts, and an attempt costs what
// it wrote, not what the repository holds.
//
// The overlay is mounted by flakegate itself, re-executed as a helper
// (argv[0] overlayArg0) in a new, private mount namespace; the helper
// mounts the overlay over the tree's own path, then becomes bwrap. The
// mount is never visible in the host's mount namespace, and it goes away
// with the namespace when the attempt's last process ends, however
// flakegate ends (bwrap dies with it).

// overlayArg0 is argv[0] of flakegate re-executed as the overlay helper.
const overlayArg0 = "flakegate-overlay-helper"

// overlayExit is the helper's exit code when it cannot mount or exec.
const overlayExit = 125

// NoOverlayEnv names the environment variable that, set to 1 in
// flakegate's environment, forces the reset path (tests use it).
const NoOverlayEnv = "FLAKEGATE_NO_OVERLAY"

// selfHelper records that this binary runs the helper: MaybeOverlayExec
// was called first in main (or TestMain). Without it the overlay mode is
// never chosen, since re-executing a binary that does not know the helper
// would run that binary instead.
var selfHelper atomic.Bool

// MaybeOverlayExec must be the first call of main (and of TestMain in
// test binaries that run overlay attempts in-process). When this process
// is flakegate re-executed as the overlay helper it does the helper's work
// and exits; otherwise it returns, and the overlay mode becomes available.
func MaybeOverlayExec() {
	if len(os.Args) > 0 && os.Args[0] == overlayArg0 {
		os.Exit(overlayHelper(os.Args[1:]))
	}
	selfHelper.Store(true)
}

// ProbeOverlay reports why attempts in tree cannot run on an overlay, nil
// when they can: it mounts one in a private mount namespace the way an
// attempt does, and unmounts it (the namespace ends with the probe).
func ProbeOverlay(tree string) error {
	if os.Getenv(NoOverlayEnv) == "1" {
		return errors.New(NoOverlayEnv + "=1")
	}
	if !selfHelper.Load() {
		return errors.New("this binary does not run the overlay helper")
	}
	return probeOverlay(tree)
}

// layerPrefix starts the name of an attempt's layer folder; the pid of
// the flakegate that made it follows.
const layerPrefix = "flakegate-overlay-"

func layerPattern() string { return layerPrefix + strconv.Itoa(os.Getpid()) + "-*" }

// SweepLayers removes the layer folders that a flakegate killed in the
// middle of an attempt left under os.TempDir(): those whose flakegate is
// no longer running (its pid follows layerPrefix). A folder of a running
// flakegate, or one whose pid cannot be read, is left alone. It returns
// how many it removed.
func SweepLayers() int {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), layerPrefix+"*-*"))
	n := 0
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), layerPrefix)
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if os.RemoveAll(d) == nil {
			n++
		}
	}
	return n
}
