package uplink

import (
	"errors"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// A client's requests work in its own workspace, with its own provider
// settings (DESIGN §4a, §8; docs/uplink.md "Workspace and settings"): its
// hello names them, the uplink opens a request scope for them, and every
// publish of the connection carries it, so the turn or tool call it starts
// resolves `*` and relative paths there and its provider reads the
// client's keys. A client that names neither works in the daemon's own
// workspace with the stored settings, as before. Nothing of the settings
// is logged.

// openScope opens the client's scope from its hello. It returns the
// workspace taken, or the error frame to close with.
func (c *client) openScope(f uplinkwire.Frame) (string, *uplinkwire.Frame) {
	if err := uplinkwire.CheckEnv(f.Env); err != nil {
		e := uplinkwire.Errorf(0, uplinkwire.CodeSettings, "%v", err)
		return "", &e
	}
	c.env = uplinkwire.ScopeConfig(f.Env)
	if f.Workspace == "" && len(c.env) == 0 {
		return "", nil
	}
	id, ws, err := c.open(f.Workspace)
	if err != nil {
		e := uplinkwire.Errorf(0, uplinkwire.CodeWorkspace, "%s", messageOf(err))
		return "", &e
	}
	c.mu.Lock()
	c.scope = id
	c.mu.Unlock()
	return ws, nil
}

// open opens a scope of the client's settings working on ws.
func (c *client) open(ws string) (uint64, string, error) {
	id, taken, err := c.srv.up.OpenScope(c.principal, hostapi.Scope{Workspace: ws, Config: c.env, PeerUID: c.uid})
	if err != nil {
		return 0, "", err
	}
	c.mu.Lock()
	c.scopes = append(c.scopes, id)
	c.mu.Unlock()
	return id, taken, nil
}

// setWorkspace answers a workspace request: the connection's later
// publishes work on the directory it names (a session continued from
// another directory works on its own). Work already started keeps its
// scope.
func (c *client) setWorkspace(f uplinkwire.Frame) uplinkwire.Frame {
	if f.Workspace == "" {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeWorkspace, "a workspace request names a directory")
	}
	id, ws, err := c.open(f.Workspace)
	if err != nil {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeWorkspace, "%s", messageOf(err))
	}
	c.mu.Lock()
	c.scope = id
	c.mu.Unlock()
	return uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, Workspace: ws}
}

func (c *client) currentScope() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scope
}

// closeScopes closes every scope the client opened: work of its still
// running from then on has no workspace and none of its settings.
func (c *client) closeScopes() {
	c.mu.Lock()
	scopes := c.scopes
	c.scopes, c.scope = nil, 0
	c.mu.Unlock()
	for _, id := range scopes {
		c.srv.up.CloseScope(id)
	}
}

// messageOf is a host error's message without its op.
func messageOf(err error) string {
	var e *hostapi.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
