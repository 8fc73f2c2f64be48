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
		// No capabilities: a client advertising roots makes some servers
		// (server-filesystem) replace the directories the manifest gave them.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			e.log.Info("the MCP server changed its tool list; the capsule keeps the tools it loaded with until it is reloaded")
		},
	})
}
