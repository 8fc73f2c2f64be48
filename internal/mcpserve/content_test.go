package mcpserve

import (
	"encoding/json"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// TestContentOfMapsParts: each part becomes its MCP kind, in order; a
// result without parts, or with parts the bounds refuse, is its text.
func TestContentOfMapsParts(t *testing.T) {
	parts := []ipc.ToolPart{
		{Type: ipc.ToolPartText, Text: "mixed:"},
		{Type: ipc.ToolPartImage, MimeType: "image/png", Data: []byte("png")},
		{Type: ipc.ToolPartAudio, MimeType: "audio/wav", Data: []byte("RIFF")},
		{Type: ipc.ToolPartResource, URI: "test://t", MimeType: "text/plain", Text: "t"},
		{Type: ipc.ToolPartResource, URI: "test://b", MimeType: "application/octet-stream", Data: []byte{0}},
	}
	for _, c := range []struct {
		name string
		res  ipc.ToolCallResult
		want string
	}{
		{"parts", ipc.ToolCallResult{Content: "ignored", Parts: parts},
			`[{"type":"text","text":"mixed:"},{"type":"image","mimeType":"image/png","data":"cG5n"},{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="},` +
				`{"type":"resource","resource":{"uri":"test://t","mimeType":"text/plain","text":"t"}},{"type":"resource","resource":{"uri":"test://b","mimeType":"application/octet-stream","blob":"AA=="}}]`},
		{"text only", ipc.ToolCallResult{Content: "plain"}, `[{"type":"text","text":"plain"}]`},
		{"refused parts", ipc.ToolCallResult{Content: "[image text/html, 3 bytes]", Parts: []ipc.ToolPart{{Type: ipc.ToolPartImage, MimeType: "text/html", Data: []byte("<b>")}}},
			`[{"type":"text","text":"[image text/html, 3 bytes]"}]`},
	} {
		b, err := json.Marshal(contentOf(c.res))
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s (%v)\nwant %s", c.name, b, err, c.want)
		}
	}
}
