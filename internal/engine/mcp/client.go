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
		// Elicitation only (form mode, elicit.go). No roots: a remote
		// server has no use for local directories, and a client advertising
		// roots makes some servers replace what the manifest gave them. No
		// sampling: a server must not spend the person's model budget; its
		// sampling/createMessage is answered "method not found".
		Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: e.elicit,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			e.log.Info("the MCP server changed its tool list; the capsule keeps the tools it loaded with until it is reloaded")
		},
	})
}
