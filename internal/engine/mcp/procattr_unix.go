//go:build unix && !linux

package mcp

import "syscall"

// serverProcAttr puts the server in its own process group. These systems
// have no parent-death signal: a server outlives an astrid that dies without
// unloading it (see the package documentation).
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
