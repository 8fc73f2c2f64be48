package mcpserve_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// A capsule's own [[mcp_server]] (the real server-everything, loaded by
// the kernel's loader as an install would be) has its prompts and
// resources served: listed under the server's id, got and read through
// its MCP engine.
func TestACapsulesMCPServerIsServed(t *testing.T) {
	npm := mcptest.NPM(t)
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	everything := sdktest.Capsule{Manifest: []byte(fmt.Sprintf(`[package]
name = "everything"
version = "0.1.0"
astrid-version = "^0.1"

[capabilities]
host_process = ["node"]
fs_read = [%q]

[[mcp_server]]
id = "everything"
type = "stdio"
command = "node"
args = [%q, "stdio"]
`, modules, npm.Everything))}
	cs := session(t, nil, everything)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := sorted(list.Prompts, func(p *mcp.Prompt) string { return p.Name }); !slices.Contains(names, "everything:args-prompt") {
		t.Fatalf("prompts %v, want everything:args-prompt", names)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything:args-prompt", Arguments: map[string]string{"city": "Porto"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := got.Messages[0].Content.(*mcp.TextContent); len(got.Messages) != 1 || !ok || tc.Text != "What's weather in Porto?" {
		t.Fatalf("args-prompt: %+v", got.Messages)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/blob/2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Contents) != 1 || !strings.Contains(string(r.Contents[0].Blob), "Resource 2: This is a base64 blob") {
		t.Fatalf("blob read: %+v", r.Contents)
	}
}
