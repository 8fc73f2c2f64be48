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

	"github.com/astrid-go/astrid/internal/bus"
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
	// Sampling reports whether the operator allows capsule to ask the
	// client's model during a call (config.toml [mcp] sampling); nil
	// allows none.
	Sampling func(capsule string) bool
}

// Server serves the loaded capsules' tools over MCP.
type Server struct {
	opts Options
	srv  *mcp.Server
	log  *slog.Logger

	syncMu sync.Mutex // one describe round at a time

	mu        sync.Mutex
	tools     map[string]toolclient.ToolInfo // by MCP name
	calls     map[string]*call               // waiting for a client's answer, by request state
	resources map[string]resourceEntry       // by URI
	templates map[string]templateEntry       // by URI template
	prompts   map[string]promptEntry         // by name

	// life ends at Close; stop ends it.
	life context.Context
	stop context.CancelFunc
	// updates is the subscription to the capsules' resource updates,
	// opened at the first resources/subscribe.
	watchMu  sync.Mutex
	updates  bus.Subscription
	watching sync.WaitGroup
	// loadsOnce starts watchLoads.
	loadsOnce sync.Once
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
	s := &Server{opts: opts, log: opts.Logger, tools: map[string]toolclient.ToolInfo{}, calls: map[string]*call{},
		resources: map[string]resourceEntry{}, templates: map[string]templateEntry{}, prompts: map[string]promptEntry{}}
	s.life, s.stop = context.WithCancel(context.Background())
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "astrid", Title: "Astrid", Version: opts.Version}, &mcp.ServerOptions{
		Logger: opts.Logger,
		// The lists change as capsules load and unload; a client is told
		// so when a list request finds its list changed. Logging: a
		// tool's log messages during a call (agent.v1.tool.log).
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			//lint:ignore SA1019 logging is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool's log messages use it
			Logging: &mcp.LoggingCapabilities{},
		},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		CompletionHandler:  s.complete,
	})
	s.srv.AddReceivingMiddleware(s.refresh)
	return s
}

// ServeStdio serves one client on standard input and output until it
// disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.srv.Run(ctx, &mcp.StdioTransport{})
}

// refresh re-reads the lists before a list request, and before a request
// naming a tool, resource or prompt not listed yet (a capsule loaded
// since). A resource URI is checked before anything else sees it.
func (s *Server) refresh(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// Each request re-reads only its own kind of list.
		var sync func(context.Context) error
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			sync = s.syncTools
		case *mcp.CallToolRequest:
			if r.Params != nil && !s.known(r.Params.Name) {
				sync = s.syncTools
			}
		case *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest:
			sync = s.syncResources
		case *mcp.ReadResourceRequest:
			if r.Params != nil {
				if err := checkURI(r.Params.URI); err != nil {
					return nil, invalidParams("%v", err)
				}
				if s.owner(r.Params.URI) == "" {
					sync = s.syncResources
				}
			}
		case *mcp.SubscribeRequest:
			if r.Params != nil && checkURI(r.Params.URI) == nil && s.owner(r.Params.URI) == "" {
				sync = s.syncResources
			}
		case *mcp.ListPromptsRequest:
			sync = s.syncPrompts
		case *mcp.GetPromptRequest:
			sync = s.syncPromptsIfUnknown(req)
		case *mcp.CompleteRequest:
			if r.Params != nil && r.Params.Ref != nil && r.Params.Ref.Type == "ref/resource" {
				s.mu.Lock()
				_, ok := s.templates[r.Params.Ref.URI]
				s.mu.Unlock()
				if !ok {
					sync = s.syncResources
				}
			} else {
				sync = s.syncPromptsIfUnknown(req)
			}
		}
		if sync != nil {
			s.syncMu.Lock()
			err := sync(ctx)
			s.syncMu.Unlock()
			if err != nil {
				s.log.Warn("mcp serve: list not refreshed", "method", method, "err", err)
			}
		}
		return next(ctx, method, req)
	}
}

// syncPromptsIfUnknown is syncPrompts for a prompts/get or a prompt's
// completion naming a prompt not listed yet; else nil.
func (s *Server) syncPromptsIfUnknown(req mcp.Request) func(context.Context) error {
	name := ""
	switch r := req.(type) {
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			name = r.Params.Name
		}
	case *mcp.CompleteRequest:
		if r.Params == nil || r.Params.Ref == nil || r.Params.Ref.Type != "ref/prompt" {
			return nil
		}
		name = r.Params.Ref.Name
	}
	s.mu.Lock()
	_, ok := s.prompts[name]
	s.mu.Unlock()
	if ok || name == "" {
		return nil
	}
	return s.syncPrompts
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

// Sync runs the describe protocols (tools, resources, prompts) and makes
// the served lists what they answered: new and changed entries added,
// gone ones removed (each change notifies the clients that listen). Only
// the tools' failing is an error: resources and prompts that cannot be
// listed (a daemon older than this server) are logged and left out.
func (s *Server) Sync(ctx context.Context) error {
	s.watchLoads()
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if err := errors.Join(s.syncResources(ctx), s.syncPrompts(ctx)); err != nil {
		s.log.Warn("mcp serve: resources or prompts not listed", "err", err)
	}
	return s.syncTools(ctx)
}

// syncTools runs the tool describe protocol and makes the served tool
// list what it answered.
func (s *Server) syncTools(ctx context.Context) error {
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
	return s.wait(ctx, c, p.GetProgressToken())
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
	return &mcp.CallToolResult{IsError: c.res.IsError, Content: contentOf(c.res)}, nil
}
