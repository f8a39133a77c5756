package runner

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Sandbox is the bubblewrap (bwrap) jail an attempt runs in. Inside it
// the whole file system is read-only, with these changes: an empty,
// private /tmp, /run and $HOME; the Hide paths gone (empty folders, or
// /dev/null for a file); the RO paths bound read-only and the RW paths
// and Tree read-write, each at its own path. It has its own PID namespace
// with its own /proc (the attempt cannot see or signal flakegate or any
// other process, and everything it starts dies with it), its own IPC and
// host name, a new session (no terminal to inject into), and no network
// unless Network is set. The environment is exactly Command.Env.
type Sandbox struct {
	// Bwrap is the bwrap binary, an absolute path.
	Bwrap string
	// Tree is the attempt's tree, bound read-write. Command.Dir must be
	// inside it.
	Tree string
	// Hide lists host paths the attempt must not see: the repository's
	// git folder, other worktrees, the store, the output folder,
	// flakegate's binary. Missing paths are skipped.
	Hide []string
	// RO and RW are host paths shared read-only and read-write; a missing
	// RO path is skipped, a missing RW path fails the attempt.
	RO, RW []string
	// Home is $HOME inside, an empty tmpfs; "" means /tmp/home.
	Home string
	// Network keeps the host's network; otherwise only a loopback exists.
	Network bool
	// Overlay runs the attempt on a throwaway overlay of Tree (overlay.go):
	// Tree itself is never written, the attempt's writes are dropped when
	// it ends. The caller checks ProbeOverlay first.
	Overlay bool
}

// statusFD is the descriptor of bwrap's --json-status-fd in the child:
// ExtraFiles[0].
const statusFD = "3"

// args returns bwrap's arguments for running argv in dir.
func (s *Sandbox) args(dir string, argv []string) []string {
	a := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	}
	covered := []string{"/tmp"}
	// Sockets of local services (a database, a container engine) live
	// under /run; connect(2) works on a read-only mount.
	for _, d := range []string{"/run", "/var/run"} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			a = append(a, "--tmpfs", d)
			covered = append(covered, d)
		}
	}
	hide := append([]string(nil), s.Hide...)
	sort.Strings(hide) // a parent before its children
	for _, p := range hide {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || p == "/" || under(p, covered) {
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			a = append(a, "--tmpfs", p)
			covered = append(covered, p)
		default:
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	home := s.Home
	if home == "" {
		home = "/tmp/home"
	}
	if under(home, []string{"/tmp"}) {
		a = append(a, "--dir", home)
	} else {
		a = append(a, "--tmpfs", home)
	}
	for _, p := range s.RO {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range s.RW {
		a = append(a, "--bind", p, p)
	}
	a = append(a, "--bind", s.Tree, s.Tree,
		"--chdir", dir,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--die-with-parent", "--new-session",
		"--json-status-fd", statusFD)
	if !s.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--")
	return append(a, argv...)
}

// under reports whether p is one of dirs or inside one of them.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// bwrapStatus is what bwrap said on its status descriptor: whether the
// command ran to an exit code, and which.
type bwrapStatus struct {
	exited   bool
	exitCode int
}

// readStatus reads bwrap's JSON status objects until EOF.
func readStatus(r io.Reader) bwrapStatus {
	var st bwrapStatus
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return st
		}
		if v, ok := m["exit-code"].(float64); ok {
			st.exited, st.exitCode = true, int(v)
		}
	}
}
