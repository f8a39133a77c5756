package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// helperArg0 is argv[0] of flakegate re-executed as the sandbox helper
// (helper_linux.go); holderArg0 of flakegate re-executed to hold a user
// namespace open while it is opened.
const (
	helperArg0 = "flakegate-sandbox-helper"
	holderArg0 = "flakegate-userns-holder"
)

// helperExit is the helper's exit code when it cannot build the sandbox.
const helperExit = 125

// NoOverlayEnv names the environment variable that, set to 1 in
// flakegate's environment, forces a fresh copy of the tree per attempt
// instead of an overlay (tests use it). Only the
// CLI reads it (Options.NoOverlay and friends pass it on).
const NoOverlayEnv = "FLAKEGATE_NO_OVERLAY"

// selfHelper records that this binary runs the helper: MaybeOverlayExec
// was called first in main (or TestMain). Without it the helper is never
// used, since re-executing a binary that does not know the helper would
// run that binary instead.
var selfHelper atomic.Bool

// MaybeOverlayExec must be the first call of main (and of TestMain in
// test binaries that run sandboxed attempts in-process). When this
// process is flakegate re-executed as the sandbox helper it does the
// helper's work and exits; otherwise it returns, and the helper becomes
// available.
func MaybeOverlayExec() {
	if len(os.Args) > 0 {
		switch os.Args[0] {
		case helperArg0:
			os.Exit(helperMain(os.Args[1:])) // its spec, then its descriptors by name
		case holderArg0:
			os.Exit(holderMain())
		}
	}
	selfHelper.Store(true)
}

// layerPrefix starts the name of an attempt's layer folder; the pid of
// the flakegate that made it follows.
const layerPrefix = "flakegate-overlay-"

func layerPattern() string { return layerPrefix + strconv.Itoa(os.Getpid()) + "-*" }

// SweepLayers removes the layer folders that a flakegate killed in the
// middle of an attempt left under os.TempDir(): those whose flakegate is
// no longer running (its pid follows layerPrefix). A folder of a running
// flakegate, or one whose pid cannot be read, is left alone. It returns
// how many it removed. (The layer's content lived on a tmpfs of the
// attempt's mount namespace; only the empty folder is left.)
func SweepLayers() int {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), layerPrefix+"*-*"))
	if os.TempDir() != "/tmp" {
		more, _ := filepath.Glob(filepath.Join("/tmp", layerPrefix+"*-*"))
		dirs = append(dirs, more...)
	}
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

var (
	usernsMu    sync.Mutex
	usernsCache = map[[4]int]*os.File{}
)

// layerBase is os.TempDir() when every other user may walk through it (bwrap,
// run as the unprivileged identity, opens the layer's folders by path),
// else /tmp.
func layerBase() string {
	dir := os.TempDir()
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if p == "/" {
			return dir
		}
	}
}
