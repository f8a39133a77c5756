package runner

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

// seccompProgram is the attempt's seccomp filter as the raw BPF program
// bwrap's --seccomp reads (struct sock_filter[], native byte order). It
// allows everything but deniedSyscalls, clone with a namespace flag, and
// clone3, whose flags a filter cannot read: it fails with ENOSYS, so
// libc falls back to clone, which the filter can read. A process of
// another architecture (32-bit code on a 64-bit kernel) is killed.
var seccompProgram = sync.OnceValues(func() ([]byte, error) {
	group := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: deniedSyscalls}
	for _, flag := range newNamespaceFlags {
		group.NamesWithCondtions = append(group.NamesWithCondtions, seccomp.NameWithConditions{
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: flag}},
		})
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			group,
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, err
	}
	native, err := arch.GetInfo("")
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
