package runner

import (
	"encoding/json"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/internal/bytesize"
)

// sandboxRun is one attempt's sandbox while it runs: the helper's
// command, bwrap's status, the helper's report, the cgroup and the layer
// folder.
type sandboxRun struct {
	cmd    *exec.Cmd
	status chan bwrapStatus
	report chan helperReport
	cg     *attemptCgroup
	layer  string
	child  []*os.File // the child's ends, closed once it started
	lim    Limits
}

// prepare builds the attempt's sandbox around c, writing its output to
// out.
func (s *Sandbox) prepare(dir string, c *Command, out *os.File) (*sandboxRun, error) {
	r := &sandboxRun{lim: s.Limits}
	ok := false
	defer func() {
		if !ok {
			r.cleanup()
		}
	}()
	lv := s.Level
	if lv.Root {
		layer, err := newLayer()
		if err != nil {
			return nil, err
		}
		r.layer = layer
	}
	v := s.view(dir, c.Argv, c.Env, r.layer)
	spec := v.helper
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
	cmd.Dir, cmd.Env = dir, c.Env
	if lv.Root {
		cmd.Dir = "/"
	}
	cmd.Stdout, cmd.Stderr = out, out

	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	secR, secW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, err
	}
	_, err = secW.Write(prog) // a few hundred bytes: the pipe holds them
	secW.Close()
	if err != nil {
		statusR.Close()
		statusW.Close()
		secR.Close()
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		secR.Close()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{statusW, secR, repW}
	r.child = []*os.File{statusW, secR, repW}
	if lv.Root && lv.Idmap {
		owner, err := ownerOf(s.Tree)
		if err != nil {
			return nil, err
		}
		ns, err := idmapUserns(owner[0], owner[1], lv.UID, lv.GID)
		if err != nil {
			return nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, ns)
		if s.HostGoCache != "" {
			owner, err := ownerOf(s.HostGoCache)
			if err != nil {
				return nil, err
			}
			ns, err := idmapUserns(owner[0], owner[1], lv.UID, lv.GID)
			if err != nil {
				return nil, err
			}
			cmd.ExtraFiles = append(cmd.ExtraFiles, ns)
		}
	}
	r.cmd = cmd
	r.status = make(chan bwrapStatus, 1)
	go func() {
		defer statusR.Close()
		r.status <- readStatus(statusR)
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

// cleanup removes the cgroup and the layer folder.
func (r *sandboxRun) cleanup() {
	r.started()
	if r.cg != nil {
		r.cg.remove()
	}
	if r.layer != "" {
		os.RemoveAll(r.layer) // an empty folder: its tmpfs went with the helper's namespace
	}
}

// sizeText writes a size in binary units.
func sizeText(n int64) string { return bytesize.Format(n) }
