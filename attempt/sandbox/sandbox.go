// Package sandbox is the whole sandbox an attempt runs in: the
// bubblewrap jail and its root (sandbox.go, root_linux.go), the staged
// /etc (etc.go), the helper that flakegate re-executes to build it
// (helper.go, helper_linux.go, its descriptors by name in handoff.go),
// the overlays and fresh copies of the tree (overlay.go, freshtree*.go,
// persist_linux.go), the attempt cgroups (cgroup_linux.go), the seccomp
// filter (seccomp_linux.go), a prepare's outbound proxy (outbound*.go),
// the attempt's environment (env.go) and the level probe (level.go).
//
// A Sandbox made by New is a value its owner uses for many attempts
// (attempt.Command.Sandbox) and closes: it holds the standbys
// (standby_linux.go), the sandboxes built for the next attempts while one
// runs. There is no package-level pool. The one package-level step is
// MaybeOverlayExec, the first call of main: a re-executed flakegate
// becomes the helper there, before anything else runs.
package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Sandbox is the bubblewrap (bwrap) jail an attempt runs in:
//
//   - no privilege: its own user namespace (no nested one), every
//     capability dropped, no new privileges, a seccomp filter
//     (seccomp_linux.go), and, when flakegate runs as root, a host
//     identity that owns nothing (nobody), reached through the sandbox
//     helper (helper_linux.go);
//   - a minimal root: /usr and the system folders, a curated /etc, the
//     toolchains the command's PATH names (never the host's Go caches),
//     the repository's Go caches and the config's RO and RW paths, and
//     nothing else of the host;
//   - its tree at one fixed path, TreeMount, the same for every attempt
//     and every retry; a fixed host name; private /tmp, /dev/shm and
//     $HOME; its own pid, IPC, UTS and cgroup namespaces, and no network
//     unless Network is set;
//   - bounded by Limits: memory and processes by a per-attempt cgroup
//     (or rlimits where there is none), the tmpfs by their size, and what
//     it writes to its tree by the size of the overlay's upper layer.
//
// The environment is exactly attempt.Command.Env.
type Sandbox struct {
	// Bwrap is the bwrap binary, an absolute path.
	Bwrap string
	// Tree is the attempt's tree on the host; it is seen at TreeMount.
	// attempt.Command.Dir must be inside it.
	Tree string
	// Hide lists host paths the attempt must not see even where a shared
	// path holds them: the repository's git folder, other worktrees, the
	// store, the output folder, flakegate's binary. Missing paths are
	// skipped.
	Hide []string
	// RO and RW are host paths shared read-only and read-write; a missing
	// RO path is skipped, a missing RW path fails the attempt.
	RO, RW []string
	// Home is $HOME inside, an empty tmpfs; "" means /tmp/home.
	Home string
	// Network keeps the host's network; otherwise only a loopback exists.
	Network bool
	// Overlay runs the attempt on a throwaway overlay of Tree: Tree itself
	// is never written, the attempt's writes are dropped when it ends.
	// Probe says whether it can be used.
	Overlay bool
	// Limits bound the attempt; a zero field is no bound.
	Limits Limits
	// Level is what Probe found this host allows; the zero Level runs
	// bwrap alone, as an unprivileged caller would.
	Level Level
	// GoCache is the repository's Go build cache, filled by flakegate from
	// the base (FillGoCache), "" for none; never the host's own cache. The
	// attempt's cache, at SandboxGoCache, is an overlay whose lower layers
	// are Prepared's cache and this folder, read-only, and whose upper
	// layer is thrown away with the attempt: warm, and nothing an attempt
	// writes there is seen by another one. Without root it is bwrap's
	// --tmp-overlay of the same lower layers.
	GoCache string
	// FillGoCache makes this attempt the fill of GoCache: the folder
	// itself is its Go build cache, read-write. Only for trusted code
	// (the base), never a candidate's attempt.
	FillGoCache bool
	// GoCacheBuilt are more read-only lower layers of the attempt's Go
	// cache, over GoCache: what a check's build step (an attempt that
	// ran no test code, Persist) kept of the same tree. As root only.
	GoCacheBuilt []string
	// GoModCache is the attempt's Go module cache, a host folder bound
	// read-only at SandboxGoModCache ("" for none): only the modules the
	// base's go.sum names, never the host's whole module cache.
	GoModCache string
	// Prepared is a prepared layer: a folder holding tree/ (laid
	// read-only over the tree) and gocache/ (over the host's Go cache),
	// written by a prepare (Persist). Overlay mode only.
	Prepared string
	// CopyDir is where the attempts' fresh copies of Tree are made when
	// Level.Copy (see copyPath): best on Tree's own file system, where a
	// reflink can share its blocks; "" is os.TempDir().
	CopyDir string
	// Persist makes this attempt a prepare: what it writes to its tree and
	// to its Go cache, bounded by Limits.Disk, is kept in Persist/tree and
	// Persist/gocache when it exits 0. Overlay mode only.
	Persist string
	// Outbound gives the attempt (a prepare) outbound access through
	// flakegate's proxy, in its own network namespace (see Outbound);
	// Network must be false. As root only.
	Outbound *Outbound
	// TreeFiles are files added to this attempt's own tree (TreeFile):
	// the known answers of a batch. An attempt with them is built when
	// it starts, never as a standby: a standby is built before its files
	// are known.
	TreeFiles []TreeFile

	oneShot bool  // no standby (the probe's attempts)
	pool    *pool // the standbys and the cgroups being removed (New); nil for none
}

// New is the sandbox that s describes, ready to hold its standbys: as
// root, or in the helper's user namespace, each attempt on an overlay
// takes a sandbox built for it while the attempt before ran, and the
// next ones are built as it runs. Copies of it (another Tree, a prepared
// layer) share them. Its owner calls Close when done. A Sandbox that is
// not made by New builds each attempt's sandbox when the attempt starts.
func New(s Sandbox) *Sandbox {
	s.pool = newPool()
	return &s
}

// Close ends the sandbox's standbys and waits until the cgroups of its
// ended attempts are removed. Attempts may still run after it, without
// standbys. The staged /etc stays for the next run.
func (s *Sandbox) Close() {
	if s != nil {
		s.pool.close()
	}
}

// Reclaimed reports whether each attempt runs in a memory cgroup of its
// own that is reclaimed after it (cgroup_linux.go): what it read leaves
// the page cache with it. Otherwise flakegate sweeps the folders below
// the attempts' writable layers around every attempt
// (pagecache_linux.go), and a caller that can put those folders on a
// tmpfs without swap (Resident) spares the sweep.
func (s *Sandbox) Reclaimed() bool {
	return s.Level.Cgroup != "" && (s.Limits.Memory > 0 || s.Limits.Pids > 0)
}

// Limits bound one attempt.
type Limits struct {
	Memory int64 // bytes, all its processes together
	Pids   int   // processes and threads at once
	Tmp    int64 // bytes, each of /tmp, /dev/shm and $HOME
	Disk   int64 // bytes written to its tree (overlay mode)
}

// TreeMount is where every attempt sees its tree.
const TreeMount = "/sandbox/tree"

// sandboxHostname is the host name inside every attempt.
const sandboxHostname = "flakegate"

// systemDirs are bound read-only (or recreated as the symlinks they are).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the parts of /etc a test may need: users and groups (no
// shadow), name service, certificates, time zone, the dynamic linker,
// alternatives and the Python site configuration. Keys, shadow files,
// ssh and runner configuration stay out.
var etcFiles = []string{
	"passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
	"services", "protocols", "networks", "mime.types", "localtime", "timezone",
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs", "pki/ca-trust",
	"os-release", "debian_version", "lsb-release", "locale.alias", "locale.conf",
	"python3", "python3.11", "python3.12", "python3.13", "fonts", "magic", "mailcap",
}

// toolManagers are the folders in a home folder that hold a whole
// toolchain reached through a PATH entry inside them (pyenv's shims run
// pyenv, which reads its versions folder).
var toolManagers = []string{".pyenv", ".nvm", ".volta", ".asdf", ".rbenv", ".nodenv", "go", "sdk", ".local/lib", ".local/bin"}

// attemptView is the sandbox of one attempt: the helper's spec and
// bwrap's arguments.
type attemptView struct {
	helper *helperSpec
	args   []string
}

// homeDirs are the folders that hold users' homes.
func inHome(p string) (home string, ok bool) {
	if p == "/root" || strings.HasPrefix(p, "/root/") {
		return "/root", true
	}
	if rest, ok := strings.CutPrefix(p, "/home/"); ok {
		user, _, _ := strings.Cut(rest, "/")
		return "/home/" + user, user != ""
	}
	return "", false
}

// toolchainPaths are the host folders that the command's PATH (in env)
// needs shared read-only: for each entry outside the system folders, the
// entry itself, and the toolchain it belongs to (the folder above a bin,
// sbin or shims folder; inside a home folder, only a known tool
// manager's folder, never the home folder itself).
func toolchainPaths(env []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, p := range filepath.SplitList(v) {
			if !filepath.IsAbs(p) {
				continue
			}
			p = filepath.Clean(p)
			if under(p, systemDirs) || p == "/" {
				continue
			}
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
			if home, ok := inHome(p); ok {
				if p == home {
					continue
				}
				add(p)
				for _, m := range toolManagers {
					root := filepath.Join(home, m)
					if p == root || strings.HasPrefix(p, root+"/") {
						add(root)
					}
				}
				continue
			}
			add(p)
			switch filepath.Base(p) {
			case "bin", "sbin", "shims":
				parent := filepath.Dir(p)
				if !isSystemFolder(parent) {
					add(parent)
				}
			}
		}
	}
	return out
}

func isSystemFolder(p string) bool {
	switch p {
	case "/", "/etc", "/var", "/tmp", "/run", "/proc", "/sys", "/dev", "/home", "/root", "/opt", "/srv", "/mnt", "/media", "/boot":
		return true
	}
	return false
}

// view builds the attempt's sandbox for argv in dir (a host path inside
// Tree), with its layer folder when the helper mounts (Level.Root or
// Level.Userns), on tree: Tree itself, or the attempt's fresh copy of it
// (Level.Copy).
//
// The helper builds the whole root (rootOps), as a standby while the
// attempt before runs, as root and in its own user namespace alike, and
// bwrap binds it at / in one step: bwrap reads the mount table once for
// it instead of once for every folder it would bind (about 15 ms an
// attempt).
func (s *Sandbox) view(dir string, argv, env []string, layer, tree string) (*attemptView, error) {
	v := &attemptView{}
	lv := s.Level
	if lv.Root {
		v.helper = &helperSpec{Layer: layer, Tree: tree, Overlay: s.Overlay, UID: lv.UID, GID: lv.GID, Disk: s.Limits.Disk, Tmp: s.Limits.Tmp,
			Prepared: s.Prepared, Persist: s.Persist, TreeFiles: s.TreeFiles}
		v.helper.shareGoCache(s)
	} else if lv.Userns {
		v.helper = &helperSpec{Layer: layer, Tree: tree, Overlay: s.Overlay, UID: -1, GID: -1, Disk: s.Limits.Disk, Tmp: s.Limits.Tmp, Userns: true,
			TreeFiles: s.TreeFiles}
		v.helper.shareGoCache(s)
	} else {
		v.helper = &helperSpec{UID: -1, GID: -1}
	}
	a := []string{
		"--unshare-user", "--disable-userns", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", sandboxHostname,
		"--die-with-parent", "--new-session",
	} // the helper adds --json-status-fd and --seccomp (helperSpec.bwrap)
	if lv.Root {
		a = append(a, "--uid", strconv.Itoa(lv.UID), "--gid", strconv.Itoa(lv.GID))
	} else if lv.Userns { // the helper runs bwrap as its namespace's uid 0: the attempt sees flakegate's uid, as without the helper
		a = append(a, "--uid", strconv.Itoa(os.Geteuid()), "--gid", strconv.Itoa(os.Getegid()))
	}
	if !s.Network {
		a = append(a, "--unshare-net")
	}
	ops := s.rootOps(env)
	if lv.Root || lv.Userns {
		v.helper.Root = ops
		v.helper.RootAt = filepath.Join(layer, "root")
		if dir, err := fixedRoot(); err == nil {
			v.helper.RootAt = dir
		}
		a = append(a, "--dev-bind", v.helper.RootAt, "/", "--proc", "/proc")
	} else {
		a = append(a, s.bwrapArgs(ops, tree)...)
	}
	a = append(a, "--chdir", s.inside(dir), "--")
	v.args = append(a, argv...)
	return v, nil
}

// shareGoCache gives the helper the attempt's Go build cache, as root
// and in its own user namespace alike: the repository's cache
// (s.GoCache) as the read-only lower layer of an overlay whose upper
// layer is on the attempt's tmpfs and goes with it; for the fill, the
// cache itself. Its files are the identity's already (root gives them to
// it; without root they are flakegate's user's): no idmap. bwrap before
// 0.9 cannot lay an overlay itself (no --overlay-src); the helper can.
func (spec *helperSpec) shareGoCache(s *Sandbox) {
	switch {
	case s.GoCache != "" && s.FillGoCache:
		spec.FillGoCache = s.GoCache
	case s.GoCache != "":
		spec.GoCache = nil
		for _, b := range s.GoCacheBuilt {
			spec.GoCache = append(spec.GoCache, cacheLayer{Src: b})
		}
		spec.GoCache = append(spec.GoCache, cacheLayer{Src: s.GoCache})
	}
}

// inside is where dir (a host path inside Tree) is seen in the sandbox.
func (s *Sandbox) inside(dir string) string {
	if rel, err := filepath.Rel(s.Tree, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return filepath.Join(TreeMount, rel)
	}
	return TreeMount
}

// rootOp is one step of building an attempt's root, in order: a
// read-only share of a host path (ro), a read-write one (rw, idmapped to
// the identity as root; a missing one fails the attempt), a symlink
// (link: Dst points to Src), a folder of the layer (layer: tmp, shm,
// home), a hidden path (hide: an empty folder, or /dev/null over a
// file), a mount point (dir), /dev (dev), /proc (proc), the tree (tree)
// and the Go build cache (gocache).
type rootOp struct {
	Op   string `json:"op"`
	Src  string `json:"src,omitempty"`
	Dst  string `json:"dst"`
	File bool   `json:"file,omitempty"`
}

// rootOps is the attempt's root: /usr and the system folders, the staged
// /etc, /proc, /dev, private /tmp, /dev/shm and $HOME, the toolchains the
// command's PATH (in env) names and the RO and RW paths, the tree at
// TreeMount, the hidden paths, and the Go build cache last.
func (s *Sandbox) rootOps(env []string) []rootOp {
	var ops []rootOp
	var roots []string // host paths seen inside at their own path
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				ops = append(ops, rootOp{Op: "link", Src: target, Dst: d})
			}
		case fi.IsDir():
			ops = append(ops, rootOp{Op: "ro", Src: d, Dst: d})
			roots = append(roots, d)
		}
	}
	if etc, err := stagedEtc(); err == nil {
		ops = append(ops, rootOp{Op: "ro", Src: etc, Dst: "/etc"})
	} else { // one bind per file: the same view, about 20 ms slower
		ops = append(ops, rootOp{Op: "dir", Dst: "/etc"})
		for _, f := range etcFiles {
			ops = append(ops, rootOp{Op: "ro", Src: "/etc/" + f, Dst: "/etc/" + f})
		}
	}
	home := s.Home
	if home == "" {
		home = SandboxHome
	}
	ops = append(ops, rootOp{Op: "proc", Dst: "/proc"}, rootOp{Op: "dev", Dst: "/dev"},
		rootOp{Op: "layer", Src: "tmp", Dst: "/tmp"}, rootOp{Op: "layer", Src: "shm", Dst: "/dev/shm"}, rootOp{Op: "layer", Src: "home", Dst: home},
		rootOp{Op: "link", Src: "/tmp", Dst: "/var/tmp"})
	share := func(p string, write bool) {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || under(p, []string{"/proc", "/dev", "/sandbox"}) || p == "/tmp" || p == home || under(home, []string{p}) {
			return
		}
		fi, err := os.Stat(p)
		if err != nil {
			if write {
				ops = append(ops, rootOp{Op: "rw", Src: p, Dst: p}) // missing: the attempt fails
			}
			return
		}
		roots = append(roots, p)
		op := "ro"
		if write {
			op = "rw"
		}
		ops = append(ops, rootOp{Op: op, Src: p, Dst: p, File: !fi.IsDir()})
	}
	var tools []string
	for _, p := range toolchainPaths(env) {
		if !under(p, s.Hide) { // a PATH entry inside the repository or the store stays hidden
			tools = append(tools, p)
		}
	}
	for _, p := range nested(append(tools, s.RO...)) {
		share(p, false)
	}
	for _, p := range s.RW {
		share(p, true)
	}
	ops = append(ops, rootOp{Op: "tree", Dst: TreeMount})
	// Hidden paths inside what is shared: an empty folder, or /dev/null
	// for a file. Parents before their children.
	hide := append([]string(nil), s.Hide...)
	sort.Strings(hide)
	var hidden []string
	for _, p := range hide {
		p = filepath.Clean(p)
		if !filepath.IsAbs(p) || p == "/" || under(p, hidden) || !under(p, roots) {
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			ops = append(ops, rootOp{Op: "hide", Dst: p})
			hidden = append(hidden, p)
		default:
			ops = append(ops, rootOp{Op: "hide", Dst: p, File: true})
		}
	}
	// The Go caches last: a hidden path (the repository's git folder
	// holds them, flakegate's folder may be /tmp) must not cover them.
	// As root the build cache's mount point is always made (a standby does
	// not know whether the attempt it serves has a prepared layer).
	if s.GoModCache != "" {
		ops = append(ops, rootOp{Op: "ro", Src: s.GoModCache, Dst: SandboxGoModCache})
	}
	if s.GoCache != "" || s.Level.Root {
		ops = append(ops, rootOp{Op: "gocache", Src: s.GoCache, Dst: SandboxGoCache})
	}
	return ops
}

// bwrapArgs is the root as bwrap's own arguments, where no helper mounts
// (neither root nor a user namespace of the helper's): tree is bound at
// TreeMount, and bwrap lays the Go cache from the host itself.
func (s *Sandbox) bwrapArgs(ops []rootOp, tree string) []string {
	var a []string
	for _, op := range ops {
		switch op.Op {
		case "ro":
			a = append(a, "--ro-bind-try", op.Src, op.Dst)
		case "rw":
			a = append(a, "--bind", op.Src, op.Dst)
		case "link":
			a = append(a, "--symlink", op.Src, op.Dst)
		case "dir":
			a = append(a, "--dir", op.Dst)
		case "proc":
			a = append(a, "--proc", op.Dst)
		case "dev":
			// bwrap's nodes are the host's, and bwrap 0.8 makes a bind
			// read-only only together with nodev: here, with no helper
			// to bind them read-only (buildDev), an attempt can change
			// their times. Only the last way, where the helper can
			// mount nothing, runs so (docs/sandbox.md).
			a = append(a, "--dev", op.Dst)
		case "layer": // private tmpfs: bwrap's, of the tmp limit
			if s.Limits.Tmp > 0 {
				a = append(a, "--size", strconv.FormatInt(s.Limits.Tmp, 10))
			}
			a = append(a, "--tmpfs", op.Dst)
			if op.Src != "home" {
				a = append(a, "--chmod", "1777", op.Dst)
			}
		case "hide":
			if op.File {
				a = append(a, "--ro-bind", "/dev/null", op.Dst)
			} else {
				a = append(a, "--tmpfs", op.Dst)
			}
		case "tree":
			a = append(a, "--bind", tree, op.Dst)
		case "gocache":
			if s.FillGoCache {
				a = append(a, "--bind", op.Src, op.Dst)
			} else {
				a = append(a, "--overlay-src", op.Src, "--tmp-overlay", op.Dst)
			}
		}
	}
	return a
}

// nested drops the paths that are inside another path of the list (each
// read-only bind costs bwrap a mount and a read of the mount table).
func nested(paths []string) []string {
	clean := make([]string, 0, len(paths))
	for _, p := range paths {
		if filepath.IsAbs(p) {
			clean = append(clean, filepath.Clean(p))
		}
	}
	sort.Strings(clean) // a parent sorts before its children
	var out []string
	for _, p := range clean {
		if !under(p, out) {
			out = append(out, p)
		}
	}
	return out
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

// readStatus reads bwrap's JSON status objects until EOF; the sandbox's
// first process (its pid on the host) goes to child, when not nil.
func readStatus(r io.Reader, child chan<- int) bwrapStatus {
	var st bwrapStatus
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return st
		}
		if v, ok := m["child-pid"].(float64); ok && child != nil {
			child <- int(v)
			child = nil
		}
		if v, ok := m["exit-code"].(float64); ok {
			st.exited, st.exitCode = true, int(v)
		}
	}
}
