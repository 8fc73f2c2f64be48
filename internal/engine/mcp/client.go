package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/manifest"
)

// newClient is the MCP client of one remote session.
func (e *Engine) newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "astrid", Version: manifest.RuntimeVersion}, &mcp.ClientOptions{
		Logger: e.log,
		// Elicitation (form mode, elicit.go) and sampling (sampling.go:
		// refused unless the operator allows it for the capsule). No roots:
		// a remote server has no use for local directories, and a client
		// advertising roots makes some servers replace what the manifest
		// gave them.
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
			//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; sampling.go says why we offer it
			Sampling: &mcp.SamplingCapabilities{},
		},
		ElicitationHandler: e.elicit,
		//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; sampling.go says why we offer it
		CreateMessageHandler:        e.sample,
		ProgressNotificationHandler: e.onProgress,
		//lint:ignore SA1019 logging is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool's log messages use it
		LoggingMessageHandler: e.onLog,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			e.log.Info("the MCP server changed its tool list; the capsule keeps the tools it loaded with until it is reloaded")
		},
		ResourceListChangedHandler: func(_ context.Context, r *mcp.ResourceListChangedRequest) { e.listChanged(r.Session) },
		PromptListChangedHandler:   func(_ context.Context, r *mcp.PromptListChangedRequest) { e.listChanged(r.Session) },
	})
}
