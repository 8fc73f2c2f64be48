package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// blocking tells a test that the block tool runs, and ends its calls when
// the test ends (a server session's Close waits for its handlers).
type blocking struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocking(t *testing.T) *blocking {
	b := &blocking{entered: make(chan struct{}, 16), release: make(chan struct{})}
	t.Cleanup(b.stop)
	return b
}

func (b *blocking) stop() { b.once.Do(func() { close(b.release) }) }

// remoteTools is the go-sdk server every remote test talks to: real tools,
// and tools whose calls the misbehave middleware answers instead.
func remoteTools(b *blocking) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return text(a.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "block", Description: "Waits until cancelled", InputSchema: obj},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case b.entered <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-b.release:
				return text("released"), nil
			}
		})
	// ask elicits fields fields from the person and says what it got.
	for name, fields := range map[string]int{"ask": 1, "ask_huge": 10000} {
		s.AddTool(&mcp.Tool{Name: name, Description: "Asks the person", InputSchema: obj},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				props := map[string]any{}
				for i := range fields {
					props[fmt.Sprintf("f%d", i)] = map[string]any{"type": "string", "title": "Your name", "default": "Ada"}
				}
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{"type": "object", "properties": props}})
				if err != nil {
					return text("elicit failed: " + err.Error()), nil
				}
				got, _ := json.Marshal(res.Content)
				return text(res.Action + " " + string(got)), nil
			})
	}
	s.AddTool(&mcp.Tool{Name: "sample", Description: "Asks the client's model", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			//lint:ignore SA1019 a server that still samples (deprecated, SEP-2577) must be refused
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, SystemPrompt: "Be brief.", Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				return text("sampling failed: " + err.Error()), nil
			}
			got, _ := res.Content.(*mcp.TextContent)
			if got == nil {
				return text(fmt.Sprintf("sampled no text: %T", res.Content)), nil
			}
			return text(fmt.Sprintf("sampled %s %s %s: %s", res.Role, res.Model, res.StopReason, got.Text)), nil
		})
	// logs logs three messages at info and one at debug (below the
	// level the engine asks for), then waits as block does.
	s.AddTool(&mcp.Tool{Name: "logs", Description: "Logs as it works", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			//lint:ignore SA1019 a server that logs, as the engine must hear it
			for i, level := range []mcp.LoggingLevel{"info", "debug", "warning", "info"} {
				//lint:ignore SA1019 a server that logs, as the engine must hear it
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "worker", Data: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, err
				}
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-b.release:
				return text("logged"), nil
			}
		})
	// mixed answers text, an image and an embedded resource; the image
	// of mixed_huge is 2 MiB.
	for name, size := range map[string]int{"mixed": 3, "mixed_huge": 2 << 20} {
		s.AddTool(&mcp.Tool{Name: name, Description: "Typed content", InputSchema: obj},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					&mcp.TextContent{Text: "typed:"},
					&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, size)},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://r", MIMEType: "application/json", Text: `{"a":1}`}},
				}}, nil
			})
	}
	for _, name := range []string{"html", "huge", "endless", "redirect_meta", "redirect_loopback", "expire", "a/b", strings.Repeat("x", 200)} {
		s.AddTool(&mcp.Tool{Name: name, Description: "answered by the middleware", InputSchema: obj},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("ran " + name), nil
			})
	}
	return s
}

// streamableTools is a streamable HTTP handler serving remoteTools, a
// server per session; the sessions the server side still holds (those a
// test dropped without a DELETE) are closed when the test ends.
func streamableTools(t *testing.T, b *blocking) http.Handler {
	var mu sync.Mutex
	var servers []*mcp.Server
	t.Cleanup(func() {
		b.stop()
		mu.Lock()
		all := servers
		mu.Unlock()
		for _, s := range all {
			for ss := range s.Sessions() {
				_ = ss.Close()
			}
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := remoteTools(b)
		mu.Lock()
		servers = append(servers, s)
		mu.Unlock()
		return s
	}, nil)
}

// misbehave answers the calls of the tools named after a bad server's
// habits the way such a server would, and passes everything else on.
type misbehave struct {
	next     http.Handler
	expired  atomic.Bool
	loopback string // a loopback URL the server is not at
}

func (m *misbehave) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	if msg.Method != "tools/call" {
		m.next.ServeHTTP(w, r)
		return
	}
	switch msg.Params.Name {
	case "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Sign in</body></html>")
	case "huge":
		// 2 GiB, as long as the client keeps reading.
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, msg.ID)
		chunk := bytes.Repeat([]byte("A"), 1<<20)
		for range 2048 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "endless":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := io.WriteString(w, ": still thinking\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	case "redirect_meta":
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	case "redirect_loopback":
		http.Redirect(w, r, m.loopback, http.StatusTemporaryRedirect)
	case "expire":
		if m.expired.CompareAndSwap(false, true) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		m.next.ServeHTTP(w, r)
	default:
		m.next.ServeHTTP(w, r)
	}
}

// remoteServer serves h on loopback and returns its MCP URL.
func remoteServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, srv.URL + "/mcp"
}

// remoteManifest is a capsule with one remote server at u.
func remoteManifest(t *testing.T, typ, u, extra string) *manifest.Manifest {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
[package]
name = "remote-capsule"
version = "0.1.0"
description = "A remote MCP capsule"

[capabilities]
net = [%q]
%s
[[mcp_server]]
id = "rem"
type = %q
url = %q
`, pu.Hostname(), extra, typ, u)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// newRemoteRig is newRig for a remote server: the operator allows the
// server's loopback endpoint ([egress] allow), nothing else local.
func newRemoteRig(t *testing.T, m *manifest.Manifest, allow []string, deadline time.Duration, opts Options, more ...func(*rig, *host.Deps)) (*rig, error) {
	t.Helper()
	r := &rig{t: t, wire: &testutil.SyncBuffer{}, logs: &testutil.SyncBuffer{}, cancels: host.NewCancels(), scopes: host.NewScopes(), ws: realTempDir(t)}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.bus = bus.New(bus.Options{Logger: log})
	r.d = dispatch.New(r.bus, dispatch.Options{Logger: log})
	t.Cleanup(func() { r.d.Close(); r.bus.Close() })
	deps := host.Deps{Dispatcher: r.d, Cancels: r.cancels, Scopes: r.scopes, Logger: log, Workspace: r.ws, Egress: egress.Options{AllowLocal: allow}}
	for _, f := range more {
		f(r, &deps)
	}
	h, err := host.NewCapsule(deps, m, m.Dir, opts.Env)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = log
	opts.WireLog = r.wire
	if opts.RestartBackoff == 0 {
		opts.RestartBackoff = 20 * time.Millisecond
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	e, err := New(m.MCPServers[0], m, h, opts)
	if err != nil {
		return nil, err
	}
	r.engine = e
	r.comp = capsule.NewComposite(m, deadline, log, e)
	if err := r.comp.Load(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = r.comp.Unload(context.Background()) })
	s := r.comp.Surface()
	acl := dispatch.CapsuleACL{ID: m.ID(), Publish: append(m.PublishPatterns(), s.Publish...), Subscribe: append(m.SubscribePatterns(), s.Subscribe...)}
	for _, i := range append(m.Interceptors(), s.Interceptors...) {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	if err := r.d.Register(acl, r.comp); err != nil {
		t.Fatal(err)
	}
	client := dispatch.CapsuleACL{ID: clientID, Publish: []string{"tool.v1.execute.*", ipc.ToolRequestDescribeTopic}, Subscribe: []string{ipc.ToolResultPattern, ipc.ToolDescribeResponsePattern}}
	if err := r.d.Register(client, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	if r.results, err = r.d.Subscribe(dispatch.Caller{Capsule: clientID, Principal: ipc.DefaultPrincipal}, ipc.ToolResultPattern, false); err != nil {
		t.Fatal(err)
	}
	return r, nil
}

func hostPort(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return pu.Host
}

func mustRemoteRig(t *testing.T, m *manifest.Manifest, allow []string, deadline time.Duration, opts Options) *rig {
	t.Helper()
	r, err := newRemoteRig(t, m, allow, deadline, opts)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return r
}

// TestRemoteStreamable: a go-sdk server over streamable HTTP on loopback
// (allowed by the operator) lists its tools and answers a call through
// the bus, with the manifest's header filled from a secret and never in
// the logs.
func TestRemoteStreamable(t *testing.T) {
	var gotAuth atomic.Value
	h := streamableTools(t, newBlocking(t))
	_, u := remoteServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("X-Api-Key"))
		h.ServeHTTP(w, r)
	}))
	m := remoteManifestHeaders(t, u)
	r := mustRemoteRig(t, m, []string{hostPort(t, u)}, 0, Options{Env: map[string]string{"KEY": "s3cret-value"}})
	tools := r.engine.Tools()
	names := map[string]bool{}
	for _, d := range tools {
		names[d.Name] = true
	}
	if !names["rem:echo"] || !names["rem:block"] {
		t.Fatalf("tools = %v", names)
	}
	if names["rem:a/b"] || names["rem:"+strings.Repeat("x", 200)] {
		t.Fatalf("a tool whose name is not a valid MCP and bus tool name was put on the bus: %v", names)
	}
	res := r.roundTrip("rem:echo", "c1", `{"text":"hi"}`)
	if res.IsError || res.Content != "hi" {
		t.Fatalf("echo = %+v", res)
	}
	if got, _ := gotAuth.Load().(string); got != "Key s3cret-value" {
		t.Fatalf("the server got X-Api-Key %q", got)
	}
	if strings.Contains(r.logs.String(), "s3cret-value") || strings.Contains(r.wire.String(), "s3cret-value") {
		t.Fatal("the header's secret value is in the logs")
	}
	contains(t, "logs", r.logs.String(), "left off the bus")
}

// TestRemoteTypedContentPassesThrough: a server's image and embedded
// resource reach the bus as typed parts beside the text the model reads;
// parts beyond the bus's bounds are left out, and the text says why.
func TestRemoteTypedContentPassesThrough(t *testing.T) {
	_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{})
	res := r.roundTrip("rem:mixed", "c1", `{}`)
	want := []ipc.ToolPart{
		{Type: ipc.ToolPartText, Text: "typed:"},
		{Type: ipc.ToolPartImage, MimeType: "image/png", Data: []byte{0, 0, 0}},
		{Type: ipc.ToolPartResource, URI: "test://r", MimeType: "application/json", Text: `{"a":1}`},
	}
	if res.IsError || res.Content != "typed:\n[image image/png, 3 bytes]\n{\"a\":1}" || !reflect.DeepEqual(res.Parts, want) {
		t.Fatalf("mixed = %+v", res)
	}
	if res = r.roundTrip("rem:echo", "c3", `{"text":"hi"}`); res.Parts != nil {
		t.Fatalf("a text result carries parts: %+v", res)
	}
	res = r.roundTrip("rem:mixed_huge", "c4", `{}`)
	if res.Parts != nil || !strings.Contains(res.Content, "[image image/png, 2097152 bytes]") || !strings.Contains(res.Content, "typed content was not passed on") {
		t.Fatalf("mixed_huge = %.300s (%d parts)", res.Content, len(res.Parts))
	}
	contains(t, "logs", r.logs.String(), "typed content was not passed on")
}

// TestRemoteLogMessagesBecomeToolEvents: the engine asks a server that
// offers logging for its messages from info up; each it sends during a
// call becomes an agent.v1.tool.log event naming the call, from the
// capsule, for the call's principal.
func TestRemoteLogMessagesBecomeToolEvents(t *testing.T) {
	b := newBlocking(t)
	_, u := remoteServer(t, streamableTools(t, b))
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{})
	if err := r.d.Register(dispatch.CapsuleACL{ID: "log-watcher", Subscribe: []string{ipc.AgentToolLogTopic}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	logs, err := r.d.Subscribe(dispatch.Caller{Capsule: "log-watcher", Principal: ipc.DefaultPrincipal}, ipc.AgentToolLogTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	r.call("rem:logs", "c1", `{}`)
	var got []ipc.AgentToolLog
	testutil.WaitFor(t, hangGuard, "three log events", func() bool {
		for {
			d, ok := logs.TryRecv()
			if !ok {
				return len(got) >= 3
			}
			if d.Envelope.SourceID != r.comp.ID() || d.Envelope.Principal != ipc.DefaultPrincipal {
				t.Errorf("log event from %s for %q", d.Envelope.SourceID, d.Envelope.Principal)
			}
			var l ipc.AgentToolLog
			if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
		}
	})
	b.stop()
	if _, _, res := r.result(); res.Result.Content != "logged" {
		t.Fatalf("result %+v", res)
	}
	want := []ipc.AgentToolLog{
		{CallID: "c1", Name: "rem:logs", Level: "info", Logger: "worker", Message: "step 0"},
		{CallID: "c1", Name: "rem:logs", Level: "warning", Logger: "worker", Message: "step 2"},
		{CallID: "c1", Name: "rem:logs", Level: "info", Logger: "worker", Message: "step 3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("log events %+v, want %+v", got, want)
	}
	contains(t, "wire", r.wire.String(), `"method":"logging/setLevel"`)
}

func remoteManifestHeaders(t *testing.T, u string) *manifest.Manifest {
	t.Helper()
	pu, _ := url.Parse(u)
	src := fmt.Sprintf(`
[package]
name = "remote-capsule"
version = "0.1.0"

[capabilities]
net = [%q]

[env.KEY]
type = "secret"

[[mcp_server]]
id = "rem"
type = "http"
url = %q
headers = { X-Api-Key = "Key ${secret:KEY}" }
`, pu.Hostname(), u)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRemoteBadInput: each bad habit of a server is refused or capped
// with a clear error result, and the capsule keeps serving.
func TestRemoteBadInput(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	mb := &misbehave{next: streamableTools(t, newBlocking(t)), loopback: other.URL + "/mcp"}
	_, u := remoteServer(t, mb)
	m := remoteManifest(t, "http", u, "")
	// Both loopback servers are allowed: the redirect is refused for
	// leaving the server's origin, not for want of an allowance.
	r := mustRemoteRig(t, m, []string{hostPort(t, u), hostPort(t, other.URL)}, 3*time.Second, Options{MaxResponseBytes: 1 << 20})
	tests := []struct {
		tool, want string
	}{
		{"rem:html", "answered with text/html, which is not MCP"},
		{"rem:huge", "over 1048576 bytes; refused"},
		{"rem:redirect_meta", "off its origin"},
		{"rem:redirect_loopback", "off its origin"},
		{"rem:endless", "deadline passed"},
	}
	for i, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := r.roundTrip(tt.tool, fmt.Sprintf("bad%d", i), `{}`)
			if !res.IsError {
				t.Fatalf("%s = %+v, want an error", tt.tool, res)
			}
			contains(t, tt.tool, res.Content, tt.want)
			// The capsule keeps serving (on this session or the next).
			waitFor(t, "the server answers again", func() bool {
				res := r.roundTrip("rem:echo", fmt.Sprintf("after%d-%d", i, time.Now().UnixNano()), `{"text":"ok"}`)
				return !res.IsError && res.Content == "ok"
			})
		})
	}
}

// TestRemoteSessionExpired: a server that forgot the session (404) gets a
// new one, and the call that met the 404 runs on it.
func TestRemoteSessionExpired(t *testing.T) {
	mb := &misbehave{next: streamableTools(t, newBlocking(t))}
	_, u := remoteServer(t, mb)
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{})
	res := r.roundTrip("rem:expire", "x1", `{}`)
	if res.IsError || res.Content != "ran expire" {
		t.Fatalf("expire = %+v\nlogs:\n%s", res, r.logs)
	}
	if r.engine.Restarts() != 1 {
		t.Fatalf("restarts = %d, want 1", r.engine.Restarts())
	}
}

// TestRemoteServerGone: a server that goes away mid-call answers the call
// with an error; the engine connects again once the server is back.
func TestRemoteServerGone(t *testing.T) {
	var handler atomic.Value
	b := newBlocking(t)
	handler.Store(http.Handler(streamableTools(t, b)))
	srv, u := remoteServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{})
	r.call("rem:block", "g1", `{}`)
	// The server has the call (not merely the client sent it): a call the
	// server never got would be sent again on the new session.
	waitFor(t, "the server runs the call", func() bool {
		select {
		case <-b.entered:
			return true
		default:
			return false
		}
	})
	// The server restarts and forgets every session.
	handler.Store(http.Handler(streamableTools(t, b)))
	srv.CloseClientConnections()
	_, _, res := r.result()
	if !res.Result.IsError || res.CallID != "g1" {
		t.Fatalf("the call in flight = %+v, want an error result", res)
	}
	waitFor(t, "the engine serves again", func() bool {
		res := r.roundTrip("rem:echo", fmt.Sprintf("g2-%d", time.Now().UnixNano()), `{"text":"back"}`)
		return !res.IsError && res.Content == "back"
	})
}

// TestRemoteSSEFallback: type "http" against a server that only speaks the
// older HTTP+SSE transport falls back to it; type "sse" uses it directly.
func TestRemoteSSEFallback(t *testing.T) {
	_, u := remoteServer(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return remoteTools(newBlocking(t)) }, nil))
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			r := mustRemoteRig(t, remoteManifest(t, typ, u, ""), []string{hostPort(t, u)}, 0, Options{})
			res := r.roundTrip("rem:echo", "s1", `{"text":"old"}`)
			if res.IsError || res.Content != "old" {
				t.Fatalf("echo over SSE = %+v", res)
			}
		})
	}
}

// TestRemoteRefused: without the operator's allowance a loopback server
// is unreachable, and a server whose host `net` does not grant gets no
// engine.
func TestRemoteRefused(t *testing.T) {
	_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
	_, err := newRemoteRig(t, remoteManifest(t, "http", u, ""), nil, 0, Options{StartTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "connect to") {
		t.Fatalf("load without [egress] allow = %v, want a refused connection", err)
	}
	m := remoteManifest(t, "http", u, "")
	m.Capabilities.Net = []string{"example.com"}
	_, err = newRemoteRig(t, m, []string{hostPort(t, u)}, 0, Options{})
	if err == nil || !strings.Contains(err.Error(), "net") {
		t.Fatalf("New without a net grant = %v", err)
	}
}

// TestRemoteElicitationRefused: a server's elicitation with 10,000 fields
// is refused before anyone is asked, and in a run with no frontend
// (headless) any elicitation is refused; so is a sampling request. The
// capsule keeps serving.
func TestRemoteElicitationRefused(t *testing.T) {
	_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{})
	tests := []struct{ tool, want string }{
		{"rem:ask_huge", "it asks for 10000 fields; at most 16 are asked"},
		{"rem:ask", "there is no person to ask (a headless run)"},
	}
	for i, tt := range tests {
		res := r.roundTrip(tt.tool, fmt.Sprintf("e%d", i), `{}`)
		contains(t, tt.tool, res.Content, "elicit failed")
		contains(t, tt.tool, res.Content, tt.want)
	}
	// Sampling is refused by default, naming the key that allows it.
	res := r.roundTrip("rem:sample", "e8", `{}`)
	contains(t, "sample", res.Content, "sampling failed")
	contains(t, "sample", res.Content, `the operator has not allowed sampling for capsule remote-capsule (allow it in config.toml: [mcp] sampling = ["remote-capsule"])`)
	if res := r.roundTrip("rem:echo", "e9", `{"text":"still here"}`); res.IsError || res.Content != "still here" {
		t.Fatalf("echo after the refusals = %+v", res)
	}
}

// TestRemoteElicitationAsksThePerson: a server's elicitation during a call
// is asked through the frontend question env elicitation uses, and the
// person's answer goes back to the server.
func TestRemoteElicitationAsksThePerson(t *testing.T) {
	const frontend = "test-frontend"
	_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
	withFrontend := func(r *rig, d *host.Deps) {
		d.Bus = r.bus
		d.Elicits = ask.NewElicits([]string{frontend}, 0)
		asFrontend(t, r, frontend, ipc.ElicitRequestTopic, ipc.ElicitResponseTopic("*"), func(payload []byte) {
			var q ipc.ElicitRequest
			if q.UnmarshalJSON(payload) != nil {
				return
			}
			// The schema's default is offered (SEP-1034).
			name := "Astrid"
			if q.Field.Default == nil || *q.Field.Default != "Ada" {
				name = fmt.Sprintf("no default offered: %+v", q.Field)
			}
			b, _ := ipc.ElicitResponse{RequestID: q.RequestID, Value: &name}.MarshalJSON()
			_, _ = r.d.Publish(dispatch.Caller{Capsule: frontend, Principal: ipc.DefaultPrincipal}, ipc.ElicitResponseTopic(q.RequestID), b)
		})
	}
	r := mustRemoteRigWith(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, Options{}, withFrontend)
	res := r.roundTrip("rem:ask", "a1", `{}`)
	if res.IsError || res.Content != `accept {"f0":"Astrid"}` {
		t.Fatalf("ask = %+v", res)
	}
}

// asFrontend registers frontend, allowed to answer on answers, and hands
// each payload the default principal's questions on topic bring to handle,
// until the test ends.
func asFrontend(t *testing.T, r *rig, frontend, topic, answers string, handle func(payload []byte)) {
	t.Helper()
	if err := r.d.Register(dispatch.CapsuleACL{ID: frontend, Publish: []string{answers}, Subscribe: []string{topic}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	sub, err := r.d.Subscribe(dispatch.Caller{Capsule: frontend, Principal: ipc.DefaultPrincipal}, topic, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			handle(ipc.GuestBytes(d.Envelope.Payload))
		}
	}()
	t.Cleanup(func() { cancel(); <-done; sub.Close() })
}

func mustRemoteRigWith(t *testing.T, m *manifest.Manifest, allow []string, opts Options, more ...func(*rig, *host.Deps)) *rig {
	t.Helper()
	r, err := newRemoteRig(t, m, allow, 0, opts, more...)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return r
}
