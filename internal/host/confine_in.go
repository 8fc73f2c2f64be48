package host

import (
	"os/exec"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/host/proc"
)

// Confine prepares cmd to run inside this capsule's grants for principal
// (proc.Sandbox.Confine): readable what fs_read resolves to plus the system
// set and extraRead (the program itself, an MCP server's install
// directory), writable fs_write plus a private temporary directory, no
// network unless the capsule holds a net grant, and never $ASTRID_HOME. It
// sets TMPDIR and HOME in cmd.Env. Start starts cmd; Done must follow Wait.
func (c *Capsule) Confine(op string, cmd *exec.Cmd, principal string, extraRead ...string) (*proc.Confined, error) {
	return c.confine(c.gate, op, cmd, principal, extraRead...)
}

// confine is Confine inside g's grants: a call's gate, whose `*` is its
// request's workspace (scope.go).
func (c *Capsule) confine(g *gate.Gate, op string, cmd *exec.Cmd, principal string, extraRead ...string) (*proc.Confined, error) {
	return c.deps.Sandbox.Confine(g, c.deps.Egress, c.log, op, cmd, principal, extraRead...)
}

// Workspace is the directory the call's `*` grants and relative paths
// resolve under: its request scope's workspace, the kernel's own for an
// unscoped call (or a scope of settings alone), "" when its scope has
// closed (nothing resolves against it then; see closedScope). An engine
// that keeps a process for longer than a call (an MCP server) uses it to
// pick, or start, the process of that workspace (ConfineIn).
func (call *Call) Workspace() string { return call.gate().Workspace() }

// ConfineIn is Confine with the capsule's grants resolved for workspace ws
// (a request's, from Call.Workspace) instead of the kernel's: `*` is ws,
// exactly as for a process a call starts in that request's scope. It is
// for a process that outlives the call that caused it and serves later
// calls of the same workspace, so it takes the workspace, not a call.
func (c *Capsule) ConfineIn(ws, op string, cmd *exec.Cmd, principal string, extraRead ...string) (*proc.Confined, error) {
	g, err := c.gate.WithWorkspace(ws)
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	return c.confine(g, op, cmd, principal, extraRead...)
}
