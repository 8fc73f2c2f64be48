package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter covers what Landlock does not see: sockets of other
// families and protocols (UDP, raw, packet, SCTP, and unix sockets, whose
// paths Landlock does not check on this ABI: a confined command could
// otherwise connect to the daemon's socket), io_uring (which makes sockets
// without socket(2)), new namespaces and mounts, kernel keyrings, BPF and
// loading kernel modules. Everything it refuses fails with EPERM or
// EACCES, never a kill, so that programs can fall back and say what failed;
// only a foreign architecture's system call is killed.

// Offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArg(i int) uint32 { return uint32(offArg0 + 8*i) }

// deniedSyscalls fail with EPERM.
var deniedSyscalls = []uintptr{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
}

// newNamespaces are the clone flags that would make a new namespace.
const newNamespaces = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompProgram is the filter; allowNet lets TCP sockets be made (Landlock
// then says which ports they may reach).
func seccompProgram(allowNet bool) []unix.SockFilter {
	var a asm
	a.load(offArch)
	a.jeq(auditArch, "", "kill")
	a.load(offNr)
	if x32Bit != 0 {
		a.jset(x32Bit, "eperm", "")
	}
	a.jeq(unix.SYS_SOCKET, "socket", "")
	a.jeq(unix.SYS_CLONE, "clone", "")
	a.jeq(unix.SYS_CLONE3, "enosys", "") // its flags are behind a pointer: libc falls back to clone
	for _, nr := range deniedSyscalls {
		a.jeq(uint32(nr), "eperm", "")
	}
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label("clone")
	a.load(offArg(0))
	a.jset(newNamespaces, "eperm", "allow")

	a.label("socket")
	a.load(offArg(0))
	if allowNet {
		a.jeq(unix.AF_INET, "inet", "")
		a.jeq(unix.AF_INET6, "inet", "")
	}
	// Netlink answers questions about this host's interfaces; changing
	// them needs capabilities the process does not have.
	a.jeq(unix.AF_NETLINK, "allow", "eacces")
	a.label("inet")
	a.load(offArg(1))
	a.and(0xf) // SOCK_TYPE_MASK: the flags SOCK_CLOEXEC and SOCK_NONBLOCK are not the type
	a.jeq(unix.SOCK_STREAM, "", "eacces")
	a.load(offArg(2))
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "eacces")

	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eperm")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label("eacces")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	a.label("enosys")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label("kill")
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return a.assemble()
}

// installSeccomp loads the filter on the calling thread (no TSYNC: only
// this thread and what it starts are filtered). no_new_privs must be set.
func installSeccomp(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	return nil
}

// asm assembles a classic BPF program with named jump targets ("" falls
// through to the next instruction).
type asm struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (a *asm) emit(f unix.SockFilter) int {
	a.ins = append(a.ins, f)
	return len(a.ins) - 1
}

func (a *asm) load(off uint32) {
	a.emit(unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *asm) and(k uint32) {
	a.emit(unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (a *asm) ret(k uint32) { a.emit(unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}) }

func (a *asm) jeq(k uint32, t, f string) { a.jump(unix.BPF_JEQ, k, t, f) }

func (a *asm) jset(k uint32, t, f string) { a.jump(unix.BPF_JSET, k, t, f) }

func (a *asm) jump(op uint16, k uint32, t, f string) {
	i := a.emit(unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[i] = [2]string{t, f}
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

// assemble resolves the jumps; a target out of a conditional jump's
// 255-instruction reach, or unknown, is a bug of this file.
func (a *asm) assemble() []unix.SockFilter {
	for i, tf := range a.jumps {
		for n, name := range tf {
			off := 0
			if name != "" {
				to, ok := a.labels[name]
				if !ok || to <= i || to-i-1 > 255 {
					panic(fmt.Sprintf("sandbox: seccomp jump to %q from %d", name, i))
				}
				off = to - i - 1
			}
			if n == 0 {
				a.ins[i].Jt = uint8(off)
			} else {
				a.ins[i].Jf = uint8(off)
			}
		}
	}
	return a.ins
}
