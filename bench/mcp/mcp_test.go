package mcp_test

// Benchmarks per DESIGN §7: an MCP tool call through the kernel against a
// direct go-sdk client call to the same npm server, in the same run. Run:
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench MCPToolCall -count 10 -p 1 ./mcp/
//
// Every implementation calls server-everything's echo tool with one request
// in flight (closed loop); each has its own server process.

import (
	"github.com/astrid-go/astrid/internal/testutil"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	mcpengine "github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

type benchImpl struct {
	name  string
	setup func(b *testing.B, npm mcptest.Servers) (call func() error, teardown func())
}

var benchImpls = []benchImpl{
	{"go-sdk-direct", setupDirect},
	{"astrid-kernel", func(b *testing.B, npm mcptest.Servers) (func() error, func()) { return setupKernel(b, npm, false) }},
}

// BenchmarkMCPToolCall: go-sdk-direct is a ClientSession.CallTool on a
// CommandTransport; astrid-kernel is a whole tool call as an orchestrator
// makes it (tool.v1.request.execute → router → MCP engine → server → result
// → router → tool.v1.execute.result).
func BenchmarkMCPToolCall(b *testing.B) {
	npm := mcptest.NPM(b)
	for _, impl := range benchImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			call, teardown := impl.setup(b, npm)
			defer teardown()
			testutil.ClosedLoop(b, 200, call) // the warmup also warms node's JIT and our pools
		})
	}
}

// BenchmarkMCPToolCallInterleaved is the same comparison with the two
// sides alternating call by call (the first of each pair alternating too):
// BenchmarkMCPToolCall runs all of one side's counts before the other's, so
// a drift of the machine over the minutes between (node, the VM's
// neighbours) falls on one side only. Reported per side: the mean
// (direct-ns, kernel-ns), the p50, and the ratios kernel ÷ direct.
func BenchmarkMCPToolCallInterleaved(b *testing.B) {
	npm := mcptest.NPM(b)
	// audit=off is the MCP path alone (kernel.Options.AuditOff); audit=on
	// adds the audit chain's durable end entry the router waits for
	// (BenchmarkToolCallAudit in internal/kernel measures that apart).
	for _, audit := range []string{"off", "on"} {
		b.Run("audit="+audit, func(b *testing.B) {
			direct, closeDirect := setupDirect(b, npm)
			defer closeDirect()
			viaKernel, closeKernel := setupKernel(b, npm, audit == "off")
			defer closeKernel()
			// 200 warm-up turns warm node's JIT and our pools on both sides.
			testutil.Interleave(b, 200, "kernel", "direct", viaKernel, direct)
		})
	}
}

func setupDirect(b *testing.B, npm mcptest.Servers) (func() error, func()) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cmd := exec.Command(npm.Node, npm.Everything, "stdio")
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
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

func setupKernel(b *testing.B, npm mcptest.Servers, auditOff bool) (func() error, func()) {
	// The server runs confined (DESIGN §11): it may read its own modules.
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	src := fmt.Sprintf(`[package]
name = "mcp-everything"
version = "0.1.0"

[capabilities]
host_process = ["node"]
fs_read = [%q]

[[mcp_server]]
id = "everything"
type = "stdio"
command = "node"
args = [%q, "stdio"]
`, modules, npm.Everything)
	return kernelEcho(b, config.Default(), auditOff, src, "everything:echo")
}

// kernelEcho boots a kernel with the router and the capsule of manifest
// src (its one MCP server on an engine), and returns a whole tool call of
// tool (an echo) through it, as an orchestrator makes it.
func kernelEcho(b *testing.B, cfg config.Config, auditOff bool, src, tool string) (func() error, func()) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: b.TempDir(), Workspace: b.TempDir(), Config: cfg, Logger: quiet, AuditOff: auditOff,
		Builtins:  []kernel.Builtin{{Manifest: router.Manifest, New: router.New}},
		Frontends: []dispatch.CapsuleACL{toolclient.ACL()},
	})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", dir)
	if err := diags.Err(false); err != nil {
		k.Close()
		b.Fatal(err)
	}
	err = k.Load(context.Background(), m, dir, func(h *host.Capsule) ([]capsule.Engine, error) {
		e, err := mcpengine.New(m.MCPServers[0], m, h, mcpengine.Options{Logger: quiet})
		return []capsule.Engine{e}, err
	})
	if err != nil {
		k.Close()
		b.Fatal(err)
	}
	c, err := toolclient.New(k.Frontend(), ipc.DefaultPrincipal)
	if err != nil {
		k.Close()
		b.Fatal(err)
	}
	args := json.RawMessage(`{"message":"hi"}`)
	call := func() error {
		res, err := c.Call(context.Background(), toolclient.NewCallID(), tool, args)
		if err == nil && res.IsError {
			err = fmt.Errorf("echo: %s", res.Content)
		}
		return err
	}
	return call, func() { c.Close(); k.Close() }
}
