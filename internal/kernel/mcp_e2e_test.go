package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	mcpengine "github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// End-to-end tests of the MCP engine through a kernel, against the official
// npm servers pinned in testdata/mcp (installed by scripts/npm-ci.sh; the
// tests skip, saying so, only where node is absent).

// mcpGuard bounds every wait so that a bug fails instead of hanging; it is
// not a speed assertion.
const mcpGuard = 45 * time.Second

// mcpKernel is a kernel with the built-ins (router, fs) and a log to read.
type mcpKernel struct {
	k   *Kernel
	ws  string
	log *testutil.SyncBuffer
}

func bootMCPKernel(t *testing.T) *mcpKernel {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := &testutil.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
	k, err := Boot(context.Background(), Options{Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger,
		Builtins: Builtins(), Frontends: testFrontends()})
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	t.Cleanup(k.Close)
	return &mcpKernel{k: k, ws: ws, log: l}
}

// loadMCP loads a capsule whose one MCP server runs `node args...`, and
// returns its engine and the wire log of its JSON-RPC traffic.
func (mk *mcpKernel) loadMCP(t *testing.T, name, serverID string, env map[string]string, args ...string) (*mcpengine.Engine, *testutil.SyncBuffer) {
	t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	// The server runs confined (DESIGN §11): it reads its own code (the
	// pinned npm packages, outside its capsule directory here) and works
	// in the workspace, because the capsule grants both.
	modules := args[0]
	if i := strings.LastIndex(modules, "/node_modules/"); i >= 0 {
		modules = modules[:i+len("/node_modules")]
	}
	src := fmt.Sprintf(`[package]
name = %q
version = "0.1.0"
description = "MCP server %s"

[capabilities]
host_process = ["node"]
fs_read = [%q, "*"]
fs_write = ["*"]

[[mcp_server]]
id = %q
type = "stdio"
command = "node"
args = [%s]
`, name, serverID, modules, serverID, strings.Join(quoted, ", "))
	dir := t.TempDir()
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", dir)
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	wire := &testutil.SyncBuffer{}
	var eng *mcpengine.Engine
	err := mk.k.Load(context.Background(), m, dir, func(h *host.Capsule) ([]capsule.Engine, error) {
		e, err := mcpengine.New(m.MCPServers[0], m, h, mcpengine.Options{
			Logger:         mk.k.log,
			RestartBackoff: 50 * time.Millisecond,
			Env:            env,
			WireLog:        wire,
		})
		eng = e
		return []capsule.Engine{e}, err
	})
	if err != nil {
		t.Fatalf("load %s: %v\nlog:\n%s", name, err, mk.log)
	}
	return eng, wire
}

// resultWatch records every tool result on the bus, per-tool and
// consolidated, with who sent it.
type resultWatch struct {
	perTool, consolidated *observer
}

func watchResults(t *testing.T, k *Kernel) *resultWatch {
	t.Helper()
	return &resultWatch{perTool: observe(t, k, ipc.ToolResultPattern), consolidated: observe(t, k, ipc.ToolExecuteResultTopic)}
}

type seenResult struct{ topic, source string }

// drain returns what each route holds, by call id.
func (w *resultWatch) drain(t *testing.T) (perTool, consolidated map[string][]seenResult) {
	t.Helper()
	read := func(r *observer) map[string][]seenResult {
		out := map[string][]seenResult{}
		for {
			d, ok := r.TryRecv()
			if !ok {
				return out
			}
			var res ipc.ToolExecuteResult
			if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &res); err != nil {
				t.Fatalf("result on %s: %v", d.Envelope.Topic, err)
			}
			out[res.CallID] = append(out[res.CallID], seenResult{d.Envelope.Topic, d.Envelope.SourceID})
		}
	}
	return read(w.perTool), read(w.consolidated)
}

func (mk *mcpKernel) call(t *testing.T, callID, tool, args string) ipc.ToolCallResult {
	t.Helper()
	res, err := mk.k.CallToolWithID(context.Background(), ipc.DefaultPrincipal, callID, tool, json.RawMessage(args), mcpGuard)
	if err != nil {
		t.Fatalf("%s: %v\nlog:\n%s", tool, err, mk.log)
	}
	return res
}

// TestMCPFilesystemBesideFS lists and reads files through
// server-filesystem's tools and our fs capsule in the same kernel: each
// call is answered once, by the capsule that provides the tool named.
func TestMCPFilesystemBesideFS(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	if err := os.WriteFile(filepath.Join(mk.ws, "notes.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mk.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mk.loadMCP(t, "mcp-files", "files", nil, npm.Filesystem, mk.ws)
	watch := watchResults(t, mk.k)

	calls := []struct {
		id, tool, args, capsule, want string
	}{
		{"c-mcp-list", "files:list_directory", fmt.Sprintf(`{"path":%q}`, mk.ws), "mcp-files", "[FILE] notes.txt"},
		{"c-mcp-read", "files:read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(mk.ws, "notes.txt")), "mcp-files", "hello from the workspace"},
		{"c-mcp-read-text", "files:read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(mk.ws, "notes.txt")), "mcp-files", "hello from the workspace"},
		{"c-fs-list", "list_directory", `{"dir_path":"."}`, "astrid-capsule-fs", "notes.txt"},
		{"c-fs-read", "read_file", `{"file_path":"notes.txt"}`, "astrid-capsule-fs", "hello from the workspace"},
		// The server refuses what lies outside the directories it was given.
		{"c-mcp-outside", "files:read_text_file", `{"path":"/etc/hostname"}`, "mcp-files", "denied"},
	}
	for _, c := range calls {
		res := mk.call(t, c.id, c.tool, c.args)
		if c.id == "c-mcp-outside" {
			if !res.IsError {
				t.Errorf("%s: read outside the allowed directory: %+v", c.tool, res)
			}
		} else if res.IsError {
			t.Errorf("%s: error result %q", c.tool, res.Content)
		}
		if !strings.Contains(strings.ToLower(res.Content), strings.ToLower(c.want)) {
			t.Errorf("%s: content %q, want it to contain %q", c.tool, res.Content, c.want)
		}
	}
	// One more call to each capsule: anything a capsule sent twice for an
	// earlier call is on the routes before these answers.
	mk.call(t, "c-settle-mcp", "files:list_allowed_directories", `{}`)
	mk.call(t, "c-settle-fs", "list_directory", `{"dir_path":"."}`)
	perTool, consolidated := watch.drain(t)
	for _, c := range calls {
		want := seenResult{ipc.ToolResultTopic(c.tool), c.capsule}
		if got := perTool[c.id]; len(got) != 1 || got[0] != want {
			t.Errorf("%s: tool results %v, want exactly %v", c.id, got, want)
		}
		if got := consolidated[c.id]; len(got) != 1 || got[0].source != "astrid-capsule-router" {
			t.Errorf("%s: consolidated results %v, want exactly one from the router", c.id, got)
		}
	}
}

// TestMCPEverythingToolsListed: server-everything's tools appear in the
// describe protocol as <server id>:<tool> with their JSON schemas, mutable
// unless annotated read-only, beside the fs capsule's; [env] reaches it.
func TestMCPEverythingToolsListed(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	mk.loadMCP(t, "mcp-everything", "everything", map[string]string{"ASTRID_E2E_TOKEN": "t0k3n"}, npm.Everything, "stdio")
	tools, missing, err := mk.k.ListTools(context.Background(), ipc.DefaultPrincipal, mcpGuard)
	if err != nil || len(missing) > 0 {
		t.Fatalf("ListTools: %v, missing %v", err, missing)
	}
	byName := map[string]ToolInfo{}
	for _, ti := range tools {
		byName[ti.Name] = ti
	}
	tests := []struct {
		name, property string
		mutable        bool
	}{
		{"everything:echo", "message", false},
		{"everything:get-sum", "a", false},
		// Annotated readOnlyHint: false.
		{"everything:toggle-simulated-logging", "", true},
		{"everything:trigger-long-running-operation", "duration", false},
		{"everything:get-env", "", false},
	}
	for _, tt := range tests {
		ti, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s not listed (have %d tools)", tt.name, len(tools))
			continue
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(ti.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema %s (%v)", tt.name, ti.InputSchema, err)
		}
		if _, ok := schema.Properties[tt.property]; tt.property != "" && !ok {
			t.Errorf("%s: schema %s has no property %q", tt.name, ti.InputSchema, tt.property)
		}
		if ti.Mutable != tt.mutable || ti.Capsule != "mcp-everything" || ti.Description == "" {
			t.Errorf("%s: mutable=%v capsule=%s description=%q, want mutable=%v from mcp-everything with a description", tt.name, ti.Mutable, ti.Capsule, ti.Description, tt.mutable)
		}
	}
	if ti, ok := byName["read_file"]; !ok || ti.Capsule != "astrid-capsule-fs" {
		t.Errorf("fs capsule's read_file missing beside the MCP tools: %+v", ti)
	}
	if res := mk.call(t, "c-sum", "everything:get-sum", `{"a":2,"b":3}`); res.IsError || !strings.Contains(res.Content, "5") {
		t.Errorf("get-sum: %+v", res)
	}
	if res := mk.call(t, "c-env", "everything:get-env", `{}`); !strings.Contains(res.Content, "t0k3n") {
		t.Errorf("get-env does not show the capsule's [env] value: %.300q", res.Content)
	}
	if !strings.Contains(mk.log.String(), "mcp_server=everything") {
		t.Errorf("no log line tagged with the server id")
	}
}

// wireCall finds the JSON-RPC id of the tools/call we sent for tool.
func wireCall(wire, tool string) (json.RawMessage, bool) {
	for _, line := range strings.Split(wire, "\n") {
		msg, ok := strings.CutPrefix(line, "write: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(msg), &m) == nil && m.Method == "tools/call" && m.Params.Name == tool {
			return m.ID, true
		}
	}
	return nil, false
}

// wireCancelled reports whether we sent notifications/cancelled for id.
func wireCancelled(wire string, id json.RawMessage) bool {
	for _, line := range strings.Split(wire, "\n") {
		msg, ok := strings.CutPrefix(line, "write: ")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(msg), &m) == nil && m.Method == "notifications/cancelled" && bytes.Equal(m.Params.RequestID, id) {
			return true
		}
	}
	return false
}

// startLongCall starts a long-running call of server-everything and waits
// until its tools/call is on the wire; the result arrives on the channel.
func (mk *mcpKernel) startLongCall(t *testing.T, wire *testutil.SyncBuffer, callID string) (json.RawMessage, <-chan ipc.ToolCallResult) {
	t.Helper()
	done := make(chan ipc.ToolCallResult, 1)
	go func() {
		// Longer than the guard: only an interruption ends it in time.
		res, err := mk.k.CallToolWithID(context.Background(), ipc.DefaultPrincipal, callID,
			"everything:trigger-long-running-operation", json.RawMessage(`{"duration":120,"steps":120}`), mcpGuard)
		if err != nil {
			res = ipc.ToolCallResult{Content: "CallTool: " + err.Error()}
		}
		done <- res
	}()
	var id json.RawMessage
	testutil.WaitFor(t, mcpGuard, "the tools/call on the wire", func() bool {
		var ok bool
		id, ok = wireCall(wire.String(), "trigger-long-running-operation")
		return ok
	})
	return id, done
}

// TestMCPCancelLongRunning: tool.v1.request.cancel naming the call id
// sends MCP's notifications/cancelled for the request, and the call ends
// with an error result without waiting for the operation.
func TestMCPCancelLongRunning(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	_, wire := mk.loadMCP(t, "mcp-everything", "everything", nil, npm.Everything, "stdio")
	const callID = "call-to-cancel"
	reqID, done := mk.startLongCall(t, wire, callID)

	p, err := ipc.EncodePayload(ipc.ToolCancelRequest{CallIDs: []string{callID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mk.k.Dispatcher.Publish(dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}, ipc.ToolRequestCancelTopic, p); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.IsError || !strings.Contains(res.Content, "cancelled") {
		t.Fatalf("cancelled call's result: %+v", res)
	}
	testutil.WaitFor(t, mcpGuard, "notifications/cancelled for request "+string(reqID), func() bool { return wireCancelled(wire.String(), reqID) })
	if res := mk.call(t, "c-after", "everything:echo", `{"message":"after cancel"}`); res.IsError || !strings.Contains(res.Content, "after cancel") {
		t.Fatalf("echo after cancel: %+v", res)
	}
}

// TestMCPServerKilledMidCall: a server killed during a call answers the
// call with its failure reply, is restarted, and the next call works.
func TestMCPServerKilledMidCall(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	eng, wire := mk.loadMCP(t, "mcp-everything", "everything", nil, npm.Everything, "stdio")
	pid := eng.PID()
	_, done := mk.startLongCall(t, wire, "call-doomed")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.IsError || !strings.Contains(res.Content, "stopped during the call") {
		t.Fatalf("result of the call whose server died: %+v", res)
	}
	testutil.WaitFor(t, mcpGuard, "the restart", func() bool { return eng.Restarts() == 1 && eng.PID() != 0 })
	if eng.PID() == pid {
		t.Fatal("the restarted server has the dead one's pid")
	}
	if res := mk.call(t, "c-next", "everything:echo", `{"message":"back again"}`); res.IsError || !strings.Contains(res.Content, "back again") {
		t.Fatalf("call after restart: %+v", res)
	}
}

// TestMCPProgressBecomesToolEvents: server-everything's long-running
// operation reports each step with notifications/progress; each reaches the
// bus as an agent.v1.tool.progress event naming the call (not the engine's
// own progress token), for the call's principal, published by the MCP
// capsule; the last says the call is done. The result is unchanged.
func TestMCPProgressBecomesToolEvents(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	_, wire := mk.loadMCP(t, "mcp-everything", "everything", nil, npm.Everything, "stdio")
	progress := observe(t, mk.k, ipc.AgentToolProgressTopic)
	const callID = "call-with-progress"
	res := mk.call(t, callID, "everything:trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
	if res.IsError || !strings.Contains(res.Content, "Long running operation completed") {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(wire.String(), `"progressToken":"p`) {
		t.Fatalf("the call asked for no progress; wire:\n%s", wire)
	}
	// The notifications are handled apart from the result: wait for the
	// last one rather than assume it came first.
	var got []ipc.AgentToolProgress
	testutil.WaitFor(t, mcpGuard, "the progress event saying 3/3", func() bool {
		for {
			d, ok := progress.TryRecv()
			if !ok {
				return len(got) > 0 && got[len(got)-1].Progress == 3
			}
			if d.Envelope.SourceID != "mcp-everything" || d.Envelope.Principal != ipc.DefaultPrincipal {
				t.Errorf("progress event from %s for %q", d.Envelope.SourceID, d.Envelope.Principal)
			}
			var p ipc.AgentToolProgress
			if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &p); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
	})
	// The server sent three; one may be dropped as too soon after another
	// (progressGap) when the machine is loaded, never the last.
	if len(got) == 0 || len(got) > 3 {
		t.Fatalf("progress events %+v, want 1 to 3", got)
	}
	for i, p := range got {
		if p.CallID != callID || p.Name != "everything:trigger-long-running-operation" || p.Total != 3 {
			t.Errorf("event %d: %+v", i, p)
		}
		if i > 0 && p.Progress <= got[i-1].Progress {
			t.Errorf("progress went back: %+v", got)
		}
	}
	if last := got[len(got)-1]; last.Progress != 3 || last.Text() != "everything:trigger-long-running-operation: 3/3" {
		t.Errorf("last event %+v (%q), want 3/3", last, last.Text())
	}
}

// TestMCPRootsAreTheGrantedDirectories: a stdio server's roots/list is
// answered with the capsule's fs grants resolved for its workspace (here
// the npm modules it reads and `*`, the workspace), each once;
// server-everything's get-roots-list shows what it was told.
func TestMCPRootsAreTheGrantedDirectories(t *testing.T) {
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	mk.loadMCP(t, "mcp-everything", "everything", nil, npm.Everything, "stdio")
	res := mk.call(t, "c-roots", "everything:get-roots-list", `{}`)
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	for _, want := range []string{"Current MCP Roots (2 total)", "URI: file://" + mk.ws + "\n", "URI: file://" + modules + "\n"} {
		if res.IsError || !strings.Contains(res.Content, want) {
			t.Fatalf("get-roots-list: %+v\nwant it to contain %q", res, want)
		}
	}
}
