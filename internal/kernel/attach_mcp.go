package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/sessionmcp"
	"github.com/astrid-go/astrid/manifest"
)

// unloadWait bounds the unload of a scope's MCP capsule once its scope
// closed (each server gets the engine's stop grace).
const unloadWait = 30 * time.Second

// AttachMCP loads the MCP servers a frontend's session brought (an
// editor's mcpServers) as one capsule bound to request scope (DESIGN §4a):
// checked against the operator's rules (config [mcp] session_commands,
// session_read; sessionmcp), started in the scope's workspace confined to
// it, their tools offered and callable in that scope only (the MCP
// engine's Options.Bound), every call asked about like any mutable tool's,
// and unloaded, their processes stopped, when the scope closes, however
// its client left. principal must be the scope's. It returns the tools'
// names. No servers: nothing is loaded.
func (k *Kernel) AttachMCP(ctx context.Context, principal string, scope uint64, servers []sessionmcp.Server) ([]string, error) {
	if len(servers) == 0 {
		return nil, nil
	}
	sc, ok := k.hostDeps.Scopes.Lookup(scope)
	if !ok || sc.Principal != principal {
		return nil, fmt.Errorf("request scope %d is not open for principal %s", scope, principal)
	}
	if sc.Workspace == "" {
		return nil, fmt.Errorf("request scope %d has no workspace for MCP servers to run in", scope)
	}
	rules := sessionmcp.Rules{Commands: k.opts.Config.MCP.SessionCommands, Read: k.opts.Config.MCP.SessionRead,
		LocalAllowed: len(k.opts.Config.Egress.Allow) > 0}
	checked, err := sessionmcp.Check(servers, rules)
	if err != nil {
		return nil, err
	}
	// A tag of its own, never the scope's id (which starts again at 1
	// with each daemon): an "always allow" the editor gave one session's
	// tool is stored by capsule and tool, and must not reach another
	// session's server of the same name later.
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("the session's MCP capsule: %w", err)
	}
	tag := hex.EncodeToString(b[:])
	id := "session-mcp-" + tag
	m, err := sessionmcp.Manifest(id, tag, sc.Workspace, checked, rules)
	if err != nil {
		return nil, fmt.Errorf("the session's MCP capsule: %w", err)
	}
	bind := &mcp.Binding{Scope: scope, Principal: principal, Workspace: sc.Workspace}
	var engines []*mcp.Engine
	err = k.Load(ctx, m, sc.Workspace, func(h *host.Capsule) ([]capsule.Engine, error) {
		out := make([]capsule.Engine, 0, len(m.MCPServers))
		for i, srv := range m.MCPServers {
			e, err := k.boundMCPEngine(srv, m, h, sessionmcp.EnvOf(checked[i]), bind)
			if err != nil {
				return nil, err
			}
			engines = append(engines, e)
			out = append(out, e)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	unload := func() {
		ctx, cancel := context.WithTimeout(context.Background(), unloadWait)
		defer cancel()
		if err := k.Unload(ctx, id); err != nil {
			k.log.Warn("a closed scope's MCP servers did not unload", "capsule", id, "err", err)
			return
		}
		k.log.Info("a closed scope's MCP servers stopped", "capsule", id, "principal", principal, "workspace", sc.Workspace)
	}
	// The scope's close runs on its client's goroutine: the unload, which
	// waits for the servers to stop, runs on its own.
	if !k.hostDeps.Scopes.OnClose(scope, func() { go unload() }) {
		unload()
		return nil, fmt.Errorf("request scope %d closed while its MCP servers loaded", scope)
	}
	var tools []string
	for _, e := range engines {
		for _, t := range e.Tools() {
			tools = append(tools, t.Name)
		}
	}
	k.log.Info("a scope's MCP servers loaded", "capsule", id, "principal", principal, "workspace", sc.Workspace, "tools", len(tools))
	return tools, nil
}

// boundMCPEngine is mcpEngine for a server bound to one scope: no
// sampling, no stored tokens (the server is the session's, not an
// installed capsule's).
func (k *Kernel) boundMCPEngine(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, env map[string]string, bind *mcp.Binding) (*mcp.Engine, error) {
	hp := k.opts.Config.Health
	maxRestarts := hp.MaxRestarts
	if maxRestarts == 0 {
		maxRestarts = -1
	}
	return mcp.New(srv, m, h, mcp.Options{Logger: k.log, Env: env, StartTimeout: k.opts.Config.MCPHandshakeTimeout.Duration,
		RestartBackoff: hp.RestartBackoff.Duration, MaxBackoff: hp.MaxRestartBackoff.Duration, MaxRestarts: maxRestarts, Bound: bind})
}
