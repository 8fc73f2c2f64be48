package sandbox

import (
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minABI is the Landlock ABI enforce mode needs: 3 makes truncation a
// right (without it a read-only file could still be emptied), 4 adds TCP
// rules, 6 keeps signals and abstract unix sockets inside the domain (a
// confined command could otherwise signal the daemon).
const minABI = MinABI

// MinABI is the Landlock ABI confinement needs (see minABI).
const MinABI = 6

// Rights by ABI (docs.kernel.org/userspace-api/landlock.html).
const (
	fsRead  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fsWrite = fsRead | ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSym | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSock | ll.AccessFSRefer | ll.AccessFSTruncate
	fsDevice = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSIoctlDev | ll.AccessFSTruncate
	// fsFile is what a rule on a file (not a directory) may carry.
	fsFile = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS is every file right the kernel of this ABI knows: all of them
// are denied unless a rule grants them.
func handledFS(abi int) uint64 {
	h := uint64(ll.AccessFSMakeSym<<1 - 1) // ABI 1
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		h |= ll.AccessFSIoctlDev
	}
	return h
}

// rights is what a rule grants on this kernel.
func (r rule) rights(abi int) uint64 {
	var a uint64
	switch r.access {
	case accessRead:
		a = fsRead
	case accessWrite:
		a = fsWrite
	case accessDevice:
		a = fsDevice
	case accessList:
		a = ll.AccessFSReadDir
	}
	if !r.dir {
		a &= fsFile
	}
	return a & handledFS(abi)
}

// ruleset builds the Landlock ruleset of rules and ports: a file
// descriptor the confining thread restricts itself with.
func ruleset(abi int, rules []rule, ports []uint16) (fd int, err error) {
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(abi)}
	if abi >= 4 {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err = ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("sandbox: landlock_create_ruleset: %w", err)
	}
	fail := func(err error) (int, error) {
		unix.Close(fd)
		return -1, err
	}
	for _, r := range rules {
		a := r.rights(abi)
		if a == 0 {
			continue
		}
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(fmt.Errorf("sandbox: open %s for its rule: %w", r.path, err))
		}
		err = ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: a, ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			return fail(fmt.Errorf("sandbox: rule for %s: %w", r.path, err))
		}
	}
	if abi >= 4 {
		for _, port := range ports {
			na := ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}
			if err := ll.LandlockAddNetPortRule(fd, &na, 0); err != nil {
				return fail(fmt.Errorf("sandbox: rule for TCP port %d: %w", port, err))
			}
		}
	}
	return fd, nil
}

// restrictThread confines the calling OS thread with the ruleset: no new
// privileges first (Landlock requires it of a process without
// CAP_SYS_ADMIN, and it keeps setuid programs from undoing the rest).
func restrictThread(rulesetFD int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(rulesetFD, 0); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	return nil
}

// landlockABI is the running kernel's Landlock ABI, 0 when it has none.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
