package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/sessionmcp"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// scopedFront is the kernel's frontend with every publish in one request
// scope, as cmd/astrid's in-process ACP backend drives it.
type scopedFront struct {
	Frontend
	scope uint64
}

func (f scopedFront) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	from.Scope = f.scope
	return f.Frontend.Publish(from, topic, payload)
}

func (f scopedFront) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	from.Scope = f.scope
	return f.Frontend.PublishRequest(from, topic, payload, req)
}

// A session's MCP server (server-everything) is described and callable in
// its own scope only: another scope of the same principal neither sees
// its tools nor may call them, and closing the scope stops the server.
func TestAttachMCPServesItsScopeOnly(t *testing.T) {
	npm := mcptest.NPM(t)
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	cfg := config.Default()
	cfg.MCP.SessionCommands = []string{"node"}
	cfg.MCP.SessionRead = []string{modules}
	log := &testutil.SyncBuffer{}
	k, err := Boot(context.Background(), Options{Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger:   slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Builtins: Builtins(), Frontends: testFrontends()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	wsA, _ := filepath.EvalSymlinks(t.TempDir())
	wsB, _ := filepath.EvalSymlinks(t.TempDir())
	a, _, err := k.OpenScope("default", wsA)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := k.OpenScope("default", wsB)
	if err != nil {
		t.Fatal(err)
	}
	defer k.CloseScope(b)

	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	tools, err := k.AttachMCP(ctx, "default", a, []sessionmcp.Server{{Name: "everything", Command: "node", Args: []string{npm.Everything, "stdio"}}})
	if err != nil {
		t.Fatalf("attach: %v\nlog:\n%s", err, log)
	}
	i := slices.IndexFunc(tools, func(n string) bool { return strings.HasPrefix(n, "everything-") && strings.HasSuffix(n, ":echo") })
	if i < 0 {
		t.Fatalf("tools %v lack everything-<tag>:echo", tools)
	}
	echo := tools[i]
	capsuleID := "session-mcp-" + strings.TrimSuffix(strings.TrimPrefix(echo, "everything-"), ":echo")
	if _, err := k.AttachMCP(ctx, "intruder", a, []sessionmcp.Server{{Name: "x", Command: "node"}}); err == nil {
		t.Fatal("another principal attached servers to the scope")
	}

	names := func(scope uint64) []string {
		list, missing, err := toolclient.ListTools(ctx, scopedFront{k.Frontend(), scope}, "default", mcpGuard)
		if err != nil || len(missing) > 0 {
			t.Fatalf("list in scope %d: %v (missing %v)\nlog:\n%s", scope, err, missing, log)
		}
		var out []string
		for _, ti := range list {
			out = append(out, ti.Name)
		}
		return out
	}
	if got := names(a); !slices.Contains(got, echo) {
		t.Fatalf("scope A is not offered %s: %v", echo, got)
	}
	for _, scope := range []uint64{b, 0} {
		if got := names(scope); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "everything") }) {
			t.Fatalf("scope %d is offered the session's tools: %v", scope, got)
		}
	}

	args := json.RawMessage(`{"message":"hi from A"}`)
	res, err := toolclient.CallTool(ctx, scopedFront{k.Frontend(), a}, "default", echo, args, mcpGuard)
	if err != nil || res.IsError || !strings.Contains(res.Content, "hi from A") {
		t.Fatalf("call in scope A: %+v, %v", res, err)
	}
	res, err = toolclient.CallTool(ctx, scopedFront{k.Frontend(), b}, "default", echo, args, mcpGuard)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "another session") {
		t.Fatalf("call from scope B: %+v, %v; want an error result", res, err)
	}

	m := regexp.MustCompile(`capsule=` + capsuleID + ` .*pid=(\d+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no pid logged for the session's server:\n%s", log)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("server %d not running before the scope closed: %v", pid, err)
	}
	k.CloseScope(a)
	testutil.WaitFor(t, mcpGuard, "the session's server to stop once its scope closed", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	testutil.WaitFor(t, mcpGuard, "the session's capsule to unload", func() bool {
		// While it unloads a describe may go unanswered (missing):
		// not yet.
		list, missing, err := toolclient.ListTools(ctx, scopedFront{k.Frontend(), b}, "default", time.Second)
		if err != nil || len(missing) > 0 {
			return false
		}
		return !slices.ContainsFunc(list, func(ti toolclient.ToolInfo) bool { return strings.HasPrefix(ti.Name, "everything") })
	})
}

// An HTTP server the session brought goes through the egress guard with
// the operator's allowance, carries the session's headers, and serves
// its scope only; without the allowance its loopback address is refused
// before anything connects.
func TestAttachMCPOverHTTP(t *testing.T) {
	var auth atomic.Value
	auth.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			auth.Store(a)
		}
		mcpHTTP.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the kernels (cleanups run last first), whose sessions hold a stream open
	boot := func(allow []string) (*Kernel, uint64, uint64) {
		cfg := config.Default()
		cfg.Egress.Allow = allow
		k, err := Boot(context.Background(), Options{Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
			Logger: slog.New(slog.DiscardHandler), Builtins: Builtins(), Frontends: testFrontends()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Close)
		a, _, err := k.OpenScope("default", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := k.OpenScope("default", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return k, a, b
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	web := []sessionmcp.Server{{Name: "web", URL: srv.URL + "/mcp", Headers: []sessionmcp.Var{{Name: "Authorization", Value: "Bearer editor"}}}}

	k, _, _ := boot(nil)
	a, _, _ := k.OpenScope("default", t.TempDir())
	if _, err := k.AttachMCP(ctx, "default", a, web); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a loopback server without the operator's allowance: %v", err)
	}

	k, a, b := boot([]string{srv.Listener.Addr().String()})
	tools, err := k.AttachMCP(ctx, "default", a, web)
	if err != nil || len(tools) != 1 || !strings.HasPrefix(tools[0], "web-") || !strings.HasSuffix(tools[0], ":hello") {
		t.Fatalf("attach: %v %v", tools, err)
	}
	hello := tools[0]
	res, err := toolclient.CallTool(ctx, scopedFront{k.Frontend(), a}, "default", hello, json.RawMessage(`{}`), mcpGuard)
	if err != nil || res.IsError || res.Content != "hello over http" || auth.Load() != "Bearer editor" {
		t.Fatalf("call in scope A: %+v %v (authorization %q)", res, err, auth.Load())
	}
	res, err = toolclient.CallTool(ctx, scopedFront{k.Frontend(), b}, "default", hello, json.RawMessage(`{}`), mcpGuard)
	if err != nil || !res.IsError {
		t.Fatalf("call from scope B: %+v %v", res, err)
	}
}

// mcpHTTP is a streamable HTTP MCP server with one tool, hello.
var mcpHTTP = mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "web", Version: "1"}, &mcpsdk.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	s.AddTool(&mcpsdk.Tool{Name: "hello", Description: "Says hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "hello over http"}}}, nil
		})
	return s
}, &mcpsdk.StreamableHTTPOptions{Stateless: false})
