package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Per-attempt cgroups bound an attempt's memory and processes. Written by
// hand rather than with containerd/cgroups: the library brings a dozen
// modules (systemd, dbus, ebpf, protobuf) for the four files read and
// written here.
//
// cgroup v1 (memory and pids hierarchies, as on Debian 12 runners with a
// legacy layout) or v2 (one hierarchy) where flakegate's own cgroup
// already delegates the memory and pids controllers to its children. The
// attempt's cgroup is a child of flakegate's own, named after flakegate's
// pid and a counter, and removed after the attempt.

// cgroupHost is where attempt cgroups are made: one parent folder per
// hierarchy, empty when cgroups cannot be used (why says why).
type cgroupHost struct {
	v2          bool
	mem, pids   string // parent folders (the same folder on v2)
	why         string // why none can be used
	memEventKey string
}

var (
	cgroupOnce  sync.Once
	cgroupFound cgroupHost
	cgroupSeq   atomic.Int64
)

// findCgroups looks once for writable memory and pids controllers.
func findCgroups() cgroupHost {
	cgroupOnce.Do(func() { cgroupFound = discoverCgroups() })
	return cgroupFound
}

func discoverCgroups() cgroupHost {
	own := map[string]string{} // controller ("" for v2) -> own path
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return cgroupHost{why: "cannot read /proc/self/cgroup: " + err.Error()}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	f.Close()
	mounts := cgroupMounts()
	mem, okM := mounts["memory"]
	pids, okP := mounts["pids"]
	if okM && okP {
		h := cgroupHost{mem: filepath.Join(mem, own["memory"]), pids: filepath.Join(pids, own["pids"]), memEventKey: "oom_kill"}
		if err := h.writable(); err != nil {
			return cgroupHost{why: "cgroup v1 memory and pids are not writable here: " + err.Error()}
		}
		return h
	}
	if root, ok := mounts[""]; ok {
		dir := filepath.Join(root, own[""])
		ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		have := strings.Fields(string(ctl))
		if !slices.Contains(have, "memory") || !slices.Contains(have, "pids") {
			return cgroupHost{why: "cgroup v2: " + dir + " does not delegate the memory and pids controllers to its children"}
		}
		h := cgroupHost{v2: true, mem: dir, pids: dir, memEventKey: "oom_kill"}
		if err := h.writable(); err != nil {
			return cgroupHost{why: "cgroup v2 is not writable here: " + err.Error()}
		}
		return h
	}
	return cgroupHost{why: "no memory and pids cgroup controllers are mounted"}
}

// cgroupMounts maps each v1 controller to its mount point, and "" to the
// v2 mount point, from /proc/self/mountinfo.
func cgroupMounts() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch tail[0] {
		case "cgroup2":
			out[""] = fields[4]
		case "cgroup":
			for _, opt := range strings.Split(tail[2], ",") {
				if opt == "memory" || opt == "pids" {
					out[opt] = fields[4]
				}
			}
		}
	}
	return out
}

// writable makes and removes a probe cgroup.
func (h cgroupHost) writable() error {
	for _, dir := range h.dirs() {
		probe := filepath.Join(dir, "flakegate-probe-"+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := os.Remove(probe); err != nil {
			return err
		}
	}
	return nil
}

func (h cgroupHost) dirs() []string {
	if h.v2 {
		return []string{h.mem}
	}
	return []string{h.mem, h.pids}
}

// attemptCgroup is the cgroup of one attempt.
type attemptCgroup struct {
	host cgroupHost
	dirs []string // the attempt's folders: memory then pids (one on v2)
	lim  Limits
}

// newAttemptCgroup makes the cgroup of one attempt with lim's memory and
// pids limits.
func newAttemptCgroup(lim Limits) (*attemptCgroup, error) {
	h := findCgroups()
	if h.mem == "" {
		return nil, errors.New(h.why)
	}
	name := fmt.Sprintf("flakegate-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	cg := &attemptCgroup{host: h, lim: lim}
	for _, parent := range h.dirs() {
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			cg.remove()
			return nil, err
		}
		cg.dirs = append(cg.dirs, d)
	}
	var writes [][2]string
	if h.v2 {
		writes = [][2]string{{"memory.max", strconv.FormatInt(lim.Memory, 10)}, {"memory.swap.max", "0"}, {"pids.max", strconv.Itoa(lim.Pids)}}
	} else {
		writes = [][2]string{{"memory.limit_in_bytes", strconv.FormatInt(lim.Memory, 10)}, {"memory.swappiness", "0"}, {"pids.max", strconv.Itoa(lim.Pids)}}
	}
	for _, w := range writes {
		dir := cg.dirs[0]
		if w[0] == "pids.max" {
			dir = cg.dirs[len(cg.dirs)-1]
		}
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil && w[0] != "memory.swap.max" && w[0] != "memory.swappiness" {
			cg.remove()
			return nil, fmt.Errorf("cannot set %s: %w", w[0], err)
		}
	}
	return cg, nil
}

// parents are the folders a process leaves the attempt's cgroup for.
func (cg *attemptCgroup) parents() []string {
	return cg.host.dirs()
}

// hit names the limit the attempt reached, "" if none: the memory limit
// when the kernel killed a process for it, the pids limit when a fork or
// clone failed for it.
func (cg *attemptCgroup) hit() string {
	memEvents, pidsEvents := "memory.oom_control", "pids.events"
	if cg.host.v2 {
		memEvents = "memory.events"
	}
	if n := eventCount(filepath.Join(cg.dirs[0], memEvents), "oom_kill"); n > 0 {
		return "memory limit " + sizeText(cg.lim.Memory)
	}
	if n := eventCount(filepath.Join(cg.dirs[len(cg.dirs)-1], pidsEvents), "max"); n > 0 {
		return "pids limit " + strconv.Itoa(cg.lim.Pids)
	}
	return ""
}

// eventCount reads the counter key of a flat keyed cgroup file.
func eventCount(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// kill sends SIGKILL to every process left in the attempt's cgroup.
func (cg *attemptCgroup) kill() {
	for _, d := range cg.dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, p := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// reclaim drops from memory what the attempt's cgroup is charged with
// once its processes are gone: the page cache (and the dentries and
// inodes) of every file it was the first to read. Without it a file an
// attempt read would stay cached, and a retry could tell it is not the
// first by a page fault that needed no disk read (getrusage's
// ru_majflt, /proc/self/io) or by how long a read took, none of which a
// filter can refuse. What was cached before the attempt is charged to
// whoever read it first and stays; what the attempt could have evicted
// is refused by the filter (seccomp_linux.go). Best effort: a kernel
// without the knob (cgroup v2 before Linux 5.19) keeps the pages.
func (cg *attemptCgroup) reclaim() {
	if cg.host.v2 {
		cur, err := os.ReadFile(filepath.Join(cg.dirs[0], "memory.current"))
		if err == nil && strings.TrimSpace(string(cur)) != "0" {
			_ = os.WriteFile(filepath.Join(cg.dirs[0], "memory.reclaim"), []byte(strings.TrimSpace(string(cur))), 0)
		}
		return
	}
	_ = os.WriteFile(filepath.Join(cg.dirs[0], "memory.force_empty"), []byte("0"), 0)
}

// remove kills whatever is left in the attempt's cgroup and removes it,
// waiting up to a second for the kernel to let it go.
func (cg *attemptCgroup) remove() {
	for _, d := range cg.dirs {
		for try := 0; try < 50; try++ {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			cg.kill()
			sleepBriefly()
		}
	}
}

// sweepCgroups removes the attempt cgroups that a flakegate which is gone
// left (killed before it could remove them), as SweepLayers does for
// layer folders. It returns how many it removed.
func sweepCgroups() int {
	h := findCgroups()
	if h.mem == "" {
		return 0
	}
	n := 0
	for _, parent := range h.dirs() {
		dirs, _ := filepath.Glob(filepath.Join(parent, "flakegate-*-*"))
		for _, d := range dirs {
			pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "flakegate-"), "-")
			pid, err := strconv.Atoi(pidText)
			if err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
				continue
			}
			cg := &attemptCgroup{dirs: []string{d}}
			cg.remove()
			if _, err := os.Stat(d); err != nil {
				n++
			}
		}
	}
	return n
}
