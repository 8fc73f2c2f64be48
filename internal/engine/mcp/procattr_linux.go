//go:build linux

package mcp

import "syscall"

// serverProcAttr puts the server in its own process group, so that the whole
// group can be signalled, and asks the kernel to SIGKILL the direct child
// when astrid dies, whatever kills astrid.
//
// The parent-death signal fires when the spawning OS thread exits: a
// confined server is started from a locked thread that internal/sandbox
// keeps until the server has been waited for.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
