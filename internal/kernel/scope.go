package kernel

import "github.com/astrid-go/astrid/internal/host"

// OpenScope opens a request scope for principal working on ws (DESIGN
// §4a): what the uplink opens for each daemon client, for an in-process
// frontend that serves several workspaces at once (astrid acp, one per
// editor session). A publish whose dispatch.Caller carries the id works
// there, and so does all the work it begins. ws is checked as a client's
// workspace is (host.CheckWorkspace); the scope's provider settings are
// the kernel's own (Options.ConfigFallback). It returns the id and the
// workspace as taken.
func (k *Kernel) OpenScope(principal, ws string) (uint64, string, error) {
	checked, err := host.CheckWorkspace(ws, k.hostDeps.Home, -1)
	if err != nil {
		return 0, "", err
	}
	return k.hostDeps.Scopes.Open(host.Scope{Principal: principal, Workspace: checked}), checked, nil
}

// CloseScope closes a scope OpenScope opened: work still running in it
// from then on has no workspace.
func (k *Kernel) CloseScope(id uint64) { k.hostDeps.Scopes.Close(id) }
