package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/internal/bytesize"
)

// sandboxRun is one attempt's sandbox while it runs: the helper's
// command (started), its output, bwrap's status, the helper's report, the
// cgroup and the layer folder.
type sandboxRun struct {
	cmd     *exec.Cmd
	pr      *os.File // the attempt's output, stdout and stderr in order
	status  chan bwrapStatus
	report  chan helperReport
	cg      *attemptCgroup
	layer   string
	child   []*os.File // the child's ends, closed once it started
	lim     Limits
	specW   *os.File     // a standby's attempt descriptor
	copy    string       // the attempt's fresh copy of its tree (Level.Copy)
	copyDir string       // Sandbox.CopyDir, removed once empty
	owner   [2]int       // the tree owner its idmapped mounts map
	spent   bool         // cleaned up
	ran     bool         // it ran an attempt's command (not a standby never used)
	keep    bool         // Command.KeepCacheOnPass
	rep     helperReport // the helper's report, once finish read it
	pid     chan int     // the sandbox's first process, once bwrap says
	proxy   *proxy       // a prepare's outbound proxy (outbound_linux.go)
	evict   []string     // dropped from the page cache after the attempt (no cgroup; pagecache_linux.go)
	ready   time.Time    // when its fresh copy was made (Level.Copy): the attempt's clock starts there
}

// start starts the attempt's sandbox around c in dir. On overlays (as
// root, or in the helper's user namespace) it takes the standby made for
// this sandbox, tree and folder while the attempt before ran (or makes
// one now), hands it the attempt's argv, and makes the next standby. On
// fresh copies it makes none: each copy is made for the attempt that
// runs on it, at the one path every attempt of the tree sees.
func (s *Sandbox) start(dir string, c *Command) (*sandboxRun, error) {
	r, err := s.startSwept(dir, c)
	if r != nil {
		r.evict = s.evictRoots() // swept again after it (pagecache_linux.go)
	}
	return r, err
}

// startSwept is start once Run swept the page cache (sweepPageCache).
func (s *Sandbox) startSwept(dir string, c *Command) (*sandboxRun, error) {
	if s.Outbound != nil {
		return s.startOutbound(dir, c)
	}
	if !(s.Level.Root || s.Level.Userns) || s.Level.Copy || s.oneShot || s.Persist != "" {
		r, err := s.spawn(dir, c.Argv, c.Env, false)
		if r != nil {
			r.ran, r.keep = true, c.KeepCacheOnPass
		}
		return r, err
	}
	owner, err := ownerOf(s.Tree)
	if err != nil {
		return nil, err
	}
	line, err := execLine(c.Argv, c.Env, s.inside(dir))
	if err != nil {
		return nil, err
	}
	msg := []byte(line)
	key := s.standbyKey(dir, c.Env)
	for try := 0; ; try++ {
		r := takeStandby(key, owner)
		if r == nil {
			if r, err = s.spawn(dir, nil, c.Env, true); err != nil {
				return nil, err
			}
		}
		next := *s
		next.prefetch(key, dir, c.Env) // after this attempt's own, which goes first
		_, err = r.specW.Write(msg)
		r.specW.Close()
		r.specW = nil
		if err != nil { // the standby is gone (killed while it waited): make a fresh one, once
			r.kill()
			r.cleanup()
			if try == 0 {
				continue
			}
			return nil, err
		}
		r.ran, r.keep = true, c.KeepCacheOnPass
		return r, nil
	}
}

// spawn starts a helper for an attempt of argv in dir, or, as a standby,
// for the next attempt of this sandbox (in its tree's folder).
func (s *Sandbox) spawn(dir string, argv, env []string, standby bool) (*sandboxRun, error) {
	r := &sandboxRun{lim: s.Limits}
	ok := false
	defer func() {
		if !ok {
			r.kill()
			r.cleanup()
		}
	}()
	lv := s.Level
	if lv.Root || lv.Userns {
		layer, err := newLayer()
		if err != nil {
			return nil, err
		}
		r.layer = layer
	}
	tree := s.Tree
	if lv.Copy {
		tree = s.copyPath()
		r.copy, r.copyDir = tree, s.CopyDir // removed by cleanup, even when the copy failed halfway
		if err := freshCopy(s.Tree, tree); err != nil {
			return nil, err
		}
		r.ready = time.Now() // the copy is flakegate's time, not the attempt's
	}
	if standby {
		argv = execArgv
	}
	v, err := s.view(dir, argv, env, r.layer, tree)
	if err != nil {
		return nil, err
	}
	spec := v.helper
	spec.Standby = standby
	spec.Argv = append([]string{s.Bwrap}, v.args...)
	if lv.Cgroup != "" && (s.Limits.Memory > 0 || s.Limits.Pids > 0) {
		cg, err := newAttemptCgroup(s.Limits)
		if err != nil {
			return nil, err
		}
		r.cg = cg
		spec.Cgroups, spec.Leave = cg.dirs, cg.parents()
	} else {
		if s.Limits.Memory > 0 {
			spec.Rlimits = append(spec.Rlimits, rlimit{Resource: unix.RLIMIT_DATA, Value: uint64(s.Limits.Memory)})
		}
		if s.Limits.Pids > 0 {
			spec.Rlimits = append(spec.Rlimits, rlimit{Resource: unix.RLIMIT_NPROC, Value: uint64(s.Limits.Pids)})
		}
	}
	cmd, err := helperCommand(spec)
	if err != nil {
		return nil, err
	}
	cmd.Dir, cmd.Env = dir, env
	if lv.Root || lv.Copy {
		cmd.Dir = "/"
	}
	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	pipe := func() (rd, wr *os.File) {
		if err != nil {
			return nil, nil
		}
		rd, wr, err = os.Pipe()
		if err == nil {
			r.child = append(r.child, rd, wr) // closed on failure; the parent's ends are taken out below
		}
		return rd, wr
	}
	outR, outW := pipe()
	statusR, statusW := pipe()
	secR, secW := pipe()
	repR, repW := pipe()
	var specR *os.File
	if standby {
		specR, r.specW = pipe()
	}
	if err != nil {
		return nil, err
	}
	if _, err = secW.Write(prog); err != nil { // a few hundred bytes: the pipe holds them
		return nil, err
	}
	r.child = []*os.File{outW, statusW, secR, secW, repW}
	if specR != nil {
		r.child = append(r.child, specR)
	}
	r.pr = outR
	cmd.Stdout, cmd.Stderr = outW, outW // one pipe keeps the two streams in order
	cmd.ExtraFiles = []*os.File{statusW, secR, repW, specR}
	if lv.Root && lv.Idmap {
		if r.owner, err = ownerOf(s.Tree); err != nil {
			return nil, err
		}
		treeOwner := r.owner
		if lv.Copy {
			// The copy is on the host's disk while the attempt runs: what
			// the attempt writes there must not be root's (or the tree
			// owner's). The copy is the share identity's, and the
			// attempt writes as that identity.
			uid, gid := shareIdentity()
			if err := chownCopy(tree, r.owner, uid, gid); err != nil {
				return nil, err
			}
			treeOwner = [2]int{uid, gid}
		}
		ns, err := idmapUserns(treeOwner[0], treeOwner[1], lv.UID, lv.GID)
		if err != nil {
			return nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, ns)
		// Descriptor 8 (helperCacheUsernsFD) is empty: no host Go cache
		// is idmapped since the attempts' caches are the repository's
		// (gocache.go). The shares' user namespace stays descriptor 9.
		cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		if len(s.RW) > 0 {
			// The shares are idmapped from the share identity, not the
			// tree's owner: what the attempt writes there is neither
			// root's nor flakegate's on the host.
			uid, gid := shareIdentity()
			for _, p := range s.RW {
				if _, err := os.Lstat(p); err == nil {
					if err := handOver(p, r.owner, uid, gid); err != nil {
						return nil, err
					}
				}
			}
			ns, err := idmapUserns(uid, gid, lv.UID, lv.GID)
			if err != nil {
				return nil, err
			}
			cmd.ExtraFiles = append(cmd.ExtraFiles, ns)
		}
	}
	r.cmd = cmd
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the sandbox helper: %w", err)
	}
	r.started()
	r.status = make(chan bwrapStatus, 1)
	r.pid = make(chan int, 1)
	go func() {
		defer statusR.Close()
		r.status <- readStatus(statusR, r.pid)
	}()
	r.report = make(chan helperReport, 1)
	go func() {
		defer repR.Close()
		var rep helperReport
		_ = json.NewDecoder(repR).Decode(&rep)
		r.report <- rep
	}()
	ok = true
	return r, nil
}

// The standbys: a few per sandbox, each made for a next attempt, and
// how many are being made.
var (
	standbyMu   sync.Mutex
	standbyCond = sync.NewCond(&standbyMu)
	standbys    = map[string][]*sandboxRun{}
	making      = map[string]int{}
)

// standbyDepth is how many standbys of one sandbox are ready or being
// made after an attempt starts: two, so that on two cores attempts that
// end at once do not wait for one standby after another.
const standbyDepth = 2

// maxStandbys bounds the standbys of one sandbox.
const maxStandbys = 4

// standbyKey names what a standby was built for: everything of the
// sandbox, its tree, the working folder and the environment; everything
// but the command.
func (s *Sandbox) standbyKey(dir string, env []string) string {
	b, _ := json.Marshal([]any{s.Bwrap, s.Tree, s.Overlay, s.Prepared, s.Hide, s.RO, s.RW, s.Home, s.Network, s.Limits, s.Level, s.GoCache, s.FillGoCache, s.GoModCache, dir, env})
	return string(b)
}

// takeStandby returns the standby made for key with its mounts for a
// tree of owner, waiting for one being made; nil if there is none.
func takeStandby(key string, owner [2]int) *sandboxRun {
	standbyMu.Lock()
	for len(standbys[key]) == 0 && making[key] > 0 {
		standbyCond.Wait()
	}
	var r *sandboxRun
	if list := standbys[key]; len(list) > 0 {
		r, standbys[key] = list[0], list[1:]
	}
	standbyMu.Unlock()
	if r != nil && r.owner != owner {
		r.kill()
		r.cleanup()
		return nil
	}
	return r
}

// prefetch starts making standbys of this sandbox until standbyDepth
// are ready or on their way.
func (s *Sandbox) prefetch(key, dir string, env []string) {
	standbyMu.Lock()
	n := standbyDepth - len(standbys[key]) - making[key]
	if n > 0 {
		making[key] += n
	}
	standbyMu.Unlock()
	for range n {
		go s.replenish(key, dir, env)
	}
}

// replenish makes a standby for a next attempt of this sandbox.
func (s *Sandbox) replenish(key, dir string, env []string) {
	r, err := s.spawn(dir, nil, env, true)
	standbyMu.Lock()
	making[key]--
	if err == nil && len(standbys[key]) < maxStandbys {
		standbys[key], r = append(standbys[key], r), nil
	}
	standbyCond.Broadcast()
	standbyMu.Unlock()
	if err == nil && r != nil {
		r.kill()
		r.cleanup()
	}
}

// dropStandbys ends every standby (flakegate is done), once those being
// made are made.
func dropStandbys() {
	standbyMu.Lock()
	for busy := true; busy; {
		busy = false
		for _, n := range making {
			busy = busy || n > 0
		}
		if busy {
			standbyCond.Wait()
		}
	}
	all := standbys
	standbys = map[string][]*sandboxRun{}
	standbyMu.Unlock()
	for _, list := range all {
		for _, r := range list {
			r.kill()
			r.cleanup()
		}
	}
}

// kill ends an unused helper: it exits when its attempt descriptor
// closes, and is killed for good measure.
func (r *sandboxRun) kill() {
	if r.specW != nil {
		r.specW.Close()
		r.specW = nil
	}
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
	if r.pr != nil {
		r.pr.Close()
	}
}

func ownerOf(p string) ([2]int, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return [2]int{}, err
	}
	return [2]int{int(st.Uid), int(st.Gid)}, nil
}

// started closes the child's ends of the pipes in flakegate.
func (r *sandboxRun) started() {
	for _, f := range r.child {
		f.Close()
	}
	r.child = nil
}

// hit names a cgroup limit the attempt reached so far, "" if none.
func (r *sandboxRun) hit() string {
	if r.cg == nil {
		return ""
	}
	return r.cg.hit()
}

// finish names the limit the attempt reached, "" if none, once it ended:
// the cgroup's, then a full tmpfs the helper reported.
func (r *sandboxRun) finish() string {
	if lim := r.hit(); lim != "" {
		return lim
	}
	var rep helperReport
	select {
	case rep = <-r.report:
	case <-time.After(drainGrace):
	}
	r.rep = rep
	for _, f := range rep.Full {
		switch f {
		case "tmp":
			return "tmp limit " + sizeText(r.lim.Tmp) + " (/tmp, /dev/shm or $HOME is full)"
		case "disk":
			return "disk limit " + sizeText(r.lim.Disk) + " (the tree's writable layer is full)"
		}
	}
	return ""
}

// cleanup removes the cgroup and the layer folder. The cgroup goes in
// the background: the kernel often needs a few milliseconds after the
// last process exits before it lets the folder go, and nothing the
// attempt decides waits for that.
func (r *sandboxRun) cleanup() {
	r.started()
	if r.spent {
		return
	}
	r.spent = true
	if r.proxy != nil {
		r.proxy.Close()
	}
	if r.cg != nil {
		cg := r.cg
		cg.kill()
		if r.ran && r.cmd != nil && r.cmd.ProcessState != nil && !(r.keep && r.cmd.ProcessState.ExitCode() == 0) {
			cg.reclaim() // before the next attempt can start: what this one read leaves the cache
		}
		cgroupsGone.Add(1)
		go func() {
			defer cgroupsGone.Done()
			cg.remove()
		}()
	}
	if r.evict != nil && r.ran && r.cmd != nil && r.cmd.ProcessState != nil && !(r.keep && r.cmd.ProcessState.ExitCode() == 0) {
		evictTrees(r.evict) // as the cgroup's reclaim: the host's cache as the attempt found it
	}
	if r.layer != "" {
		os.RemoveAll(r.layer) // an empty folder: its tmpfs went with the helper's namespace
	}
	if r.copy != "" {
		_ = RemoveTree(r.copy) // whatever modes the attempt left on its folders
		if r.copyDir != "" {
			_ = os.Remove(r.copyDir) // the check's copies folder, once empty: a doctor leaves nothing behind
		}
	}
}

// cgroupsGone counts the attempt cgroups still being removed.
var cgroupsGone sync.WaitGroup

// WaitCgroups waits until the cgroups of finished attempts are removed.
func WaitCgroups() { cgroupsGone.Wait() }

// sizeText writes a size in binary units.
func sizeText(n int64) string { return bytesize.Format(n) }

// keepErr says why a prepare's layers could not be kept, nil when they
// were (or for any other attempt); a full disk wraps ENOSPC.
func (r *sandboxRun) keepErr() error {
	switch {
	case r.rep.KeepErr == "":
		return nil
	case r.rep.NoSpace:
		return fmt.Errorf("%s: %w", r.rep.KeepErr, unix.ENOSPC)
	}
	return errors.New(r.rep.KeepErr)
}
