package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/toolclient"
)

// MaxArguments is the largest arguments object a call may carry: the
// bus's largest message (bus.DefaultMaxMessage), less room for the
// request around it.
const MaxArguments = 1<<20 - 4<<10

// maxMCPToolName is the longest tool name MCP allows (SEP-986).
const maxMCPToolName = 128

// Options configure a Server.
type Options struct {
	// Kernel is the kernel as a frontend reaches it: the daemon's or an
	// in-process one.
	Kernel toolclient.Kernel
	// Principal is the principal every call acts for.
	Principal string
	// Window bounds the wait for the capsules' describe answers.
	Window time.Duration
	// Timeout bounds one call, the client's answers to its questions
	// included.
	Timeout time.Duration
	// Version is reported to clients as the server's version.
	Version string
	// Logger receives what the server refused or could not do.
	Logger *slog.Logger
}

// Server serves the loaded capsules' tools over MCP.
type Server struct {
	opts Options
	srv  *mcp.Server
	log  *slog.Logger

	syncMu sync.Mutex // one describe round at a time

	mu    sync.Mutex
	tools map[string]toolclient.ToolInfo // by MCP name
	calls map[string]*call               // waiting for a client's answer, by request state
}

// New makes a Server; Sync (or the first tools/list) fills its tool list.
func New(opts Options) *Server {
	if opts.Window <= 0 {
		opts.Window = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, log: opts.Logger, tools: map[string]toolclient.ToolInfo{}, calls: map[string]*call{}}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "astrid", Title: "Astrid", Version: opts.Version}, &mcp.ServerOptions{
		Logger: opts.Logger,
		// The tool list changes as capsules load and unload; a client is
		// told so when a tools/list finds it changed.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	s.srv.AddReceivingMiddleware(s.refresh)
	return s
}

// MCP is the go-sdk server, for a transport to run.
func (s *Server) MCP() *mcp.Server { return s.srv }

// ServeStdio serves one client on standard input and output until it
// disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.srv.Run(ctx, &mcp.StdioTransport{})
}

// refresh re-reads the tool list before a tools/list, and before a
// tools/call of a name not listed yet (a capsule loaded since).
func (s *Server) refresh(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			if err := s.Sync(ctx); err != nil {
				s.log.Warn("mcp serve: tool list not refreshed", "err", err)
			}
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && !s.known(r.Params.Name) {
				if err := s.Sync(ctx); err != nil {
					s.log.Warn("mcp serve: tool list not refreshed", "err", err)
				}
			}
		}
		return next(ctx, method, req)
	}
}

func (s *Server) known(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tools[name]
	return ok
}

// MCPName is a bus tool name as MCP clients see it: MCP allows no ':'
// (SEP-986) and bus names hold no '.', so "files:write_file" is
// "files.write_file" and the two map one to one.
func MCPName(busName string) string { return strings.ReplaceAll(busName, ":", ".") }

// Sync runs the describe protocol and makes the served tool list what it
// answered: new and changed tools added, gone ones removed (each change
// notifies the clients that listen).
func (s *Server) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	infos, missing, err := toolclient.ListTools(ctx, s.opts.Kernel, s.opts.Principal, s.opts.Window)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		s.log.Warn("mcp serve: capsules did not describe their tools in time", "capsules", missing, "window", s.opts.Window)
	}
	want := map[string]toolclient.ToolInfo{}
	for _, t := range infos {
		name := MCPName(t.Name)
		if len(name) > maxMCPToolName {
			s.log.Warn("mcp serve: tool not served: its name is longer than MCP allows", "tool", t.Name, "limit", maxMCPToolName)
			continue
		}
		want[name] = t
	}
	s.mu.Lock()
	var gone []string
	var added []toolclient.ToolInfo
	for name := range s.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(s.tools, name)
		}
	}
	for name, t := range want {
		if old, ok := s.tools[name]; !ok || !sameTool(old, t) {
			added = append(added, t)
			s.tools[name] = t
		}
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	for _, t := range added {
		s.srv.AddTool(s.toolOf(t), s.handle)
	}
	return nil
}

func sameTool(a, b toolclient.ToolInfo) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Mutable == b.Mutable && a.Capsule == b.Capsule && bytes.Equal(a.InputSchema, b.InputSchema)
}

// toolOf is t as MCP describes it. A schema that is not an object's
// (absent, or a provider's mistake) is served as {"type":"object"}: MCP
// requires one.
func (s *Server) toolOf(t toolclient.ToolInfo) *mcp.Tool {
	var schema any = json.RawMessage(`{"type":"object"}`)
	var probe struct {
		Type any `json:"type"`
	}
	if len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &probe) == nil && probe.Type == "object" {
		schema = t.InputSchema
	} else if len(t.InputSchema) > 0 && string(t.InputSchema) != "null" {
		s.log.Warn("mcp serve: tool's input schema is not an object's; served as any object", "tool", t.Name)
	}
	destructive := t.Mutable
	return &mcp.Tool{
		Name:        MCPName(t.Name),
		Description: t.Description,
		InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !t.Mutable, DestructiveHint: &destructive},
	}
}

// invalidParams is a JSON-RPC invalid-params error: the call is refused
// before it reaches the bus, and the server goes on serving.
func invalidParams(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// handle is every tool's handler: a fresh call, or the retry of one that
// waited for the client's answers (multi round-trip, SEP-2322).
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Params
	if p.RequestState != "" {
		return s.resume(ctx, req)
	}
	s.mu.Lock()
	info, ok := s.tools[p.Name]
	s.mu.Unlock()
	if !ok {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	args, err := arguments(p.Arguments)
	if err != nil {
		return nil, err
	}
	c := s.start(req.Session, info.Name, args)
	return s.wait(ctx, c)
}

// arguments checks a call's arguments: a JSON object of at most
// MaxArguments bytes; absent means {}.
func arguments(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return json.RawMessage("{}"), nil
	case len(trimmed) > MaxArguments:
		return nil, invalidParams("arguments are %d bytes; the largest a call may carry is %d", len(trimmed), MaxArguments)
	case trimmed[0] != '{':
		return nil, invalidParams("arguments must be a JSON object")
	case !json.Valid(trimmed):
		return nil, invalidParams("arguments are not valid JSON")
	}
	return json.RawMessage(trimmed), nil
}

// resultOf is a finished call as MCP reports it. A call that could not be
// made (no router, the kernel's refusal) is a tool error the client's
// model can read, as a denied approval is.
func resultOf(c *call) (*mcp.CallToolResult, error) {
	if c.err != nil {
		if errors.Is(c.err, context.DeadlineExceeded) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("tool %s: no result within the server's call timeout (the call was cancelled)", c.tool)}}}, nil
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: c.err.Error()}}}, nil
	}
	return &mcp.CallToolResult{IsError: c.res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: c.res.Content}}}, nil
}
