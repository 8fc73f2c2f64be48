package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// hookTool is the MCP tool an interceptor call is made to (seed 003).
const hookTool = "astrid_hook_intercept"

// Handler names the engine binds on the bus. A tool's handler carries its
// bus name, so that two servers of one capsule never claim each other's
// calls.
const (
	toolHandlerPrefix = "mcp_tool:"
	describeHandler   = "mcp_describe"
)

// maxMCPToolName is the longest tool name MCP allows (SEP-986).
const maxMCPToolName = 128

// tool is one MCP tool as the bus sees it.
type tool struct {
	mcpName string // the name the server knows it by
	busName string // <server id>:<mcp name>
	desc    ipc.ToolDescriptor
}

// listTools asks the server for its tools (following cursors) and keeps
// those whose bus name is valid and not already taken, logging the rest.
// The hook tool is not offered on the bus; hasHook reports it.
func (e *Engine) listTools(ctx context.Context, s *server) (tools []tool, hasHook bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	seen := map[string]bool{}
	for t, err := range s.session.Tools(ctx, nil) {
		if err != nil {
			return nil, false, err
		}
		if t.Name == hookTool {
			hasHook = true
			continue
		}
		if len(t.Name) > maxMCPToolName {
			// The bus would take a longer name (ipc.MaxToolNameBytes), but
			// MCP does not, and no model API takes one half as long.
			e.log.Warn("mcp tool left off the bus: its name is longer than MCP allows", "tool", fmt.Sprintf("%.40s…", t.Name), "bytes", len(t.Name), "limit", maxMCPToolName)
			continue
		}
		name := e.srv.ID + ":" + t.Name
		if err := ipc.ValidateToolName(name); err != nil {
			e.log.Warn("mcp tool left off the bus: its name is not a valid tool name", "tool", t.Name, "err", err)
			continue
		}
		if seen[name] {
			e.log.Warn("mcp tool left off the bus: the server lists it twice", "tool", t.Name)
			continue
		}
		seen[name] = true
		schema, err := schemaOf(t)
		if err != nil {
			e.log.Warn("mcp tool left off the bus: its input schema does not encode", "tool", t.Name, "err", err)
			continue
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		tools = append(tools, tool{mcpName: t.Name, busName: name, desc: ipc.ToolDescriptor{
			Name:        name,
			Description: desc,
			InputSchema: schema,
			// A session's server is the editor's, not the operator's:
			// its read-only hint is not believed (bound.go).
			Mutable: t.Annotations == nil || !t.Annotations.ReadOnlyHint || e.opts.Bound != nil,
		}})
	}
	return tools, hasHook, nil
}

func schemaOf(t *mcp.Tool) (json.RawMessage, error) {
	if t.InputSchema == nil {
		return nil, nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	return b, nil
}

// Tools returns the descriptors of the tools the engine put on the bus.
func (e *Engine) Tools() []ipc.ToolDescriptor {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ipc.ToolDescriptor, len(e.tools))
	for i, t := range e.tools {
		out[i] = t.desc
	}
	return out
}

// lookup finds a loaded tool by its handler name.
func (e *Engine) lookup(handler string) (tool, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.tools {
		if toolHandlerPrefix+t.busName == handler {
			return t, true
		}
	}
	return tool{}, false
}

// Surface implements capsule.SurfaceProvider: an interceptor on each tool's
// execute topic (with the subscribe grant every interceptor needs) and the
// publish grant for its result topic and for agent.v1.tool.progress, and, from the first MCP engine of the
// capsule only, the describe interceptor with the grant for the capsule's
// describe response, and those of the resource, prompt and completion
// conventions its servers offer (served_bus.go). Every topic is derived from a
// validated tool name or the capsule id; the server chooses none.
func (e *Engine) Surface() capsule.Surface {
	var s capsule.Surface
	e.mu.Lock()
	for _, t := range e.tools {
		s.Interceptors = append(s.Interceptors, manifest.Interceptor{
			Pattern: ipc.ToolExecuteTopic(t.busName), Handler: toolHandlerPrefix + t.busName, Priority: manifest.DefaultPriority,
		})
		s.Subscribe = append(s.Subscribe, ipc.ToolExecuteTopic(t.busName))
		s.Publish = append(s.Publish, ipc.ToolResultTopic(t.busName))
	}
	e.mu.Unlock()
	if len(s.Interceptors) > 0 {
		// A call's progress and log messages, for the call's principal
		// (progress.go, logging.go).
		s.Publish = append(s.Publish, ipc.AgentToolProgressTopic, ipc.AgentToolLogTopic)
	}
	if describer(e) == e {
		s.Interceptors = append(s.Interceptors, manifest.Interceptor{
			Pattern: ipc.ToolRequestDescribeTopic, Handler: describeHandler, Priority: manifest.DefaultPriority,
		})
		s.Subscribe = append(s.Subscribe, ipc.ToolRequestDescribeTopic)
		s.Publish = append(s.Publish, ipc.ToolDescribeResponseTopic(e.capsuleID))
		e.servedSurface(&s)
	}
	return s
}
