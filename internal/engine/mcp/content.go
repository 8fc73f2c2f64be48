package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// resultOf is a server's tool result on the bus: its text as the model
// reads it (resultText) and, when it holds images, audio or embedded
// resources, every item as a typed part in order (ipc.ToolPart), for a
// frontend that passes them on. Parts beyond the bus's bounds
// (ipc.ValidateToolParts) are left out, and the text says so.
func (e *Engine) resultOf(tool, callID string, res *mcp.CallToolResult) ipc.ToolCallResult {
	out := ipc.ToolCallResult{CallID: callID, Content: resultText(res), IsError: res.IsError}
	parts := partsOf(res)
	if parts == nil {
		return out
	}
	if err := ipc.ValidateToolParts(parts); err != nil {
		e.log.Warn("mcp: a tool result's typed content was not passed on", "tool", tool, "call_id", callID, "err", err)
		out.Content += fmt.Sprintf("\n[the result's typed content was not passed on: %v]", err)
		return out
	}
	out.Parts = parts
	return out
}

// partsOf is a result's content as typed parts, nil when it is text only
// (or a resource link, which the text names): a text result stays as it
// was on the wire.
func partsOf(res *mcp.CallToolResult) []ipc.ToolPart {
	var parts []ipc.ToolPart
	typed := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, ipc.ToolPart{Type: ipc.ToolPartText, Text: c.Text})
		case *mcp.ImageContent:
			typed = true
			parts = append(parts, ipc.ToolPart{Type: ipc.ToolPartImage, MimeType: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			typed = true
			parts = append(parts, ipc.ToolPart{Type: ipc.ToolPartAudio, MimeType: c.MIMEType, Data: c.Data})
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			typed = true
			parts = append(parts, ipc.ToolPart{Type: ipc.ToolPartResource, URI: c.Resource.URI, MimeType: c.Resource.MIMEType, Text: c.Resource.Text, Data: c.Resource.Blob})
		}
	}
	if !typed {
		return nil
	}
	return parts
}

// resultText is a tool result as the model reads it: the text items joined
// by newlines, with a short placeholder for each item that is not text
// (images, audio, links), and the structured content when there is nothing
// else.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			switch {
			case c.Resource == nil:
				parts = append(parts, "[resource]")
			case c.Resource.Text != "":
				parts = append(parts, c.Resource.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		default:
			b, err := json.Marshal(c)
			if err != nil {
				b = []byte(fmt.Sprintf("[content %T]", c))
			}
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}
