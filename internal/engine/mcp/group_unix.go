//go:build unix

package mcp

import (
	"errors"
	"syscall"
)

// signalGroup signals every process in the group led by pid. A group whose
// last member is gone answers ESRCH, which is not an error here. While any
// member lives, the kernel does not hand the group's id to a new process, so
// the signal cannot reach a stranger.
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
