package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// filterProbe tries, inside the attempt, every call the filter refuses
// for the page cache and for set-id modes, each also with high bits set
// above an int argument (the kernel reads only the low word), and the
// calls it must still allow. It prints "ALLOWED name" for a refused call
// that worked, "REFUSED name" for an allowed one that did not, "ok name"
// otherwise.
const filterProbe = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
def sc(*a):
    r = libc.syscall(*[L(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()
fd = os.open("data", os.O_RDONLY)
buf = ctypes.c_buffer(1 << 20)
libc.mmap.restype = ctypes.c_void_p
maddr = libc.mmap(None, L(1 << 20), 1, 1, fd, L(0))
vec = (ctypes.c_ubyte * 256)()
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 4096)
stat = (ctypes.c_ulong * 16)()
rng = (ctypes.c_ulong * 2)(0, 1 << 20)
HI = 1 << 32
def refused(name, r):
    print(("ALLOWED " if r[0] >= 0 else "ok ") + name, r)
def allowed(name, r):
    print(("REFUSED " if r[0] < 0 else "ok ") + name, r)
refused("mincore", sc(27, maddr, 1 << 20, vec))
refused("cachestat", sc(451, fd, rng, stat, 0))
refused("fadvise64 DONTNEED", sc(221, fd, 0, 0, 4))
refused("fadvise64 DONTNEED high bits", sc(221, fd, 0, 0, HI | 4))
refused("fadvise64 NOREUSE", sc(221, fd, 0, 0, 5))
refused("madvise PAGEOUT", sc(28, maddr, 1 << 20, 21))
refused("madvise PAGEOUT high bits", sc(28, maddr, 1 << 20, HI | 21))
refused("madvise COLD", sc(28, maddr, 1 << 20, 20))
refused("process_madvise", sc(440, -1, iov, 1, 21, 0))
refused("preadv2 RWF_NOWAIT", sc(327, fd, iov, 1, 0, 0, 8))
refused("pwritev2 RWF_NOWAIT", sc(328, fd, iov, 1, 0, 0, 8))
refused("io_setup", sc(206, 1, ctypes.byref(ctypes.c_ulong(0))))
allowed("fadvise64 WILLNEED", sc(221, fd, 0, 0, 3))
allowed("fadvise64 SEQUENTIAL", sc(221, fd, 0, 0, 2))
allowed("madvise WILLNEED", sc(28, maddr, 1 << 20, 3))
allowed("madvise DONTNEED", sc(28, maddr, 1 << 20, 4))
allowed("preadv2", sc(327, fd, iov, 1, 0, 0, 0))
open("plain", "w").write("x")
refused("chmod 4755", sc(90, b"plain", 0o4755))
refused("chmod 2755", sc(90, b"plain", 0o2755))
refused("chmod 4755 high bits", sc(90, b"plain", HI | 0o4755))
pfd = os.open("plain", os.O_RDONLY)
refused("fchmod 4755", sc(91, pfd, 0o4755))
refused("fchmodat 6755", sc(268, -100, b"plain", 0o6755))
refused("fchmodat2 4755", sc(452, -100, b"plain", 0o4755, 0))
refused("open O_CREAT 4755", sc(2, b"new1", os.O_CREAT | os.O_WRONLY, 0o4755))
refused("openat O_CREAT 2755", sc(257, -100, b"new2", os.O_CREAT | os.O_WRONLY, 0o2755))
refused("creat 4755", sc(85, b"new3", 0o4755))
refused("openat2", sc(437, -100, b"new4", (ctypes.c_ulong * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0), 24))
refused("mkdir 2755", sc(83, b"dir1", 0o2755))
refused("mkdirat 4755", sc(258, -100, b"dir2", 0o4755))
refused("mknod 4755 regular", sc(133, b"new5", 0o100000 | 0o4755, 0))
refused("mknodat 2755 regular", sc(259, -100, b"new6", 0o100000 | 0o2755, 0))
allowed("chmod 755", sc(90, b"plain", 0o755))
allowed("chmod 1777", sc(90, b"plain", 0o1777))
allowed("openat O_CREAT 644", sc(257, -100, b"new7", os.O_CREAT | os.O_WRONLY, 0o644))
allowed("mkdir 755", sc(83, b"dir3", 0o755))
pid = os.fork()
if pid == 0:
    r = sc(112)
    if r[0] >= 0:
        os._exit(3)
    os._exit(0 if sc(109, 0, 0)[0] == 0 else 4)
st = os.waitpid(pid, 0)[1]
if st == 3 << 8:
    print("ALLOWED setsid")
elif st != 0:
    print("REFUSED setpgid", st)
else:
    print("ok setsid refused, setpgid allowed")
allowed("getsid", sc(124, 0))
for p in ("new1", "new2", "new3", "new4", "new5", "new6", "dir1", "dir2"):
    if os.path.lexists(p) and os.lstat(p).st_mode & 0o6000:
        print("ALLOWED set-id file", p, oct(os.lstat(p).st_mode))
print("done")
`

// TestSeccompRefusesPageCacheAndSetID: in every kind of attempt (bwrap
// alone, and as root through the helper on an overlay and on the tree
// itself), the page-cache probes and evictions, setsid (the autogroup
// counter) and every way to give a file a set-id mode are refused, high bits above an int argument
// included, while the harmless neighbours of each still work.
func TestSeccompRefusesPageCacheAndSetID(t *testing.T) {
	bwrap := needBwrap(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed to make raw system calls: apt-get install python3")
		}
		t.Skip("python3 is needed to make raw system calls")
	}
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	for _, tc := range []struct {
		name           string
		probe, overlay bool
	}{
		{name: "bwrap alone"},
		{name: "probed, reset", probe: true},
		{name: "probed, overlay", probe: true, overlay: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := os.MkdirTemp(root, "tree-")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tree, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tree, "data"), make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tree, "probe.py"), []byte(filterProbe), 0o644); err != nil {
				t.Fatal(err)
			}
			sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
			if tc.probe {
				if err := sb.Probe(context.Background(), root, env, tc.overlay); err != nil {
					t.Fatal(err)
				}
			}
			o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"python3", "probe.py"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
			if !strings.Contains(o.Tail, "done") {
				t.Fatalf("the probe did not finish: %s (%s)\n%s", o.Result, o.Reason, o.Tail)
			}
			for _, l := range strings.Split(o.Tail, "\n") {
				if strings.HasPrefix(l, "ALLOWED ") || strings.HasPrefix(l, "REFUSED ") {
					t.Errorf("%s", l)
				}
			}
		})
	}
}
