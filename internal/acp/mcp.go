package acp

import (
	"context"
	"path/filepath"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/sessionmcp"
)

// The MCP servers an editor lists on session/new and session/load are the
// session's own (docs/rationale/cli.md): such a session gets a workspace
// of its own (a request scope no other session shares), the servers are
// attached to it through the Backend (Workspace.Attach: the kernel checks
// them against the operator's rules and loads them bound to that scope),
// and they stop when the workspace is released: the session closed,
// loaded again, or the connection ended. A session without servers shares
// its directory's workspace as before.

// editorServers turns the editor's list into what the kernel checks; SSE
// (deprecated in MCP, not offered in initialize) and ACP-transported
// servers are refused by name.
func editorServers(list []acpsdk.McpServer) ([]sessionmcp.Server, error) {
	out := make([]sessionmcp.Server, 0, len(list))
	for _, srv := range list {
		switch {
		case srv.Stdio != nil:
			s := sessionmcp.Server{Name: srv.Stdio.Name, Command: srv.Stdio.Command, Args: srv.Stdio.Args}
			for _, v := range srv.Stdio.Env {
				s.Env = append(s.Env, sessionmcp.Var{Name: v.Name, Value: v.Value})
			}
			out = append(out, s)
		case srv.Http != nil:
			s := sessionmcp.Server{Name: srv.Http.Name, URL: srv.Http.Url}
			for _, h := range srv.Http.Headers {
				s.Headers = append(s.Headers, sessionmcp.Var{Name: h.Name, Value: h.Value})
			}
			out = append(out, s)
		case srv.Sse != nil:
			return nil, invalidParams("mcpServers: server %q uses SSE, which astrid acp does not offer (initialize: mcpCapabilities); use its HTTP endpoint", srv.Sse.Name)
		case srv.Acp != nil:
			return nil, invalidParams("mcpServers: server %q is carried over ACP, which astrid acp does not offer", srv.Acp.Name)
		default:
			return nil, invalidParams("mcpServers: an entry names no transport")
		}
	}
	return out, nil
}

// openSession is the workspace a session works on: its directory's shared
// one, or, with servers, one of its own with them attached. own says the
// session must release it (release).
func (a *agent) openSession(ctx context.Context, cwd string, servers []sessionmcp.Server) (ws Workspace, own bool, err error) {
	if len(servers) == 0 {
		ws, err := a.open(ctx, cwd)
		return ws, false, err
	}
	if !filepath.IsAbs(cwd) {
		return Workspace{}, false, invalidParams("cwd %q is not an absolute path", cwd)
	}
	ws, err = a.opts.Backend.Open(ctx, filepath.Clean(cwd))
	if err != nil {
		return Workspace{}, false, invalidParams("cwd: %v", err)
	}
	if ws.Attach == nil {
		release(ws)
		return Workspace{}, false, invalidParams("mcpServers: this astrid cannot load an editor's MCP servers")
	}
	tools, err := ws.Attach(ctx, servers)
	if err != nil {
		release(ws)
		return Workspace{}, false, invalidParams("mcpServers: %v", err)
	}
	a.log.Info("acp: the editor's MCP servers loaded for one session", "workspace", ws.Dir, "servers", len(servers), "tools", len(tools))
	return ws, true, nil
}

// release lets a workspace go.
func release(ws Workspace) {
	if ws.Close != nil {
		ws.Close()
	}
}

// releaseOwn releases s's workspace when it is the session's own (its MCP
// servers stop with it).
func (s *session) releaseOwn() {
	s.mu.Lock()
	ws, own := s.ws, s.own
	s.own = false
	s.mu.Unlock()
	if own {
		release(ws)
	}
}
