package sandbox

import (
	"encoding/binary"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside every attempt. They are the calls
// that change what the sandbox is (mounts, namespaces, the root), reach
// state shared with the host or with other attempts (the kernel keyring,
// which outlives an attempt and would let a retry tell itself from the
// first attempt), or exist mainly as kernel attack surface (bpf, perf,
// io_uring, userfaultfd, module and kexec loading). The attempt holds no
// capability, so most would fail anyway; the filter is the second wall,
// for the day a kernel bug hands a capability back. ptrace is denied
// whole: the attempt's pid namespace already hides every process it did
// not start, and no property test needs a debugger.
var deniedSyscalls = []string{
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "ptrace", "process_vm_writev",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime", "iopl", "ioperm",
}

// newNamespaceFlags are clone(2) flags that make a namespace: denied, so
// that the attempt stays in the namespaces bwrap made (bwrap's
// --disable-userns already refuses new user namespaces).
var newNamespaceFlags = []uint64{
	unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
	unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME,
}

// sessionCalls start a new session, and every new session on the machine
// takes the next number of one counter, the autogroup id any process
// reads in /proc/self/autogroup: attempt 0 could count it up to a value
// (modulo a number it picks) that a retry's own setsid would recognise,
// so setsid is refused inside the attempt. bwrap's own --new-session
// runs before it applies the filter, so every attempt is still a session
// (and an autogroup) of its own, and its leader. The cost: a test cannot
// start a session of its own (Python's start_new_session=True, Go's
// SysProcAttr.Setsid, setsid(1), a daemon that detaches, pg_ctl start)
// and gets EPERM. setpgid (a process group of its own) still works.
var sessionCalls = []string{"setsid"}

// residencyCalls tell whether a file's pages are in the host's page
// cache, which every attempt shares (the tree's lower layer, /usr, the
// shares): denied whole, so that a retry cannot ask whether an earlier
// attempt read or evicted a file. process_madvise is denied whole too:
// it takes the advice madvise's rule below refuses.
var residencyCalls = []string{"mincore", "cachestat", "process_madvise"}

// evictAdvice is the advice that drops a file's pages from the page
// cache (fadvise64's POSIX_FADV_DONTNEED and NOREUSE, madvise's
// MADV_COLD and MADV_PAGEOUT): an attempt must not change what the next
// one finds cached. Loading pages (reading, WILLNEED) is not refused;
// what an attempt loads is reclaimed with its cgroup (cgroup_linux.go).
var evictAdvice = []struct {
	call string
	arg  uint32
	vals []uint64
}{
	{"fadvise64", 3, []uint64{unix.FADV_DONTNEED, unix.FADV_NOREUSE}},
	{"madvise", 2, []uint64{unix.MADV_COLD, unix.MADV_PAGEOUT}},
}

// nowaitCalls take RWF_NOWAIT in their flags (argument 5), which makes a
// read fail with EAGAIN when the data is not cached: a residency probe.
var nowaitCalls = []string{"preadv2", "pwritev2"}

// counterCalls reach a counter the whole machine shares that an attempt
// could move and a retry read: a socket's cookie is taken from one
// global counter when first asked for, by getsockopt SO_COOKIE or by a
// sock_diag dump (a NETLINK_SOCK_DIAG socket), and almost nothing else
// asks, so attempt 0 could leave it at a count a retry recognises. Both
// are refused: each condition is all of an argument's low words, as the
// kernel reads these int arguments.
var counterCalls = []struct {
	call string
	args [][2]uint64 // argument index, value
}{
	{"getsockopt", [][2]uint64{{1, unix.SOL_SOCKET}, {2, unix.SO_COOKIE}}},
	{"socket", [][2]uint64{{0, unix.AF_NETLINK}, {2, unix.NETLINK_SOCK_DIAG}}},
}

// setIDMode lists the calls that take a file mode, with the mode's
// argument: a mode with S_ISUID or S_ISGID is refused, so nothing an
// attempt writes is set-id on the host (an idmapped share, or a reset
// tree). The kernel reads the mode as a umode_t (16 bits): the filter
// reads the low word, where both bits are. openat2, whose mode is in a
// struct no filter can read, fails with ENOSYS (libc falls back to
// openat). File capabilities need CAP_SETFCAP, which no attempt holds.
var setIDMode = []struct {
	call string
	arg  uint32
}{
	{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2},
	{"open", 2}, {"openat", 3}, {"creat", 1},
	{"mkdir", 1}, {"mkdirat", 2}, {"mknod", 1}, {"mknodat", 2},
}

// lowWordIs is the conditions under which argument arg's low 32 bits
// are v, whatever its high bits: the kernel reads an int argument (an
// advice) from the low word only, so a comparison of all 64 bits could
// be stepped around with a high bit set.
func lowWordIs(arg uint32, v uint64) seccomp.ArgumentConditions {
	c := seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.BitsNotSet, Value: 0xffffffff &^ v}}
	for bit := uint64(1); bit <= 0x80000000; bit <<= 1 {
		if v&bit != 0 {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: bit})
		}
	}
	return c
}

// seccompProgram is the attempt's seccomp filter as the raw BPF program
// bwrap's --seccomp reads (struct sock_filter[], native byte order). It
// allows everything but deniedSyscalls, clone with a namespace flag, the
// page-cache probes and evictions, the socket cookie counter, setsid,
// set-id modes, and clone3 and openat2,
// whose flags and mode a filter cannot read: they fail with ENOSYS, so
// libc falls back to clone and openat, which the filter can read (as it
// does for Linux AIO's io_setup, whose requests can carry RWF_NOWAIT). A
// process of another architecture (32-bit code on a 64-bit kernel) is
// killed.
var seccompProgram = sync.OnceValues(func() ([]byte, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	known := func(names []string) []string { // the calls this architecture has (arm64 has no open, chmod, ...)
		var out []string
		for _, n := range names {
			if _, ok := native.SyscallNames[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	group := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: known(append(append(append([]string(nil), deniedSyscalls...), residencyCalls...), sessionCalls...))}
	cond := func(name string, c seccomp.ArgumentConditions) {
		if len(known([]string{name})) == 1 {
			group.NamesWithCondtions = append(group.NamesWithCondtions, seccomp.NameWithConditions{Name: name, Conditions: c})
		}
	}
	for _, flag := range newNamespaceFlags {
		cond("clone", seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: flag}})
	}
	for _, e := range evictAdvice {
		for _, v := range e.vals {
			cond(e.call, lowWordIs(e.arg, v))
		}
	}
	for _, n := range nowaitCalls {
		cond(n, seccomp.ArgumentConditions{{Argument: 5, Operation: seccomp.BitsSet, Value: unix.RWF_NOWAIT}})
	}
	for _, k := range counterCalls {
		var c seccomp.ArgumentConditions
		for _, a := range k.args {
			c = append(c, lowWordIs(uint32(a[0]), a[1])...)
		}
		cond(k.call, c)
	}
	for _, m := range setIDMode {
		cond(m.call, seccomp.ArgumentConditions{{Argument: m.arg, Operation: seccomp.BitsSet, Value: unix.S_ISUID | unix.S_ISGID}})
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			group,
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: known([]string{"clone3", "openat2", "io_setup"})},
		},
	}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, err
	}
	// The library's program allows every call of a foreign architecture
	// (i386 through int 0x80 on x86_64): refuse them all first, so a
	// 32-bit binary cannot step around the list.
	insns = append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
	}, insns...)
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
})
