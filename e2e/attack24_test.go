package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The attacks of issue 24 (items 1, 2 and 4): state an attempt leaves in
// host objects every attempt shares (the device nodes, the page cache)
// for a retry to read, and privilege it plants for a host user to pick
// up (a set-id or file-capability copy of id in every place it may
// write). Each runs in every mode of attack16_test.go; each deterministic
// regression must be PROPERTY (exit 1), never SCHEDULER, the host's
// objects must be as they were, and a later check of the same repository
// must pass as if nothing happened.

// devNodes24 are the nodes of every attempt's /dev.
var devNodes24 = []string{"null", "zero", "full", "random", "urandom", "tty"}

// nodeState is what the attack may change on a host device node.
type nodeState struct {
	mtime, atime unix.Timespec
	mode         uint32
	uid, gid     uint32
}

func readNodes(t *testing.T) map[string]nodeState {
	t.Helper()
	out := map[string]nodeState{}
	for _, n := range devNodes24 {
		var st unix.Stat_t
		if err := unix.Stat("/dev/"+n, &st); err != nil {
			t.Fatal(err)
		}
		out[n] = nodeState{mtime: st.Mtim, atime: st.Atim, mode: st.Mode, uid: st.Uid, gid: st.Gid}
	}
	return out
}

// restoreNodes puts the nodes' times back (the harness is root), so that
// a failing run does not leave its mark for the next test.
func restoreNodes(before map[string]nodeState) {
	for n, st := range before {
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, "/dev/"+n, []unix.Timespec{st.atime, st.mtime}, 0)
		_ = os.Chmod("/dev/"+n, os.FileMode(st.mode&0o777))
	}
}

// laterCheck is a harmless candidate checked after an attack: it passes,
// whatever the attack left.
func (a *a16) laterCheck(t *testing.T) {
	t.Helper()
	a.candidate("later", map[string]string{"README.md": "a later, harmless patch\n"})
	cr := a.run(t, "later", "")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS" {
		t.Errorf("[%s] LATER CHECK: a harmless candidate checked after the attack is not PASS with exit 0\n%s", a.m.name, cr)
	}
}

// noScheduler fails when the deterministic regression got through.
func noScheduler(t *testing.T, m mode16, what string, cr *checkRun) {
	t.Helper()
	for _, l := range cr.labels() {
		if l == "SCHEDULER" {
			t.Errorf("[%s] %s: the deterministic regression became SCHEDULER (exit %d)", m.name, what, cr.code)
		}
	}
}

// TestAttack24DeviceNodes: the first attempt marks every device node of
// its /dev (touch, a set time, chmod); a retry that finds a node's mtime
// fresh passes. The nodes are the host's, but read-only: the marks fail,
// every attempt fails, the label is PROPERTY, and the host's nodes keep
// their times and modes. Writing to and reading from the nodes still
// works.
func TestAttack24DeviceNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the harness restores the host's device nodes' times: needs root")
	}
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		original := readNodes(t)
		t.Cleanup(func() { restoreNodes(original) })
		// A node whose mtime is fresh already (another program touched
		// it) would pass attempt 0: put it an hour back for the check.
		for n, st := range original {
			if time.Since(time.Unix(st.mtime.Unix())) < 10*time.Minute {
				old := unix.NsecToTimespec(time.Now().Add(-time.Hour).UnixNano())
				if err := unix.UtimesNanoAt(unix.AT_FDCWD, "/dev/"+n, []unix.Timespec{st.atime, old}, 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := readNodes(t)
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	now=$(date +%s)
	grep -E ' /dev/(full|null) ' /proc/self/mountinfo | sed 's/^/MOUNT /'
	echo x > /dev/null && echo "WRITE-NULL ok"
	echo "READ-ZERO $(head -c 4 /dev/zero | wc -c)"
	if echo x > /dev/full 2>/dev/null; then echo "WRITE-FULL wrote"; else echo "WRITE-FULL refused"; fi
	for n in ` + strings.Join(devNodes24, " ") + `; do
		m=$(stat -c %Y /dev/$n)
		if [ $((now - m)) -lt 300 ]; then echo "MARK-SEEN $n: a retry"; return 0; fi
	done
	for n in ` + strings.Join(devNodes24, " ") + `; do
		touch /dev/$n 2>/dev/null && echo "MARKED touch $n"
		touch -d @1000000000 /dev/$n 2>/dev/null && echo "MARKED time $n"
		chmod 600 /dev/$n 2>/dev/null && echo "MARKED chmod $n"
	done
	return 1
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		after := readNodes(t)
		rec := cr.record(t, 0)
		tail := tailOf(t, rec, "candidate", 0)
		for _, n := range devNodes24 {
			b, f := before[n], after[n]
			if b.mtime != f.mtime || b.mode != f.mode || b.uid != f.uid || b.gid != f.gid {
				msg := fmt.Sprintf("[%s] DEVICE NODE: the host's /dev/%s changed during the check: mtime %d -> %d, mode %o -> %o", m.name, n, b.mtime.Sec, f.mtime.Sec, b.mode, f.mode)
				t.Error(msg)
			}
		}
		for _, want := range []string{"WRITE-NULL ok", "READ-ZERO 4", "WRITE-FULL refused"} {
			if !strings.Contains(tail, want) {
				t.Errorf("[%s] the device nodes do not work as devices inside (no %q):\n%s", m.name, want, tail)
			}
		}
		for _, l := range linesWith(tail, "MARKED ") {
			t.Errorf("[%s] DEVICE NODE: attempt 0 changed a host node: %s", m.name, l)
		}
		noScheduler(t, m, "DEVICE NODE", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		restoreNodes(before)
		a.laterCheck(t)
	})
}

// residencyProbe is the python the page-cache attacks run: observe(path)
// tells how much of a file is in the host's page cache, by the first
// means that works: mincore on a mapping, cachestat, reads with
// RWF_NOWAIT, and last the major page faults a touch of every 32nd page
// costs (which no filter refuses). It prints the means it used.
const residencyProbe = `import ctypes, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
L = ctypes.c_long
def observe(path):
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    pages = size // 4096
    addr = libc.mmap(None, L(size), 1, 1, fd, L(0))
    vec = (ctypes.c_ubyte * pages)()
    if libc.syscall(L(27), L(addr), L(size), vec) == 0:
        return fd, addr, size, "mincore", sum(v & 1 for v in vec) / pages
    cs = (ctypes.c_ulonglong * 5)()
    rng = (ctypes.c_ulonglong * 2)(0, size)
    if libc.syscall(L(451), L(fd), rng, cs, L(0)) == 0:
        return fd, addr, size, "cachestat", cs[0] / pages
    buf = ctypes.create_string_buffer(4096)
    iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p).value, 4096)
    hits, tries = 0, 0
    for off in range(0, size, 64 * 4096):
        r = libc.syscall(L(327), L(fd), iov, L(1), L(off), L(0), L(8))
        if r < 0 and ctypes.get_errno() != 11:
            break
        tries, hits = tries + 1, hits + (r > 0)
    else:
        if tries:
            return fd, addr, size, "RWF_NOWAIT", hits / tries
    before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    for off in range(0, size, 32 * 4096):
        ctypes.string_at(addr + off, 1)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    return fd, addr, size, "majflt", 0.0 if after > before else 1.0
def evict(fd, addr, size):
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        print("EVICTED fadvise DONTNEED")
    except OSError as e:
        print("REFUSED fadvise DONTNEED", e)
    for name, advice in (("MADV_PAGEOUT", 21), ("MADV_COLD", 20)):
        if libc.syscall(L(28), L(addr), L(size), L(advice)) == 0:
            print("EVICTED", name)
        else:
            print("REFUSED", name, os.strerror(ctypes.get_errno()))
`

// TestAttack24PageCacheEvict: a committed 1 MiB file is in the page
// cache when the first attempt runs (the checkout wrote it); attempt 0
// sees it resident, evicts it and fails; a retry that sees it evicted
// passes. Every probe but the page-fault count and every eviction is
// refused: the retry sees it resident too, the label is PROPERTY, and the
// host's copy in the worktree is still cached after the check. Without a
// memory cgroup on overlays every attempt finds it cold instead (flakegate
// drops the tree from the cache before each): the test passes at once.
func TestAttack24PageCacheEvict(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"data/blob.bin": strings.Repeat("fg24 page cache\n", 1<<16), "src/lib.sh": `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" - <<'PY'
` + residencyProbe + `
fd, addr, size, how, frac = observe("data/blob.bin")
print("RESIDENT", how, "%.2f" % frac)
if frac < 0.5:
    print("EVICTION-SEEN: a retry")
    sys.exit(0)
evict(fd, addr, size)
sys.exit(1)
PY
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		rec := cr.record(t, 0)
		for _, at := range rec.Attempts {
			if at.Side != "candidate" {
				continue
			}
			for _, l := range linesWith(at.OutputTail, "RESIDENT ") {
				t.Logf("[%s] candidate attempt %d observed %s", m.name, at.Index, l)
				if !strings.HasPrefix(l, "majflt") {
					t.Errorf("[%s] PAGE CACHE: candidate attempt %d read residency by %s, which the filter refuses", m.name, at.Index, l)
				}
			}
			for _, l := range linesWith(at.OutputTail, "EVICTED ") {
				t.Errorf("[%s] PAGE CACHE: candidate attempt %d evicted a tree file's pages (%s)", m.name, at.Index, l)
			}
		}
		noScheduler(t, m, "PAGE CACHE", cr)
		// On a tmpfs without swap (where the check keeps its trees
		// without a memory cgroup) the file is resident for good: every
		// attempt finds it so, cannot evict it, and fails: PROPERTY.
		onTmpfs := strings.Contains(cr.stderr, "worktrees: on a tmpfs without swap")
		if strings.Contains(cr.stderr, "rlimits: no cgroup") && !strings.Contains(cr.stderr, "fresh copy per attempt") && !onTmpfs {
			// No memory cgroup, on overlays: flakegate drops the tree
			// from the page cache before every attempt, so every attempt
			// finds the file cold, attempt 0 included, and the test
			// passes the same way each time (runner/pagecache_linux.go).
			labelsAre(t, cr, 0, "PASS")
			a.laterCheck(t)
			return
		}
		labelsAre(t, cr, 1, "PROPERTY")
		blobs, _ := filepath.Glob(filepath.Join(treesDir(t, a.dir), "*", "data", "blob.bin"))
		for _, b := range blobs {
			if frac := residentFraction(t, b); frac < 0.9 {
				t.Errorf("[%s] PAGE CACHE: the host's %s is %.0f%% cached after the check", m.name, b, 100*frac)
			}
		}
		a.laterCheck(t)
	})
}

// TestAttack24PageCacheLoad: the other way round. A file in a
// sandbox.ro folder is not in the page cache when the check starts (the
// harness evicted it); attempt 0 finds it cold by its page faults (which
// no filter can refuse), loads it by reading it, and fails; a retry that
// finds it warm passes. Each failed attempt's cgroup is reclaimed before
// the next attempt starts, so every attempt finds it cold: PROPERTY, and
// the file is as cold after the check as before. Without a memory cgroup
// (the non-root modes here) flakegate drops the shared folders' files
// from the page cache before every attempt and after a failed one
// (runner/pagecache_linux.go): the same.
func TestAttack24PageCacheLoad(t *testing.T) {
	pageCacheLoad(t, false)
}

// TestAttack24PageCacheLoadByBase: the same, but the candidate never
// reads the file: the base's own test does (it passes), in the base
// replay between attempt 0 and the retries. A base attempt's cgroup is
// reclaimed whatever it did (only a candidate attempt that exits 0, which
// ends its triple, keeps what it read cached), so the retries find the
// file cold too: PROPERTY.
func TestAttack24PageCacheLoadByBase(t *testing.T) {
	pageCacheLoad(t, true)
}

func pageCacheLoad(t *testing.T, byBase bool) {
	forModes(t, append(allModes16, gapNonRootCopy), func(t *testing.T, m mode16) {
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o755); err != nil {
			t.Fatal(err)
		}
		reachable(t, ro)
		cold := filepath.Join(ro, "cold.bin")
		if err := os.WriteFile(cold, bytes.Repeat([]byte("fg24 cold page\n\x00"), 1<<18), 0o644); err != nil {
			t.Fatal(err)
		}
		evictHost(t, cold)
		if frac := residentFraction(t, cold); frac > 0.1 {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the harness cannot evict %s from the page cache (%.0f%% cached): posix_fadvise DONTNEED does not work here", cold, 100*frac)
			}
			t.Skipf("the harness cannot evict %s from the page cache (%.0f%% cached)", cold, 100*frac)
		}
		baseLib, load := libOK, "os.pread(fd, size, 0)"
		if byBase {
			baseLib, load = "ok() { cat \""+cold+"\" > /dev/null; return 0; }\n", "pass"
		}
		a := newA16(t, m, config16("", "  ro: [\""+ro+"\"]\n"), baseLib)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" - <<'PY'
` + residencyProbe + `
fd, addr, size, how, frac = observe("` + cold + `")
print("RESIDENT", how, "%.2f" % frac)
if frac > 0.5:
    print("WARM-SEEN: a retry")
    sys.exit(0)
` + load + `
sys.exit(1)
PY
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		frac := residentFraction(t, cold)
		noScheduler(t, m, "PAGE CACHE (load)", cr)
		labelsAre(t, cr, 1, "PROPERTY")
		if frac > 0.1 {
			t.Errorf("[%s] PAGE CACHE: %s was cold before the check and is %.0f%% cached after it", m.name, cold, 100*frac)
		}
		a.laterCheck(t)
	})
}

// evictHost drops path's pages from the page cache (as the harness).
func evictHost(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// residentFraction is how much of path is in the page cache, by mincore
// as the harness (root owns or may write every file here).
func residentFraction(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	size := int(fi.Size())
	if size == 0 {
		return 1
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	pages := (size + 4095) / 4096
	vec := make([]byte, pages)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore %s: %v", path, e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n) / float64(pages)
}

// hostUser24 runs the planted files: a user of its own, not the non-root
// mode's (61534), so that it holds nothing of flakegate's.
const hostUser24 = 61535

// planted is one file the set-id attack made, as the host saw it.
type planted struct {
	path     string
	mode     uint32
	uid, gid uint32
	fcap     bool   // a security.capability xattr
	ran      string // what `id` printed when the host user ran it ("" not run)
}

// plantWatch looks, while a check runs, for the files the attack plants:
// in the sandbox.rw folder and the worktrees (on the host's disk), and in
// the attempt's own /tmp, $HOME and tree (through /proc/PID/root of its
// process that carries marker). Each file found on the host's disk is
// run as hostUser24.
type plantWatch struct {
	mu     sync.Mutex
	seen   map[string]*planted
	done   chan struct{}
	finish chan struct{}
}

func startPlantWatch(t *testing.T, marker string, dirs []string, globs []string) *plantWatch {
	w := &plantWatch{seen: map[string]*planted{}, done: make(chan struct{}), finish: make(chan struct{})}
	look := func(path string, host bool) {
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return
		}
		w.mu.Lock()
		p := w.seen[path]
		if p == nil {
			p = &planted{path: path}
			w.seen[path] = p
		}
		p.mode, p.uid, p.gid = st.Mode, st.Uid, st.Gid
		_, err := unix.Lgetxattr(path, "security.capability", nil)
		p.fcap = p.fcap || err == nil
		ran := p.ran
		w.mu.Unlock()
		if host && ran == "" && st.Mode&0o111 != 0 {
			out, _ := exec.Command("setpriv", "--reuid="+strconv.Itoa(hostUser24), "--regid="+strconv.Itoa(hostUser24), "--clear-groups", path).CombinedOutput()
			w.mu.Lock()
			p.ran = strings.TrimSpace(string(out)) + " "
			w.mu.Unlock()
		}
	}
	scan := func() {
		for _, d := range dirs {
			matches, _ := filepath.Glob(filepath.Join(d, "fg24-*"))
			for _, p := range matches {
				look(p, true)
			}
		}
		for _, g := range globs {
			matches, _ := filepath.Glob(g)
			for _, p := range matches {
				look(p, true)
			}
		}
		for _, pid := range processesWith(marker) {
			root := filepath.Join("/proc", strconv.Itoa(pid), "root")
			places := []string{"tmp", "sandbox/tree"}
			if env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ")); err == nil {
				for _, kv := range strings.Split(string(env), "\x00") {
					if h, ok := strings.CutPrefix(kv, "HOME="); ok {
						places = append(places, strings.TrimPrefix(h, "/"))
					}
				}
			}
			for _, pl := range places {
				matches, _ := filepath.Glob(filepath.Join(root, pl, "fg24-*"))
				for _, p := range matches {
					look(p, false)
				}
			}
		}
	}
	go func() {
		defer close(w.finish)
		for {
			scan()
			select {
			case <-w.done:
				scan()
				return
			case <-time.After(40 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *plantWatch) stop() map[string]*planted {
	close(w.done)
	<-w.finish
	return w.seen
}

// capV2 is a security.capability value (VFS_CAP_REVISION_2, effective)
// granting CAP_SETUID and CAP_SETGID: what setcap cap_setuid,cap_setgid+ep
// writes.
const capV2 = `b"\x01\x00\x00\x02" + (0xc0).to_bytes(4, "little") + b"\x00" * 12`

// TestAttack24SetIDPlant: the attempt copies id into every place it may
// write (the sandbox.rw folder, its tree, $HOME, /tmp) as a setuid, a
// setgid, an O_CREAT-with-setuid-mode and a file-capability copy, and
// waits while the harness looks. No copy has a set-id bit or a
// capability; a host user (uid 61535) who runs each copy on the host's
// disk gains nothing (id reports no other effective id); and nothing it
// wrote to the rw folder is root's on the host (as root: it is the share
// identity's, neither root nor nobody nor flakegate's). The label is the
// property's (PASS), and a later check passes.
func TestAttack24SetIDPlant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the harness runs the planted files as another user: needs root")
	}
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		marker := "fg24plant" + nonce(t)
		rw := filepath.Join(t.TempDir(), "rw")
		if err := os.Mkdir(rw, 0o755); err != nil {
			t.Fatal(err)
		}
		reachable(t, rw)
		a := newA16(t, m, config16("", "  rw: [\""+rw+"\"]\n"), libOK)
		if m.asOther() {
			chownAll(t, m.uid, rw)
		}
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	idbin=$(command -v id)
	for d in "` + rw + `" "$PWD" "$HOME" /tmp; do
		cp "$idbin" "$d/fg24-suid" && chmod 4755 "$d/fg24-suid" 2>/dev/null && echo "SET suid in $d"
		cp "$idbin" "$d/fg24-sgid" && chmod 2755 "$d/fg24-sgid" 2>/dev/null && echo "SET sgid in $d"
		chmod u+s "$d/fg24-sgid" 2>/dev/null && echo "SET u+s in $d"
		"$py" - "$idbin" "$d" <<'PY'
import os, sys
src, d = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
for name, mode in (("fg24-creat", 0o4755), ("fg24-creat-sgid", 0o2755)):
    try:
        fd = os.open(os.path.join(d, name), os.O_CREAT | os.O_WRONLY | os.O_EXCL, mode)
        os.write(fd, data); os.close(fd)
        print("CREATED", name, "in", d, oct(os.stat(os.path.join(d, name)).st_mode))
    except OSError as e:
        print("REFUSED", name, e)
p = os.path.join(d, "fg24-fcap")
open(p, "wb").write(data); os.chmod(p, 0o755)
try:
    os.setxattr(p, "security.capability", ` + capV2 + `)
    print("SET file capability in", d)
except OSError as e:
    print("REFUSED file capability", e)
PY
		ls -ln "$d"/fg24-* | sed 's/^/PLANT /'
	done
	sh -c 'sleep 1.5 # ` + marker + `'
	return 0
}
`})
		reachable(t, a.dir) // the host user walks into the worktrees to run what is planted there
		worktrees := treesDir(t, a.dir)
		w := startPlantWatch(t, marker, []string{rw}, []string{filepath.Join(worktrees, "*", "fg24-*")})
		cr := a.run(t, "evil", marker)
		seen := w.stop()
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		for _, l := range linesWith(tail, "SET ") {
			t.Errorf("[%s] SET-ID: inside the attempt: SET %s", m.name, l)
		}
		if len(seen) == 0 {
			t.Fatalf("[%s] the harness saw none of the planted files\n%s", m.name, tail)
		}
		// After the check: what is left in the rw folder, on the host.
		left, _ := filepath.Glob(filepath.Join(rw, "fg24-*"))
		if len(left) == 0 {
			t.Errorf("[%s] nothing the attack planted is left in the rw folder %s", m.name, rw)
		}
		for _, p := range left {
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				t.Fatal(err)
			}
			if _, ok := seen[p]; !ok {
				seen[p] = &planted{path: p}
			}
			seen[p].mode, seen[p].uid, seen[p].gid = st.Mode, st.Uid, st.Gid
			switch {
			case st.Uid == 0 || st.Gid == 0:
				t.Errorf("[%s] OWNERSHIP: %s, written by the attempt, is %d:%d on the host (root's)", m.name, p, st.Uid, st.Gid)
			case m.uid == 0 && (st.Uid == 65534 || int(st.Uid) == os.Geteuid()):
				t.Errorf("[%s] OWNERSHIP: %s, written by the attempt, is uid %d on the host: not a share identity of its own", m.name, p, st.Uid)
			case m.uid != 0 && int(st.Uid) == m.uid:
				t.Logf("[%s] KNOWN GAP (docs/sandbox.md): without root, %s is flakegate's user's (uid %d)", m.name, p, st.Uid)
			}
		}
		for _, p := range seen {
			where := strings.TrimPrefix(p.path, a.dir)
			if p.mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
				t.Errorf("[%s] SET-ID: %s is mode %o on the host", m.name, where, p.mode&0o7777)
			}
			if p.fcap {
				t.Errorf("[%s] SET-ID: %s carries a file capability on the host", m.name, where)
			}
			if strings.HasPrefix(p.ran, "uid=") {
				self := "uid=" + strconv.Itoa(hostUser24)
				if strings.Contains(p.ran, "euid=") || strings.Contains(p.ran, "egid=") || !strings.HasPrefix(p.ran, self+"(") && !strings.HasPrefix(p.ran, self+" ") {
					t.Errorf("[%s] SET-ID: the host user %d ran %s and got: %s", m.name, hostUser24, where, p.ran)
				}
			}
			if p.uid == 0 && strings.HasPrefix(p.path, worktrees) {
				// Root's reset mode writes the tree itself, through an
				// idmapped mount of its owner: docs/sandbox.md.
				t.Logf("[%s] KNOWN GAP (docs/sandbox.md): %s is root's on the host while the attempt runs (reset mode)", m.name, where)
			}
			t.Logf("[%s] planted %s mode %o %d:%d cap %v ran %q", m.name, where, p.mode&0o7777, p.uid, p.gid, p.fcap, p.ran)
		}
		ranAny := false
		for _, p := range seen {
			ranAny = ranAny || strings.HasPrefix(p.ran, "uid=")
		}
		if !ranAny {
			t.Errorf("[%s] the host user ran none of the planted files", m.name)
		}
		labelsAre(t, cr, 0, "PASS")
		a.laterCheck(t)
	})
}
