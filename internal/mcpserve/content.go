package mcpserve

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// contentOf is a tool's result as MCP content: its typed parts, each as
// its MCP kind (text, ImageContent, AudioContent, EmbeddedResource), or,
// for a result without parts (or whose parts the bounds refuse), its text.
func contentOf(r ipc.ToolCallResult) []mcp.Content {
	text := []mcp.Content{&mcp.TextContent{Text: r.Content}}
	if len(r.Parts) == 0 || ipc.ValidateToolParts(r.Parts) != nil {
		return text
	}
	out := make([]mcp.Content, 0, len(r.Parts))
	for _, p := range r.Parts {
		switch p.Type {
		case ipc.ToolPartText:
			out = append(out, &mcp.TextContent{Text: p.Text})
		case ipc.ToolPartImage:
			out = append(out, &mcp.ImageContent{MIMEType: p.MimeType, Data: p.Data})
		case ipc.ToolPartAudio:
			out = append(out, &mcp.AudioContent{MIMEType: p.MimeType, Data: p.Data})
		case ipc.ToolPartResource:
			rc := &mcp.ResourceContents{URI: p.URI, MIMEType: p.MimeType, Text: p.Text, Blob: p.Data}
			out = append(out, &mcp.EmbeddedResource{Resource: rc})
		}
	}
	return out
}
