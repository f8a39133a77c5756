package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/attempt"
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
	specW   *os.File       // a standby's attempt descriptor
	copy    string         // the attempt's fresh copy of its tree (Level.Copy)
	copyDir string         // Sandbox.CopyDir, removed once empty
	owner   [2]int         // the tree owner its idmapped mounts map
	spent   bool           // cleaned up
	ran     bool           // it ran an attempt's command (not a standby never used)
	keep    bool           // attempt.Command.KeepCacheOnPass
	keepIf  func(int) bool // attempt.Command.KeepCache
	rep     helperReport   // the helper's report, once finish read it
	pid     chan int       // the sandbox's first process, once bwrap says
	proxy   *proxy         // a prepare's outbound proxy (outbound_linux.go)
	pool    *pool          // the sandbox's, which waits for its cgroup's removal; nil for none
	evict   []string       // dropped from the page cache after the attempt (no cgroup; pagecache_linux.go)
	ready   time.Time      // when its fresh copy was made (Level.Copy): the attempt's clock starts there
	untree  func()         // removes the TreeFiles written into a worktree bwrap binds itself
}

// start starts the attempt's sandbox around c in dir. On overlays (as
// root, or in the helper's user namespace) it takes the standby made for
// this sandbox, tree and folder while the attempt before ran (or makes
// one now), hands it the attempt's argv, and makes the next standby. On
// fresh copies it makes none: each copy is made for the attempt that
// runs on it, at the one path every attempt of the tree sees.
func (s *Sandbox) start(dir string, c *attempt.Command) (*sandboxRun, error) {
	r, err := s.startSwept(dir, c)
	if r != nil {
		r.evict = s.evictRoots() // swept again after it (pagecache_linux.go)
	}
	return r, err
}

// startSwept is start once Run swept the page cache (sweepPageCache).
func (s *Sandbox) startSwept(dir string, c *attempt.Command) (*sandboxRun, error) {
	if s.Outbound != nil {
		return s.startOutbound(dir, c)
	}
	if !(s.Level.Root || s.Level.Userns) || s.Level.Copy || s.oneShot || s.Persist != "" || s.pool == nil || len(s.TreeFiles) > 0 {
		r, err := s.spawn(dir, c.Argv, c.Env, false)
		if r != nil {
			r.ran, r.keep, r.keepIf = true, c.KeepCacheOnPass, c.KeepCache
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
		r := s.pool.take(key, owner)
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
		r.ran, r.keep, r.keepIf = true, c.KeepCacheOnPass, c.KeepCache
		return r, nil
	}
}

// spawn starts a helper for an attempt of argv in dir, or, as a standby,
// for the next attempt of this sandbox (in its tree's folder).
func (s *Sandbox) spawn(dir string, argv, env []string, standby bool) (*sandboxRun, error) {
	r := &sandboxRun{lim: s.Limits, pool: s.pool}
	s.pool.spawned()
	// The tree's owner, which take compares: as root the idmapped
	// mounts map it (idmaps), and a standby for another owner is of no
	// use. Without the idmaps it is still the tree's owner, so that a
	// standby matches the attempt it was made for.
	r.owner, _ = ownerOf(s.Tree)
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
		if _, err := WriteTreeFiles(tree, s.TreeFiles); err != nil { // the copy goes with the attempt
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
	if !(lv.Root || lv.Userns) && !lv.Copy && len(s.TreeFiles) > 0 {
		// bwrap binds the worktree itself: the files go there for this
		// attempt, and cleanup removes them.
		if r.untree, err = WriteTreeFiles(tree, s.TreeFiles); err != nil {
			return nil, err
		}
	}
	spec := v.helper
	spec.Standby = standby
	spec.Argv = append([]string{s.Bwrap}, v.args...)
	if err := r.bound(spec, lv); err != nil {
		return nil, err
	}
	if standby {
		// Nothing of an attempt's environment: the attempt line brings
		// it, and this standby may serve another seed's attempt. One
		// processor for the helper's Go runtime: it only mounts and
		// waits, and starts fewer threads (about 1.5 ms an attempt).
		// bwrap gets an environment of its own (execEnv).
		env = []string{"GOMAXPROCS=1"}
	}
	cmd, err := helperCommand(spec, env)
	if err != nil {
		return nil, err
	}
	cmd.Dir = dir
	if lv.Root || lv.Copy {
		cmd.Dir = "/"
	}
	var h handOff
	// The helper's own stdout and stderr are /dev/null until it makes
	// the output descriptor both (helperFDs.output): nothing the Go
	// runtime prints as the helper starts reaches the attempt.
	statusR, repR, err := r.pipes(&h, standby)
	if err != nil {
		return nil, err
	}
	if lv.Root && lv.Idmap {
		if err := s.idmaps(r, &h, tree); err != nil {
			return nil, err
		}
	}
	cmd.Args = append(cmd.Args, h.flags...)
	cmd.ExtraFiles = h.files
	if err := r.start(cmd, statusR, repR); err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

// bound puts the attempt's limits into spec: a cgroup of its own where
// the host gives one (r.cg), else rlimits.
func (r *sandboxRun) bound(spec *helperSpec, lv Level) error {
	if lv.Cgroup != "" && (r.lim.Memory > 0 || r.lim.Pids > 0) {
		cg, err := newAttemptCgroup(r.lim)
		if err != nil {
			return err
		}
		r.cg = cg
		spec.Cgroups, spec.Leave = cg.dirs, cg.parents()
		return nil
	}
	if r.lim.Memory > 0 {
		spec.Rlimits = append(spec.Rlimits, rlimit{Resource: unix.RLIMIT_DATA, Value: uint64(r.lim.Memory)})
	}
	if r.lim.Pids > 0 {
		spec.Rlimits = append(spec.Rlimits, rlimit{Resource: unix.RLIMIT_NPROC, Value: uint64(r.lim.Pids)})
	}
	return nil
}

// pipes makes the helper's pipes and hands their child ends to it by
// name: the attempt's output (its stdout and stderr, in order, r.pr: one
// pipe keeps the two streams in order), bwrap's status, the seccomp
// filter (written now: a few hundred bytes, which the pipe holds), the
// helper's report and, for a standby, its attempt line (r.specW). It
// returns flakegate's ends of the status and the report.
func (r *sandboxRun) pipes(h *handOff, standby bool) (statusR, repR *os.File, err error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, nil, err
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
		return nil, nil, err
	}
	if _, err = secW.Write(prog); err != nil {
		return nil, nil, err
	}
	r.child = []*os.File{outW, statusW, secR, secW, repW}
	r.pr = outR
	h.give(fdOutput, outW)
	h.give(fdStatus, statusW)
	h.give(fdSeccomp, secR)
	h.give(fdReport, repW)
	if specR != nil {
		r.child = append(r.child, specR)
		h.give(fdAttempt, specR)
	}
	return statusR, repR, nil
}

// idmaps hands the helper the user namespaces of its idmapped mounts
// (as root): the tree's, from its owner (or, for a fresh copy, from the
// share identity, which then owns the copy), and the sandbox.rw
// folders', from the share identity.
func (s *Sandbox) idmaps(r *sandboxRun, h *handOff, tree string) error {
	lv := s.Level
	var err error
	if r.owner, err = ownerOf(s.Tree); err != nil {
		return err
	}
	treeOwner := r.owner
	if lv.Copy {
		// The copy is on the host's disk while the attempt runs: what
		// the attempt writes there must not be root's (or the tree
		// owner's). The copy is the share identity's, and the
		// attempt writes as that identity.
		uid, gid := shareIdentity()
		if err := chownCopy(tree, r.owner, uid, gid); err != nil {
			return err
		}
		treeOwner = [2]int{uid, gid}
	}
	ns, err := idmapUserns(treeOwner[0], treeOwner[1], lv.UID, lv.GID)
	if err != nil {
		return err
	}
	h.give(fdTreeUserns, ns)
	// No host Go cache is idmapped since the attempts' caches are the
	// repository's (gocache/): the helper gets no fdCacheUserns.
	if len(s.RW) == 0 {
		return nil
	}
	// The shares are idmapped from the share identity, not the tree's
	// owner: what the attempt writes there is neither root's nor
	// flakegate's on the host.
	uid, gid := shareIdentity()
	for _, p := range s.RW {
		if _, err := os.Lstat(p); err == nil {
			if err := handOver(p, r.owner, uid, gid); err != nil {
				return err
			}
		}
	}
	if ns, err = idmapUserns(uid, gid, lv.UID, lv.GID); err != nil {
		return err
	}
	h.give(fdShareUserns, ns)
	return nil
}

// start starts the helper and reads bwrap's status and the helper's
// report as they come.
func (r *sandboxRun) start(cmd *exec.Cmd, statusR, repR *os.File) error {
	r.cmd = cmd
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the sandbox helper: %w", err)
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
	return nil
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
	ended := r.ran && r.cmd != nil && r.cmd.ProcessState != nil
	keep := false
	if ended {
		code := r.cmd.ProcessState.ExitCode()
		keep = r.keep && code == 0
		if r.keepIf != nil {
			keep = r.keepIf(code)
		}
	}
	if r.cg != nil {
		cg := r.cg
		cg.kill()
		if ended && !keep {
			cg.reclaim() // before the next attempt can start: what this one read leaves the cache
		}
		r.pool.removing(cg.remove)
	}
	if r.evict != nil && ended && !keep {
		// As the cgroup's reclaim: the host's cache as the attempt found
		// it, by the next attempt's sweep (which would sweep the same
		// folders again right after) or the sandbox's Close.
		if !r.pool.leaveUnswept(r.evict) {
			evictTrees(r.evict)
		}
	}
	if r.untree != nil {
		r.untree()
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
