package runtime

import (
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/manifest"
)

// Widening lists what next asks for that prev did not grant: capability
// entries and flags, publish and subscribe keys, interceptor patterns and
// MCP server commands (each a host process). Patterns are compared as written, so
// rewriting a key counts as widening even when it matches less; the operator
// confirms such a change by installing the capsule again.
func Widening(prev, next *manifest.Manifest) []string {
	var out []string
	list := func(what string, before, after []string) {
		for _, s := range after {
			if !slices.Contains(before, s) {
				out = append(out, fmt.Sprintf("%s adds %q", what, s))
			}
		}
	}
	flag := func(what string, before, after bool) {
		if after && !before {
			out = append(out, what+" turns on")
		}
	}
	p, n := prev.Capabilities, next.Capabilities
	flag("capabilities.uplink", p.Uplink, n.Uplink)
	list("capabilities.net", p.Net, n.Net)
	list("capabilities.net_bind", p.NetBind, n.NetBind)
	list("capabilities.net_connect", p.NetConnect, n.NetConnect)
	list("capabilities.fs_read", p.FSRead, n.FSRead)
	list("capabilities.fs_write", p.FSWrite, n.FSWrite)
	list("capabilities.host_process", p.HostProcess, n.HostProcess)
	flag("capabilities.allow_persistent", p.AllowPersistent, n.AllowPersistent)
	list("capabilities.identity", p.Identity, n.Identity)
	flag("capabilities.allow_prompt_injection", p.AllowPromptInjection, n.AllowPromptInjection)
	flag("capabilities.tool_middleware", p.ToolMiddleware, n.ToolMiddleware)
	list("[publish]", prev.PublishPatterns(), next.PublishPatterns())
	list("[subscribe]", prev.SubscribePatterns(), next.SubscribePatterns())
	list("interceptor", interceptorKeys(prev), interceptorKeys(next))
	list("mcp_server", mcpKeys(prev), mcpKeys(next))
	return out
}

func interceptorKeys(m *manifest.Manifest) []string {
	var out []string
	for _, i := range m.Interceptors() {
		// A renamed handler is a code change; a new pattern puts the
		// capsule into chains it was not in.
		if !slices.Contains(out, i.Pattern) {
			out = append(out, i.Pattern)
		}
	}
	return out
}

func mcpKeys(m *manifest.Manifest) []string {
	var out []string
	for _, s := range m.MCPServers {
		if s.Type == "stdio" {
			out = append(out, s.ID+": "+s.Command)
		}
	}
	return out
}
