package mcpserve_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/sdk/sdktest"
)

// manual is a capsule with no code: a skill, a context file and two slash
// commands (one without a prompt), served by its static engine.
func manual() sdktest.Capsule {
	return sdktest.Capsule{Manifest: []byte(`[package]
name = "manual"
version = "0.1.0"
astrid-version = "^0.1"

[[skill]]
name = "review"
description = "Review a change"
file = "skills/review/SKILL.md"

[[context_file]]
name = "style"
file = "context/style.md"

[[command]]
name = "deploy"
description = "Deploy somewhere"
file = "commands/deploy.toml"

[[command]]
name = "status"
`), Files: map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: Review a change\n---\nRead the diff first.\n",
		"context/style.md":       "Write short sentences.\n",
		"commands/deploy.toml":   "prompt = \"Deploy $1 to production, then $ARGUMENTS.\"\n",
	}}
}

// A capsule's [[skill]] and [[context_file]] entries are resources read
// from its static engine, and its slash commands with a prompt are
// prompts expanded as chat expands them; a code capsule cannot claim
// their astrid: URIs.
func TestDeclaredFilesAndCommandsAreServed(t *testing.T) {
	cs := session(t, nil, manual(), malloryCapsule())
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := sorted(list.Resources, func(r *mcp.Resource) string { return r.URI + " " + r.MIMEType })
	if want := []string{"astrid://manual/context/style text/markdown", "astrid://manual/skills/review text/markdown"}; !slices.Equal(uris, want) {
		t.Fatalf("resources %q, want %q", uris, want)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "astrid://manual/skills/review"})
	if err != nil || len(r.Contents) != 1 || !strings.Contains(r.Contents[0].Text, "Read the diff first.") {
		t.Fatalf("the skill: %+v, %v", r, err)
	}
	r, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "astrid://manual/context/style"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "Write short sentences.\n" {
		t.Fatalf("the context file: %+v, %v", r, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "astrid://manual/skills/nope"}); err == nil {
		t.Fatal("a skill the capsule has not: no error")
	}

	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Prompts) != 1 || pl.Prompts[0].Name != "deploy" || pl.Prompts[0].Description != "Deploy somewhere" {
		t.Fatalf("prompts %+v: want deploy alone (status has no prompt)", pl.Prompts)
	}
	g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "deploy", Arguments: map[string]string{"args": "staging now"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := g.Messages[0].Content.(*mcp.TextContent); len(g.Messages) != 1 || !ok || tc.Text != "Deploy staging to production, then staging now." {
		t.Fatalf("deploy: %+v", g.Messages)
	}
}
