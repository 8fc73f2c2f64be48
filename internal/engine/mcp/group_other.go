//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

// serverProcAttr has no process groups to ask for on this system.
func serverProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the direct child only: this system has no process
// groups to signal.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)
