package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// noBackend refuses every directory, as a cwd outside any allowed place
// would be.
type noBackend struct{}

func (noBackend) Open(_ context.Context, dir string) (Workspace, error) {
	return Workspace{}, errors.New("the workspace " + dir + " does not exist")
}

// hangGuard turns a hang into a failure; it asserts nothing about speed.
const hangGuard = time.Minute

// served runs Serve on pipes and returns the editor's ends: write lines
// to in (with send), take answers from out (with next); closing in ends
// Serve, and the test waits for it. The agent's output is drained into
// out as it comes, so the agent never blocks on a test that has not read
// yet: an editor reads its agent's output while it writes.
func served(t *testing.T) (in io.WriteCloser, out <-chan []byte) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(context.Background(), inR, outW, Options{Backend: noBackend{}, Version: "test"})
		outW.Close()
	}()
	lines := make(chan []byte, 1024)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		testutil.WaitForRecv(t, hangGuard, "Serve to return after its input closed", done)
		go func() {
			for range lines { // unread answers, so the drain ends
			}
		}()
		testutil.WaitForRecv(t, hangGuard, "the agent's output to end", drained)
	})
	return inW, lines
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func next(t *testing.T, out <-chan []byte) reply {
	t.Helper()
	line := testutil.WaitForRecv(t, hangGuard, "the agent's next answer", out)
	if line == nil {
		t.Fatal("the agent's output ended")
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return r
}

// send writes one line, failing t when the agent has not taken it within
// guard (it would be stuck).
func send(t *testing.T, in io.Writer, line string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := io.WriteString(in, line+"\n"); errc <- err }()
	if err := testutil.WaitForRecv(t, hangGuard, "the agent to take a line", errc); err != nil {
		t.Fatal(err)
	}
}

// No input ends the connection: each bad line gets its JSON-RPC error and
// the next request is still answered, in order.
func TestBadLinesAreAnsweredAndSkipped(t *testing.T) {
	in, out := served(t)
	cases := []struct {
		line string
		code int
		id   string
	}{
		{"this is not json", -32700, "null"},
		{`{"jsonrpc":"2.0","id":7,"method":5}`, -32600, "7"},
		{`[1,2,3]`, -32600, "null"},
		{`{"jsonrpc":"2.0"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":8,"method":"no/such_method","params":{}}`, -32601, "8"},
		{`{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s-none","prompt":[{"type":"text","text":"hi"}]}}`, -32002, "9"},
		{`{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`, -32602, "10"},
		{`{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/nowhere","mcpServers":[]}}`, -32602, "11"},
		{`{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"/x"}}`, -32602, "12"},
		{`{"jsonrpc":"2.0","id":13,"method":"session/load","params":{"sessionId":"bad id!","cwd":"/x","mcpServers":[]}}`, -32602, "13"},
		{`{"jsonrpc":"2.0","id":14,"method":"session/set_model","params":{"sessionId":"s-none","modelId":"openai:x"}}`, -32002, "14"},
	}
	for _, c := range cases {
		send(t, in, c.line)
		// A cancel for an unknown session is a notification: no answer,
		// and nothing else changes.
		send(t, in, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-none"}}`)
		r := next(t, out)
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Fatalf("%s: answered id %s %+v, want id %s code %d", c.line, r.ID, r.Error, c.id, c.code)
		}
	}
	send(t, in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r := next(t, out)
	var init acpsdk.InitializeResponse
	if r.Error != nil || json.Unmarshal(r.Result, &init) != nil || init.ProtocolVersion != acpsdk.ProtocolVersionNumber || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: %s %+v", r.Result, r.Error)
	}
}

// A line longer than maxFrame is refused whole (however long) and the
// connection goes on; memory stays bounded by the frame limit.
func TestAnOversizedLineIsRefused(t *testing.T) {
	in, out := served(t)
	go func() {
		chunk := strings.Repeat("x", 1<<20)
		for range 20 { // 20 MiB, past the SDK's own 10 MiB line limit
			if _, err := io.WriteString(in, chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(in, "\n")
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	}()
	r := next(t, out)
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" {
		t.Fatalf("oversized line: %+v", r.Error)
	}
	if r := next(t, out); r.Error != nil || string(r.ID) != "2" {
		t.Fatalf("after it: %s %+v", r.ID, r.Error)
	}
}

func TestKindsAndDiffs(t *testing.T) {
	for name, want := range map[string]acpsdk.ToolKind{
		"read_file": acpsdk.ToolKindRead, "replace_in_file": acpsdk.ToolKindEdit, "write_file": acpsdk.ToolKindEdit,
		"run_shell_command": acpsdk.ToolKindExecute, "fetch_url": acpsdk.ToolKindFetch, "grep_search": acpsdk.ToolKindSearch,
		"delete_file": acpsdk.ToolKindDelete, "move_file": acpsdk.ToolKindMove,
		"github:search_issues": acpsdk.ToolKindSearch, "everything:echo": acpsdk.ToolKindOther, "db:run_query": acpsdk.ToolKindExecute,
	} {
		if got := kindOf(name); got != want {
			t.Errorf("kindOf(%s) = %s, want %s", name, got, want)
		}
	}
	title, _, locs := describeCall("/ws", "replace_in_file", json.RawMessage(`{"file_path":"a/b.go","old_string":"x","new_string":"y"}`))
	if title != "Edit a/b.go" || len(locs) != 1 || locs[0].Path != "/ws/a/b.go" {
		t.Fatalf("describeCall: %q %+v", title, locs)
	}
	d, ok := diffOf("/ws", "replace_in_file", json.RawMessage(`{"file_path":"a/b.go","old_string":"x","new_string":"y"}`), nil)
	if !ok || d.Diff.Path != "/ws/a/b.go" || d.Diff.NewText != "y" || *d.Diff.OldText != "x" {
		t.Fatalf("diffOf: %+v", d.Diff)
	}
	old := "before"
	d, ok = diffOf("/ws", "write_file", json.RawMessage(`{"file_path":"/abs/c.txt","content":"after"}`), &old)
	if !ok || d.Diff.Path != "/abs/c.txt" || d.Diff.NewText != "after" || *d.Diff.OldText != "before" {
		t.Fatalf("diffOf write: %+v", d.Diff)
	}
	if _, ok := diffOf("/ws", "read_file", json.RawMessage(`{"file_path":"x"}`), nil); ok {
		t.Fatal("a read has a diff")
	}
	if title, _, _ := describeCall("/ws", "read_file", json.RawMessage(`not json`)); title != "read_file" {
		t.Fatalf("title of bad arguments: %q", title)
	}
}

func TestPromptContent(t *testing.T) {
	in, err := promptContent([]acpsdk.ContentBlock{
		acpsdk.TextBlock("look at"),
		acpsdk.ImageBlock("iVBORw0KGgo=", "image/PNG"),
		acpsdk.ResourceLinkBlock("main.go", "file:///ws/main.go"),
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///ws/x.txt", Text: "hello"}}),
	})
	if err != nil || in.text != "look at\n\n[main.go](file:///ws/main.go)\n\nfile:///ws/x.txt:\n```\nhello\n```" {
		t.Fatalf("%q %v", in.text, err)
	}
	if len(in.images) != 1 || in.images[0] != (ipc.PromptImage{Data: "iVBORw0KGgo=", MediaType: "image/png"}) {
		t.Fatalf("images %+v", in.images)
	}
	// Images alone are a prompt (the model is asked whether it takes
	// them before the turn, takesImages).
	if in, err := promptContent([]acpsdk.ContentBlock{acpsdk.ImageBlock("AAAA", "image/png")}); err != nil || in.text != "" || len(in.images) != 1 {
		t.Fatalf("an image alone: %+v %v", in, err)
	}
	many := []acpsdk.ContentBlock{acpsdk.TextBlock("these")}
	for range maxPromptImages + 1 {
		many = append(many, acpsdk.ImageBlock("AAAA", "image/png"))
	}
	for name, blocks := range map[string][]acpsdk.ContentBlock{
		"svg":          {acpsdk.TextBlock("this"), acpsdk.ImageBlock("PHN2Zz4=", "image/svg+xml")},
		"uri only":     {acpsdk.TextBlock("this"), {Image: &acpsdk.ContentBlockImage{MimeType: "image/png", Uri: acpsdk.Ptr("file:///x.png"), Type: "image"}}},
		"audio":        {acpsdk.TextBlock("this"), acpsdk.AudioBlock("AAAA", "audio/wav")},
		"empty":        {acpsdk.TextBlock("  ")},
		"too many":     many,
		"over the bus": {acpsdk.TextBlock("this"), acpsdk.ImageBlock(strings.Repeat("A", maxPromptBytes), "image/png")},
	} {
		var re *acpsdk.RequestError
		if _, err := promptContent(blocks); !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("%s: %v, want invalid params", name, err)
		}
	}
}

// Each permission option stands for one approval decision; a question
// about a process outside the sandbox offers only allow once and reject,
// and anything else the editor answers is a denial.
func TestPermissionOptionsMapToDecisions(t *testing.T) {
	opts := permissionOptions(ipc.ApprovalRequired{Action: "write_file"})
	want := map[acpsdk.PermissionOptionId]string{
		optOnce: ipc.DecisionApprove, optSession: ipc.DecisionApproveSession,
		optAlways: ipc.DecisionApproveAlways, optReject: ipc.DecisionDeny,
	}
	if len(opts) != len(want) {
		t.Fatalf("options %+v", opts)
	}
	for _, o := range opts {
		if got := decisionOf(string(o.OptionId)); got != want[o.OptionId] {
			t.Errorf("%s: decision %q, want %q", o.OptionId, got, want[o.OptionId])
		}
	}
	if opts[0].Kind != acpsdk.PermissionOptionKindAllowOnce || opts[len(opts)-1].Kind != acpsdk.PermissionOptionKindRejectOnce {
		t.Fatalf("kinds %+v", opts)
	}
	unconfined := permissionOptions(ipc.ApprovalRequired{Action: "run", Unconfined: true})
	if len(unconfined) != 2 || unconfined[0].OptionId != optOnce || unconfined[1].OptionId != optReject {
		t.Fatalf("unconfined options %+v", unconfined)
	}
	if got := decisionOf("something_else"); got != ipc.DecisionDeny {
		t.Fatalf("an unknown option is %q", got)
	}
}

// The editor's servers reach the kernel's checks as sent (env and headers
// in order); SSE and ACP-carried servers, which initialize does not
// offer, are refused by name with invalid params.
func TestEditorServers(t *testing.T) {
	got, err := editorServers([]acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "fs", Command: "npx", Args: []string{"-y", "pkg"}, Env: []acpsdk.EnvVariable{{Name: "A", Value: "1"}}}},
		{Http: &acpsdk.McpServerHttpInline{Name: "web", Type: "http", Url: "https://mcp.example.com/", Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer t"}}}},
	})
	if err != nil || len(got) != 2 || got[0].Command != "npx" || len(got[0].Args) != 2 || got[0].Env[0].Name != "A" ||
		got[1].URL != "https://mcp.example.com/" || got[1].Headers[0].Value != "Bearer t" {
		t.Fatalf("%+v %v", got, err)
	}
	for name, srv := range map[string]acpsdk.McpServer{
		"sse":  {Sse: &acpsdk.McpServerSseInline{Name: "old", Type: "sse", Url: "https://x/sse"}},
		"acp":  {Acp: &acpsdk.McpServerAcpInline{Name: "inner"}},
		"none": {},
	} {
		var re *acpsdk.RequestError
		if _, err := editorServers([]acpsdk.McpServer{srv}); !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("%s: %v, want invalid params", name, err)
		}
	}
}
