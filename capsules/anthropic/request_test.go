package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

func strPtr(s string) *string { return &s }

// The conversation maps as spec §6.4 says, with the Go note: the system
// prompt as `system`, every tool result of a round in one user message
// (ids and is_error kept), an assistant's text and calls in one message,
// images as base64 blocks, tools with their whole input_schema, the
// request's model over the configured one, empty text dropped.
func TestRequestMapping(t *testing.T) {
	calls := []ipc.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"README.md"}`)},
		{ID: "call_b", Name: "read_file", Arguments: json.RawMessage(`not json`)},
	}
	req := ipc.LLMRequest{
		RequestID: "r1", Model: "claude-opus-5-5", System: "You are terse.",
		Messages: []ipc.Message{
			ipc.TextMessage(ipc.RoleUser, "Read two files"),
			ipc.TextMessage(ipc.RoleAssistant, "Reading."),
			{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: calls}},
			{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: "call_a", Content: "# Hi"}}},
			{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: "call_b", Content: "no such file", IsError: true}}},
			ipc.TextMessage(ipc.RoleAssistant, ""),
			{Role: ipc.RoleUser, Content: ipc.MessageContent{Kind: ipc.ContentMultiPart, Parts: []ipc.ContentPart{
				{Type: ipc.PartText, Text: "And this?"}, {Type: ipc.PartImage, Data: "iVBORw0KGgo=", MediaType: "image/png"}}}},
		},
		Tools: []ipc.LLMToolDefinition{{Name: "read_file", Description: strPtr("Read a file"),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"],"additionalProperties":false}`)}},
	}
	s := settings{model: DefaultModel, maxOutputTokens: 1024}
	p, err := newParams(req, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"max_tokens":1024,"messages":[` +
		`{"content":[{"text":"Read two files","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Reading.","type":"text"},{"id":"call_a","input":{"file_path":"README.md"},"name":"read_file","type":"tool_use"},{"id":"call_b","input":{},"name":"read_file","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"tool_use_id":"call_a","is_error":false,"content":[{"text":"# Hi","type":"text"}],"type":"tool_result"},{"tool_use_id":"call_b","is_error":true,"content":[{"text":"no such file","type":"text"}],"type":"tool_result"},{"text":"And this?","type":"text"},{"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"},"type":"image"}],"role":"user"}],` +
		`"model":"claude-opus-5-5","system":[{"text":"You are terse.","type":"text"}],` +
		`"tools":[{"input_schema":{"properties":{"file_path":{"type":"string"}},"required":["file_path"],"type":"object","additionalProperties":false},"name":"read_file","description":"Read a file"}]}`
	if got := string(b); got != want {
		t.Fatalf("request body\n got %s\nwant %s", got, want)
	}

	// Without a model in the request, the configured one.
	req.Model = ""
	if p, _ := newParams(req, s); p.Model != DefaultModel {
		t.Errorf("model %q", p.Model)
	}
}

// describe says ready only with a key or a base_url, and why not naming
// the command.
func TestDescribeReadiness(t *testing.T) {
	d := describe(settings{model: DefaultModel, maxOutputTokens: 8192, contextWindow: 200000}, []string{DefaultModel}, nil, "")
	e := d.Providers[0]
	if e.Ready || !strings.Contains(e.Why, setKeyCommand) || !strings.Contains(e.Why, "ANTHROPIC_API_KEY") {
		t.Errorf("without a key: %+v", e)
	}
	if e.RequestTopic != "llm.v1.request.generate.anthropic" || e.StreamTopic != "llm.v1.stream.anthropic" || e.Models[0] != DefaultModel {
		t.Errorf("entry %+v", e)
	}
	for _, s := range []settings{{apiKey: "k"}, {baseURL: "http://127.0.0.1:1"}} {
		if e := describe(s, []string{DefaultModel}, nil, "").Providers[0]; !e.Ready || e.Why != "" {
			t.Errorf("%+v: %+v", s, e)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := mustTime(t, "Tue, 01 Dec 2026 22:00:00 GMT")
	for _, c := range []struct {
		h    map[string]string
		want string
		ok   bool
	}{
		{map[string]string{"Retry-After": "3"}, "3s", true},
		{map[string]string{"Retry-After": "0.5"}, "500ms", true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, "250ms", true},
		{map[string]string{"Retry-After": "Tue, 01 Dec 2026 22:00:07 GMT"}, "7s", true},
		{map[string]string{"Retry-After": "soon"}, "0s", false},
		{nil, "0s", false},
	} {
		h := make(map[string][]string)
		for k, v := range c.h {
			h[k] = []string{v}
		}
		d, ok := sdk.RetryAfter(h, now)
		if d.String() != c.want || ok != c.ok {
			t.Errorf("%v: %s %v, want %s %v", c.h, d, ok, c.want, c.ok)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := http.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
