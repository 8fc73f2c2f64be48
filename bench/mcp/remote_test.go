package mcp_test

// A remote MCP tool call (issue 32, "Show"): through the kernel (a capsule
// whose [[mcp_server]] is type = "http", the engine's streamable HTTP
// client through the capsule's egress rules) against the go-sdk client
// calling the same loopback server directly. Run:
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench MCPRemoteToolCallInterleaved -count 10 -p 1 ./mcp/

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// BenchmarkMCPRemoteToolCallInterleaved alternates, call by call, a direct
// go-sdk streamable HTTP client and a whole tool call through the kernel
// (tool.v1.request.execute → router → MCP engine → HTTP → server → router →
// tool.v1.execute.result), both on one loopback go-sdk server with an echo
// tool (each its own session). audit=off is the MCP path alone
// (kernel.Options.AuditOff); audit=on adds the audit chain's durable end
// entry the router waits for (BenchmarkToolCallAudit measures that apart).
func BenchmarkMCPRemoteToolCallInterleaved(b *testing.B) {
	for _, audit := range []string{"off", "on"} {
		b.Run("audit="+audit, func(b *testing.B) {
			srv := echoServer(b)
			direct, closeDirect := setupRemoteDirect(b, srv.URL)
			defer closeDirect()
			viaKernel, closeKernel := setupRemoteKernel(b, srv.URL, audit == "off")
			defer closeKernel()
			testutil.Interleave(b, 200, "kernel", "direct", viaKernel, direct)
		})
	}
}

// echoServer is a go-sdk MCP server with one tool, echo, over streamable
// HTTP on loopback.
func echoServer(b *testing.B) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + a.Message}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}

func setupRemoteDirect(b *testing.B, base string) (func() error, func()) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
		if err == nil && res.IsError {
			err = fmt.Errorf("echo: error result")
		}
		return err
	}
	return call, func() { _ = cs.Close() }
}

func setupRemoteKernel(b *testing.B, base string, auditOff bool) (func() error, func()) {
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	cfg.Egress.Allow = []string{u.Host} // the operator lets capsules reach this loopback server
	src := fmt.Sprintf(`[package]
name = "mcp-remote"
version = "0.1.0"

[capabilities]
net = ["127.0.0.1"]

[[mcp_server]]
id = "remote"
type = "http"
url = %q
`, base)
	return kernelEcho(b, cfg, auditOff, src, "remote:echo")
}
