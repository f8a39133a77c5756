package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// Level is the isolation a host allows, found by Probe: what every
// attempt of a check gets.
type Level struct {
	// Root: flakegate runs as root, and the helper builds each attempt's
	// mounts and runs bwrap as UID/GID, an identity that owns nothing.
	Root     bool
	UID, GID int
	// Idmap: the tree and the RW paths are shared through idmapped
	// mounts, so that UID can write what their owner can (Root only).
	Idmap bool
	// Userns: flakegate is not root, and the helper mounts each attempt's
	// tree (its overlay, or its fresh copy) in a user and mount namespace
	// of its own, where bwrap then runs (Linux 5.11+ for overlayfs).
	Userns bool
	// Copy: each attempt runs on a fresh copy of its tree, removed after
	// it, instead of an overlay (no overlay could be mounted, or
	// FLAKEGATE_NO_OVERLAY=1).
	Copy bool
	// Cgroup is "v1" or "v2" when memory and pids are bounded by a
	// per-attempt cgroup, "" when by rlimits.
	Cgroup string
	// Missing says what the host lacks, one reason each.
	Missing []string
}

// String is the level as the records' "isolation" names it: bwrap and
// each protection reached, e.g.
// "bwrap+userns+seccomp+minroot+nobody+cgroup+tmpfs+overlay".
func (l Level) String(overlay bool) string {
	parts := []string{"bwrap", "userns", "seccomp", "minroot"}
	if l.Root {
		parts = append(parts, "nobody")
	}
	if l.Cgroup != "" {
		parts = append(parts, "cgroup")
	} else {
		parts = append(parts, "rlimit")
	}
	if l.Root {
		parts = append(parts, "tmpfs")
	}
	switch {
	case overlay:
		parts = append(parts, "overlay")
	case l.Copy:
		parts = append(parts, "copy")
	}
	return strings.Join(parts, "+")
}

// Describe is the level in words, for the check's "sandbox:" line.
func (l Level) Describe(lim Limits, overlay bool) string {
	var b strings.Builder
	b.WriteString("user namespace, no capabilities, seccomp, minimal root")
	if l.Root {
		b.WriteString(", runs as uid " + strconv.Itoa(l.UID) + " (flakegate is root)")
	}
	if l.Cgroup != "" {
		b.WriteString("; memory " + sizeText(lim.Memory) + " and pids " + strconv.Itoa(lim.Pids) + " per attempt (cgroup " + l.Cgroup + ")")
	} else {
		b.WriteString("; memory " + sizeText(lim.Memory) + " per process and pids " + strconv.Itoa(lim.Pids) + " (rlimits: no cgroup)")
	}
	b.WriteString("; /tmp, /dev/shm, $HOME " + sizeText(lim.Tmp) + " each")
	b.WriteString("; tree: " + l.TreeMode(overlay))
	if overlay {
		b.WriteString(", its writes " + sizeText(lim.Disk))
	} else {
		b.WriteString(", its writes not bounded (no overlay)")
	}
	if len(l.Missing) > 0 {
		b.WriteString(" [" + strings.Join(l.Missing, "; ") + "]")
	}
	return b.String()
}

// TreeMode says in words how each attempt gets a fresh tree: a throwaway
// overlay (mounted by the helper as root, or in its own user namespace),
// a fresh copy, or (no sandbox helper can mount) the worktree itself,
// reset and cleaned after the attempt.
func (l Level) TreeMode(overlay bool) string {
	by := "as root"
	if !l.Root {
		by = "in the helper's user namespace"
	}
	switch {
	case overlay:
		return "a throwaway overlay per attempt (" + by + ")"
	case l.Copy:
		return "a fresh copy per attempt (" + by + ")"
	}
	return "the worktree itself, reset and cleaned after each attempt"
}

// Probe finds the isolation this host allows for attempts of s in trees
// beside dir (a folder of the same file system; "" is os.TempDir()), and
// whether they can run on overlays (when overlay is asked). It runs a real attempt each
// way it tries. s.Level is set to the result, s.Overlay to whether
// overlays work; err is non-nil only when no sandbox runs at all.
//
// With a GoCache, a last attempt tries the warm Go build cache at the
// level found; where it fails, GoCache is cleared (the attempts build
// in a cold cache) and Level.Missing says why.
func (s *Sandbox) Probe(ctx context.Context, dir string, env []string, overlay bool) error {
	goCache := s.GoCache
	s.GoCache = ""
	warm, err := s.probeLevel(ctx, dir, env, overlay, goCache)
	if err != nil {
		return err
	}
	if warm {
		s.GoCache = goCache
		return nil
	}
	if goCache == "" {
		return nil
	}
	tree, err := os.MkdirTemp(dir, "probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	p := *s
	p.GoCache, p.Tree, p.oneShot = goCache, tree, true // no standbys for a probe
	p.Limits = Limits{Memory: 256 << 20, Pids: 64, Tmp: 16 << 20, Disk: 16 << 20}
	out := attempt.Run(ctx, attempt.Command{Argv: []string{"sh", "-c", "test -d " + SandboxGoCache + " && echo x > " + SandboxGoCache + "/.probe"}, Dir: tree, Env: env, Sandbox: &p, WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	if out.Result == attempt.Pass {
		s.GoCache = goCache
		return nil
	}
	s.Level.Missing = append(s.Level.Missing, "no warm Go build cache: "+strings.TrimSpace(out.Result+" "+out.Reason+" "+lastLine(out.Tail)))
	return nil
}

// probeCgroups removes the cgroups a killed flakegate left and says
// which attempt cgroups this host gives (Level.Cgroup), or why none.
func (s *Sandbox) probeCgroups() {
	sweepCgroups()
	h := findCgroups()
	if h.mem == "" {
		s.Level.Missing = append(s.Level.Missing, "no cgroup: "+h.why)
		return
	}
	s.Level.Cgroup = "v1"
	if h.v2 {
		s.Level.Cgroup = "v2"
	}
}

// probeRun runs one probe attempt in tree at level lv, on an overlay
// (ov) or not, with the Go build cache when cache is not "": it writes
// to the tree and /tmp, reads the tree back, and writes to the cache.
func (s *Sandbox) probeRun(ctx context.Context, tree string, env []string, lv Level, ov bool, cache string) error {
	p := *s
	p.Level, p.Overlay, p.Tree, p.oneShot, p.GoCache = lv, ov, tree, true, cache
	p.Limits = Limits{Memory: 256 << 20, Pids: 64, Tmp: 16 << 20, Disk: 16 << 20}
	script := "echo x > probe && test -w /tmp && read l < probe"
	if cache != "" {
		script += " && test -d " + SandboxGoCache + " && echo x > " + SandboxGoCache + "/.probe"
	}
	out := attempt.Run(ctx, attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: &p, WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	if out.Result != attempt.Pass {
		return errors.New(strings.TrimSpace(out.Reason + " " + lastLine(out.Tail)))
	}
	return nil
}

// probeLevel finds the level. Its first try (the highest level) also
// tries goCache, when there is one, in the same attempt: warm says that
// it worked, and spares the check a second probe attempt. A first try
// that fails is tried again without the cache before a lower level is.
func (s *Sandbox) probeLevel(ctx context.Context, dir string, env []string, overlay bool, goCache string) (warm bool, err error) {
	if !selfHelper.Load() {
		return false, errors.New("this binary does not run the sandbox helper")
	}
	s.Level = Level{}
	s.probeCgroups()
	tree, err := os.MkdirTemp(dir, "probe-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tree)
	if err := os.WriteFile(filepath.Join(tree, "probe"), []byte("probe\n"), 0o644); err != nil {
		return false, err
	}
	run := func(lv Level, ov bool, cache string) error { return s.probeRun(ctx, tree, env, lv, ov, cache) }
	first := true
	try := func(lv Level, ov bool) error {
		if first && goCache != "" {
			first = false
			if run(lv, ov, goCache) == nil {
				warm = true
				return nil
			}
		}
		first = false
		return run(lv, ov, "")
	}
	var why []string
	if !overlay {
		why = append(why, "no overlay: "+NoOverlayEnv+"=1 asks for a fresh copy per attempt")
	}
	// reach tries lv on a throwaway overlay (when asked for) and then on
	// fresh copies, and sets the first that runs; each that does not says
	// why, after its words.
	reach := func(lv Level, noOverlay, noCopy string) bool {
		if overlay {
			err := try(lv, true)
			if err == nil {
				s.Level, s.Overlay = lv, true
				return true
			}
			why = append(why, noOverlay+err.Error())
		}
		lv.Copy = true
		err := try(lv, false)
		if err == nil {
			s.Level, s.Overlay = lv, false
			s.Level.Missing = append(s.Level.Missing, why...)
			return true
		}
		why = append(why, noCopy+err.Error())
		return false
	}
	if uid, gid, ok := dropIdentity(); ok {
		lv := s.Level
		lv.Root, lv.UID, lv.GID, lv.Idmap = true, uid, gid, true
		if reach(lv, "no overlay: ", "cannot run as uid "+strconv.Itoa(uid)+": ") {
			return warm, nil
		}
	} else {
		lv := s.Level
		lv.Userns = true // without root the helper mounts in a user namespace of its own
		if reach(lv, "no overlay in the helper's user namespace: ", "no fresh copy in the helper's user namespace: ") {
			return warm, nil
		}
	}
	lv := s.Level
	if err := try(lv, false); err != nil {
		return false, errors.New(strings.Join(append(why, err.Error()), "; "))
	}
	s.Level, s.Overlay = lv, false
	s.Level.Missing = append(s.Level.Missing, why...)
	return warm, nil
}
