package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, openai.Manifest, openai.New())
}

// Text only, with the usage chunk include_usage asks for: one TextDelta
// per content delta, in order, then Usage, then Done.
func TestTextStream(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "openai_text.sse")})
	got := bootAt(t, srv).Generate(openai.Provider, ask("r1", "what is here?"))
	want := []ipc.StreamEvent{
		{Kind: ipc.StreamTextDelta, Text: "The"},
		{Kind: ipc.StreamTextDelta, Text: " workspace"},
		{Kind: ipc.StreamTextDelta, Text: " holds"},
		{Kind: ipc.StreamTextDelta, Text: " a README."},
		{Kind: ipc.StreamUsage, Usage: ipc.Usage{InputTokens: 412, OutputTokens: 6}},
		{Kind: ipc.StreamDone},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
}

// Tool calls, however the server spells them, come out as one id per call
// on Start, every Delta and End, with the arguments whole once joined.
func TestToolCallsAssembleByIndex(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		calls   []call
		deltas  int // ToolCallDelta events expected
		usage   ipc.Usage
	}{
		// OpenAI: the id on the first fragment only, arguments in 13 pieces.
		{"openai_tool_fragments.sse", []call{{"call_Xq7cN2vLr9TfB3kPwYd1Zm0s", "read_file", `{"file_path":"docs/notes.md","limit":40}`}}, 13, ipc.Usage{InputTokens: 520, OutputTokens: 24}},
		// OpenAI, two calls in one answer, each by its own index.
		{"openai_parallel_tools.sse", []call{
			{"call_4aR8mVt2QwLp7XkZ3nYc9BsD", "read_file", `{"file_path": "a.txt"}`},
			{"call_9LwE3xKq6TzR1vNm8YbC2pFa", "list_directory", `{"path": "src"}`},
		}, 8, ipc.Usage{InputTokens: 530, OutputTokens: 52}},
		// Ollama: the whole call in one chunk.
		{"ollama_tool.sse", []call{{"call_px63ad04", "read_file", `{"file_path":"README.md"}`}}, 1, ipc.Usage{InputTokens: 188, OutputTokens: 27}},
		// vLLM: the name alone first, the arguments after, no id again.
		{"vllm_tool.sse", []call{{"chatcmpl-tool-5e1b7c9d2f3a4b6c8d0e1f2a3b4c5d6e", "read_file", `{"file_path": "README.md"}`}}, 4, ipc.Usage{InputTokens: 301, OutputTokens: 24}},
		// llama.cpp server: the id repeated on every fragment.
		{"llamacpp_tool.sse", []call{{"Tq1xP8nLzR3vW6kY0mB5cJ2dF9gH4sA", "read_file", `{"file_path":"README.md"}`}}, 5, ipc.Usage{InputTokens: 240, OutputTokens: 18}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			srv := newWireServer(t, reply{body: fixture(t, tc.fixture)})
			events := bootAt(t, srv).Generate(openai.Provider, ask("r-"+tc.fixture, "read it"))
			o := fold(t, events)
			if o.end.Kind != ipc.StreamDone {
				t.Fatalf("ended with %+v: %+v", o.end, events)
			}
			if !reflect.DeepEqual(o.calls, tc.calls) || o.deltas != tc.deltas {
				t.Fatalf("calls %+v (%d deltas), want %+v (%d)", o.calls, o.deltas, tc.calls, tc.deltas)
			}
			for _, c := range o.calls {
				if !json.Valid([]byte(c.args)) {
					t.Fatalf("arguments of %s are not JSON: %s", c.id, c.args)
				}
			}
			if o.usage == nil || *o.usage != tc.usage || events[len(events)-2].Kind != ipc.StreamUsage {
				t.Fatalf("usage %+v, want %+v just before Done: %+v", o.usage, tc.usage, events)
			}
		})
	}
}

// Servers that number every parallel call 0 (a new id at the index)
// still give two calls, each with its own id and arguments; a call the
// server gives no id gets one.
func TestCallsSharingAnIndexOrWithoutID(t *testing.T) {
	body := sse(
		`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"a\"}"}}]}`, `null`,
		`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":"}}]}`, `null`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"\"b\"}"}}]}`, `null`,
		`{"tool_calls":[{"index":1,"type":"function","function":{"name":"list_directory","arguments":"{}"}}]}`, `null`,
		`{}`, `"tool_calls"`) + "data: [DONE]\n\n"
	srv := newWireServer(t, reply{body: []byte(body)})
	o := fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-idx", "read")))
	want := []call{{"call_a", "read_file", `{"file_path":"a"}`}, {"call_b", "read_file", `{"file_path":"b"}`}, {"call_1", "list_directory", `{}`}}
	if o.end.Kind != ipc.StreamDone || !reflect.DeepEqual(o.calls, want) {
		t.Fatalf("calls %+v, want %+v (end %+v)", o.calls, want, o.end)
	}
}

// A character whose bytes arrive in different TCP writes (the server
// flushes every single byte) comes out whole.
func TestMultiByteCharactersSplitAcrossWrites(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "openai_utf8.sse"), piece: 1})
	o := fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-utf8", "coffee")))
	if o.end.Kind != ipc.StreamDone || o.text != "Café crème ☕ 日本語 🦀" {
		t.Fatalf("text %q, end %+v", o.text, o.end)
	}
}

// Ollama's text stream (no usage key until the last chunk) and reasoning
// from the fields servers send outside OpenAI's schema.
func TestOllamaAndReasoningVariants(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "ollama_text.sse")})
	o := fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-oll", "hi")))
	if o.end.Kind != ipc.StreamDone || o.text != "Hello from Ollama." || o.usage == nil || *o.usage != (ipc.Usage{InputTokens: 31, OutputTokens: 4}) {
		t.Fatalf("%+v", o)
	}
	srv = newWireServer(t, reply{body: fixture(t, "ollama_tool.sse")})
	o = fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-oll2", "read")))
	if o.reasoning != "The user wants the README." {
		t.Fatalf("Ollama's reasoning: %+v", o)
	}
}

// Every way a stream can go wrong ends in exactly one Error, saying what
// happened, after whatever was streamed before it; never a silent Done.
func TestBrokenStreamsEndInOneError(t *testing.T) {
	bigLine := append([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\""), []byte(strings.Repeat("x", 1<<20))...)
	for _, tc := range []struct {
		name  string
		reply reply
		text  string // streamed before the error
		want  []string
	}{
		{"truncated body", reply{body: fixture(t, "openai_truncated.sse")}, "The answer is",
			[]string{"ended before its end marker", "connection was closed or the body cut short"}},
		{"closed after a complete chunk", reply{body: firstEvents(t, "openai_text.sse", 4)}, "The workspace holds",
			[]string{"ended before its end marker"}},
		{"error event mid-stream", reply{body: fixture(t, "openai_error_midstream.sse")}, "Let me",
			[]string{"reported an error mid-stream", "The server had an error while processing your request. Sorry about that! (server_error)"}},
		{"vLLM's error object mid-stream", reply{body: fixture(t, "vllm_error_midstream.sse")}, "Paris",
			[]string{"reported an error mid-stream", "longer than the maximum model length of 8192"}},
		{"invalid JSON chunk", reply{body: fixture(t, "openai_invalid_json.sse")}, "Half",
			[]string{"not a valid chat completion chunk"}},
		{"a 1 MiB line", reply{body: bigLine, piece: 64 << 10}, "",
			[]string{"a line of 1 MiB or more"}},
		{"500 with a JSON body", reply{status: 500, header: map[string]string{"Content-Type": "application/json"},
			body: []byte(`{"error":{"message":"The server had an error processing your request. Sorry about that! You can retry your request.","type":"server_error","param":null,"code":null}}` + "\n")}, "",
			[]string{"answered 500 Internal Server Error", "You can retry your request. (server_error)"}},
		{"404 from Ollama for a model not pulled", reply{status: 404, header: map[string]string{"Content-Type": "application/json"},
			body: []byte(`{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`)}, "",
			[]string{"answered 404 Not Found", `model "llama9" not found, try pulling it first`}},
		{"502 with an HTML body", reply{status: 502, header: map[string]string{"Content-Type": "text/html"},
			body: []byte("<html><body>Bad gateway</body></html>")}, "",
			[]string{"answered 502 Bad Gateway", "<html><body>Bad gateway</body></html>"}},
		{"a tool call that never gets a name", reply{body: []byte(sse(
			`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":"{}"}}]}`, `null`,
			`{}`, `"tool_calls"`) + "data: [DONE]\n\n")}, "",
			[]string{"a tool call (index 0) without a function name"}},
		{"200 that is not a stream", reply{status: 200, header: map[string]string{"Content-Type": "application/json"},
			body: []byte(`{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`)}, "",
			[]string{"ended before its end marker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newWireServer(t, tc.reply)
			events := bootAt(t, srv).Generate(openai.Provider, ask("r-bad", "hi"))
			o := fold(t, events)
			if o.end.Kind != ipc.StreamError || o.text != tc.text {
				t.Fatalf("text %q and end %+v, want %q then an Error: %+v", o.text, o.end, tc.text, events)
			}
			mustContain(t, "error", o.end.Text, tc.want...)
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("%d requests: nothing but a 429 is retried", n)
			}
		})
	}
}

// The end marker is [DONE] or a finish_reason: a stream whose answer was
// finished (finish_reason "stop") but lost its usage chunk and [DONE] is
// complete, and ends in Done without a Usage.
func TestFinishReasonWithoutDoneIsComplete(t *testing.T) {
	srv := newWireServer(t, reply{body: firstEvents(t, "openai_text.sse", 6)})
	events := bootAt(t, srv).Generate(openai.Provider, ask("r-fin", "hi"))
	o := fold(t, events)
	if o.end.Kind != ipc.StreamDone || o.text != "The workspace holds a README." || o.usage != nil {
		t.Fatalf("%+v", events)
	}
}

// [DONE] alone ends a stream too (a server that sends no finish_reason),
// however its line ends.
func TestDoneWithoutFinishReasonIsComplete(t *testing.T) {
	for _, done := range []string{"data: [DONE]\n\n", "data:[DONE]\r\n\r\n"} {
		body := append(firstEvents(t, "ollama_text.sse", 3), done...)
		srv := newWireServer(t, reply{body: body})
		o := fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-done", "hi")))
		if o.end.Kind != ipc.StreamDone || o.text != "Hello from Ollama." {
			t.Fatalf("%q: %+v", done, o)
		}
	}
}

// A server that stops sending without closing is given up on after
// stream_timeout_secs of silence, with an Error naming the limit.
func TestStalledStreamEndsInError(t *testing.T) {
	body := firstEvents(t, "openai_text.sse", 3)
	srv := newWireServer(t, reply{body: body, stall: true})
	start := time.Now()
	events := bootAt(t, srv, "stream_timeout_secs", "1").Generate(openai.Provider, ask("r-stall", "hi"))
	o := fold(t, events)
	if o.end.Kind != ipc.StreamError || o.text != "The workspace" {
		t.Fatalf("%+v", events)
	}
	mustContain(t, "error", o.end.Text, "sent nothing for 1 s (stream_timeout_secs)")
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("gave up after %s, before the 1 s of silence", waited)
	}
}

// A 429 is waited out once (Retry-After) before any output, and the retry's
// stream is the answer; a second 429 is reported, as is one asking to wait
// longer than the provider will.
func TestRateLimitIsRetriedOnce(t *testing.T) {
	limited := reply{status: 429, header: map[string]string{"Content-Type": "application/json", "Retry-After": "1"},
		body: []byte(`{"error":{"message":"Rate limit reached for gpt-4.1-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)}
	srv := newWireServer(t, limited, reply{body: fixture(t, "openai_text.sse")})
	start := time.Now()
	o := fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-429", "hi")))
	if o.end.Kind != ipc.StreamDone || o.text != "The workspace holds a README." {
		t.Fatalf("after a 429: %+v", o)
	}
	if n := len(srv.requests()); n != 2 {
		t.Fatalf("%d requests, want the first and one retry", n)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("retried after %s, not after Retry-After's 1 s", waited)
	}

	srv = newWireServer(t, limited)
	o = fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-429b", "hi")))
	if o.end.Kind != ipc.StreamError || len(srv.requests()) != 2 {
		t.Fatalf("two 429s: %+v after %d requests", o, len(srv.requests()))
	}
	mustContain(t, "error", o.end.Text, "answered 429 Too Many Requests", "Rate limit reached", "(after one retry)")

	limited.header["Retry-After"] = "3600"
	srv = newWireServer(t, limited)
	o = fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-429c", "hi")))
	if o.end.Kind != ipc.StreamError || len(srv.requests()) != 1 {
		t.Fatalf("a 429 asking for an hour: %+v after %d requests", o, len(srv.requests()))
	}
	mustContain(t, "error", o.end.Text, "it asks to wait 1h0m0s")
}

// What the server receives: the request's model over [env] model, the
// system prompt first, an assistant's calls flattened into one message,
// each tool result with its call id, multipart, tools as functions, the
// limits, usage asked for, the key as a bearer token.
func TestRequestBodyMapping(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "openai_text.sse")})
	k := bootAt(t, srv, "api_key", "sk-test-123", "max_output_tokens", "512", "temperature", "0.2")
	desc := "Read a file"
	req := ipc.LLMRequest{RequestID: "r-map", Model: "gpt-4o", System: "You are Astrid.", Messages: []ipc.Message{
		ipc.TextMessage(ipc.RoleSystem, "an old system message, dropped"),
		ipc.TextMessage(ipc.RoleUser, "read a and b"),
		{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{
			{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"a"}`)},
			{ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"b"}`)},
		}}},
		{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallSuccess("c1", "A")}},
		{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: "c2", Content: "no such file", IsError: true}}},
		ipc.TextMessage(ipc.RoleAssistant, "A, and b is missing."),
		{Role: ipc.RoleUser, Content: ipc.MessageContent{Kind: ipc.ContentMultiPart, Parts: []ipc.ContentPart{
			{Type: ipc.PartText, Text: "and this?"}, {Type: ipc.PartImage, Data: "aGVsbG8=", MediaType: "image/png"}}}},
	}, Tools: []ipc.LLMToolDefinition{{Name: "read_file", Description: &desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)}}}
	if o := fold(t, k.Generate(openai.Provider, req)); o.end.Kind != ipc.StreamDone {
		t.Fatalf("%+v", o)
	}
	got := srv.requests()[0]
	if got.path != "/v1/chat/completions" || got.header.Get("Authorization") != "Bearer sk-test-123" {
		t.Fatalf("path %s, auth %q", got.path, got.header.Get("Authorization"))
	}
	var body struct {
		Model         string          `json:"model"`
		Stream        bool            `json:"stream"`
		StreamOptions map[string]bool `json:"stream_options"`
		MaxTokens     int             `json:"max_tokens"`
		Temperature   float64         `json:"temperature"`
		Messages      []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-4o" || !body.Stream || !body.StreamOptions["include_usage"] || body.MaxTokens != 512 || body.Temperature != 0.2 {
		t.Fatalf("model/stream/limits: %s", got.body)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool,assistant,user" {
		t.Fatalf("roles %v in %s", roles, got.body)
	}
	m := body.Messages
	if string(m[0].Content) != `"You are Astrid."` {
		t.Fatalf("system message %s", m[0].Content)
	}
	if len(m[2].ToolCalls) != 2 || m[2].ToolCalls[0].ID != "c1" || m[2].ToolCalls[1].Function.Arguments != `{"file_path":"b"}` || m[2].ToolCalls[0].Type != "function" {
		t.Fatalf("assistant tool calls: %s", got.body)
	}
	if m[3].ToolCallID != "c1" || string(m[3].Content) != `"A"` || m[4].ToolCallID != "c2" || string(m[4].Content) != `"Error: no such file"` {
		t.Fatalf("tool results: %s", got.body)
	}
	var parts []map[string]any
	if err := json.Unmarshal(m[6].Content, &parts); err != nil || len(parts) != 2 || parts[0]["type"] != "text" || parts[0]["text"] != "and this?" ||
		parts[1]["type"] != "image_url" || parts[1]["image_url"].(map[string]any)["url"] != "data:image/png;base64,aGVsbG8=" {
		t.Fatalf("multipart: %s", m[6].Content)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "function" || body.Tools[0].Function.Name != "read_file" || body.Tools[0].Function.Description != desc || body.Tools[0].Function.Parameters["required"] == nil {
		t.Fatalf("tools: %s", got.body)
	}

	// Without a model in the request, [env] model is asked for.
	if o := fold(t, k.Generate(openai.Provider, ask("r-map2", "hi"))); o.end.Kind != ipc.StreamDone {
		t.Fatalf("%+v", o)
	}
	if model := jsonOf(t, srv.requests()[1].body)["model"]; model != "test-model" {
		t.Fatalf("model %v, want the configured test-model", model)
	}
}

// OpenAI itself without a key is one Error naming the command that sets
// it, and no request leaves; a server of the operator's needs no key.
func TestMissingKey(t *testing.T) {
	k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New})
	o := fold(t, k.Generate(openai.Provider, ask("r-nokey", "hi")))
	if o.end.Kind != ipc.StreamError {
		t.Fatalf("%+v", o)
	}
	mustContain(t, "error", o.end.Text, "printf %s sk-… | astrid capsule env set astrid-capsule-openai api_key", "OPENAI_API_KEY")

	srv := newWireServer(t, reply{body: fixture(t, "ollama_text.sse")})
	o = fold(t, bootAt(t, srv).Generate(openai.Provider, ask("r-local", "hi")))
	if o.end.Kind != ipc.StreamDone || srv.requests()[0].header.Get("Authorization") != "" {
		t.Fatalf("a local server without a key: %+v, auth %q", o, srv.requests()[0].header.Get("Authorization"))
	}
}

// Describe: one entry per model, the configured one first; ready, or not
// ready with the command that fixes it. OpenAI itself lists the well-known
// ids until its own list is read; a server of the operator's lists only
// its configured model.
func TestDescribe(t *testing.T) {
	e, all := describeAll(t, sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New}), `{}`)
	if e.Ready || !strings.Contains(e.Why, "astrid capsule env set astrid-capsule-openai api_key") || e.ID != openai.DefaultModel ||
		!reflect.DeepEqual(all, openai.KnownModels) {
		t.Fatalf("no key: %+v, models %q", e, all)
	}
	srv := newWireServer(t, reply{})
	e, all = describeAll(t, bootAt(t, srv, "context_window", "32768", "max_output_tokens", "1024"), `{}`)
	if !e.Ready || e.ID != "test-model" || e.ContextWindow != 32768 || e.MaxOutputTokens != 1024 ||
		e.RequestTopic != "llm.v1.request.generate.openai" || e.StreamTopic != "llm.v1.stream.openai" || e.Why != "" || len(all) != 1 {
		t.Fatalf("configured: %+v, models %q", e, all)
	}
	if n := len(srv.requests()); n != 0 {
		t.Fatalf("a plain describe asked the server (%d requests): a turn must never wait on it", n)
	}
	e, _ = describeAll(t, sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"api_key": "sk-x"}}), `{}`)
	if !e.Ready || e.ID != openai.DefaultModel || e.ContextWindow != 128000 || e.MaxOutputTokens != 8192 {
		t.Fatalf("defaults: %+v", e)
	}
	e, _ = describeAll(t, sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}}), `{}`)
	if e.Ready || !strings.Contains(e.Why, "astrid capsule env set astrid-capsule-openai model") {
		t.Fatalf("a local server without a model: %+v", e)
	}
}

// describeEntry is one entry of a describe answer.
type describeEntry struct {
	ID              string   `json:"id"`
	RequestTopic    string   `json:"request_topic"`
	StreamTopic     string   `json:"stream_topic"`
	ContextWindow   uint64   `json:"context_window"`
	MaxOutputTokens uint64   `json:"max_output_tokens"`
	Capabilities    []string `json:"capabilities"`
	Ready           bool     `json:"ready"`
	Why             string   `json:"why"`
	Note            string   `json:"note"`
}

// describeAll asks k's provider to describe itself with payload and
// returns the first entry and every entry's id.
func describeAll(t *testing.T, k *sdktest.Kernel, payload string) (describeEntry, []string) {
	t.Helper()
	var d struct{ Providers []describeEntry }
	if err := json.Unmarshal(k.DescribeLLMWith([]byte(payload)), &d); err != nil || len(d.Providers) == 0 {
		t.Fatalf("describe: %v %+v", err, d)
	}
	ids := make([]string, len(d.Providers))
	for i, e := range d.Providers {
		ids[i] = e.ID
	}
	return d.Providers[0], ids
}

// modelsServer answers GET /v1/models with list (OpenAI's and Ollama's
// shape) and anything else with a streamed answer naming the model asked
// for, counting the list requests.
func modelsServer(t *testing.T, status int, list string) (*httptest.Server, *atomic.Int32, *atomic.Value) {
	t.Helper()
	var lists atomic.Int32
	var asked atomic.Value
	asked.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			lists.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, list)
			return
		}
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		asked.Store(body.Model)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(`{"role":"assistant","content":"hi"}`, "null", `{}`, `"stop"`)+"data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &lists, &asked
}

// The models a server serves: a describe that asks to refresh reads GET
// /v1/models (Ollama's here) and lists them after the configured one; the
// list is kept, so the next describe lists them without asking, and a
// refresh within modelsMaxAge does not ask again. With no model
// configured, a request that names none asks for the first the server
// lists, so --model is not needed.
func TestModelsTheServerLists(t *testing.T) {
	const ollama = `{"object":"list","data":[{"id":"llama3.2:latest","object":"model","created":1764590000,"owned_by":"library"},{"id":"qwen3:8b","object":"model","created":1764590001,"owned_by":"library"}]}`
	srv, lists, _ := modelsServer(t, http.StatusOK, ollama)
	k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1", "model": "mine"}})
	if _, all := describeAll(t, k, `{}`); !reflect.DeepEqual(all, []string{"mine"}) || lists.Load() != 0 {
		t.Fatalf("before a refresh: %q, %d list requests", all, lists.Load())
	}
	e, all := describeAll(t, k, `{"refresh":true}`)
	if want := []string{"mine", "llama3.2:latest", "qwen3:8b"}; !reflect.DeepEqual(all, want) || !e.Ready || lists.Load() != 1 {
		t.Fatalf("refreshed: %q (want %q), %+v, %d list requests", all, want, e, lists.Load())
	}
	if _, all = describeAll(t, k, `{"refresh":true}`); len(all) != 3 || lists.Load() != 1 {
		t.Fatalf("a second refresh at once: %q, %d list requests", all, lists.Load())
	}
	if _, all = describeAll(t, k, `{}`); len(all) != 3 {
		t.Fatalf("a plain describe after: %q", all)
	}

	// No model named or configured: a server serving one model gets a
	// request for it; one serving several is not guessed for.
	srv, lists, asked := modelsServer(t, http.StatusOK, `{"object":"list","data":[{"id":"llama3.2:latest","object":"model","created":1764590000,"owned_by":"library"}]}`)
	k = sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}})
	if o := fold(t, k.Generate(openai.Provider, ask("r1", "hi"))); o.end.Kind != ipc.StreamDone || asked.Load() != "llama3.2:latest" || lists.Load() != 1 {
		t.Fatalf("no model named: %+v, asked for %q, %d list requests", o, asked.Load(), lists.Load())
	}
	if e, all := describeAll(t, k, `{}`); !e.Ready || !reflect.DeepEqual(all, []string{"llama3.2:latest"}) {
		t.Fatalf("after the list was read: %+v %q", e, all)
	}
	srv, _, asked = modelsServer(t, http.StatusOK, ollama)
	k = sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}})
	if o := fold(t, k.Generate(openai.Provider, ask("r2", "hi"))); o.end.Kind != ipc.StreamError || asked.Load() != "" ||
		!strings.Contains(o.end.Text, "serves 2 (llama3.2:latest, qwen3:8b)") || !strings.Contains(o.end.Text, "astrid models set openai:<model>") {
		t.Fatalf("several served, none named: %+v, asked for %q", o, asked.Load())
	}
}

// A models endpoint that misbehaves never hangs a describe or a turn: a
// list of 10,000 models is cut to the first 200, HTML or garbage and a
// 404 fall back to the configured model with a note saying so, and a
// server that never answers is given up on at modelsFetchTimeout (the
// handler blocks until the request's context ends, so only the
// provider's own deadline can end it).
func TestModelsEndpointMisbehaving(t *testing.T) {
	var huge strings.Builder
	huge.WriteString(`{"object":"list","data":[`)
	for i := range 10000 {
		if i > 0 {
			huge.WriteByte(',')
		}
		fmt.Fprintf(&huge, `{"id":"m%05d","object":"model"}`, i)
	}
	huge.WriteString(`]}`)
	srv, _, _ := modelsServer(t, http.StatusOK, huge.String())
	k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1", "model": "mine"}})
	if e, all := describeAll(t, k, `{"refresh":true}`); len(all) != 201 || all[0] != "mine" || all[1] != "m00000" || all[200] != "m00199" || e.Note != "" {
		t.Fatalf("10,000 models: %d listed (%q…), note %q", len(all), all[:min(3, len(all))], e.Note)
	}

	for name, h := range map[string]http.HandlerFunc{
		"html": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body>It works!</body></html>")
		},
		"garbage": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"data":[{"id":`)
		},
		"404": func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
		"stall": func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1", "model": "mine"}})
			e, all := describeAll(t, k, `{"refresh":true}`)
			if !reflect.DeepEqual(all, []string{"mine"}) || !e.Ready || !strings.Contains(e.Note, "was not read") || !strings.Contains(e.Note, "only the configured model is listed") {
				t.Fatalf("listed %q, %+v", all, e)
			}
			if name == "stall" && !strings.Contains(e.Note, "no answer within 2s") {
				t.Fatalf("the stall's note: %q", e.Note)
			}
			// A turn naming no model to a server with none configured
			// asks for the list, and ends in an Error saying why, never
			// waits on it.
			k = sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}})
			if o := fold(t, k.Generate(openai.Provider, ask("r-"+name, "hi"))); o.end.Kind != ipc.StreamError || !strings.Contains(o.end.Text, "was not read") || !strings.Contains(o.end.Text, "--model") {
				t.Fatalf("a turn with no model: %+v", o)
			}
		})
	}
}

// OpenAI's own list holds more than chat models: only those are listed,
// sorted. A server that fails to list leaves the known ids listed.
func TestModelsOpenAIListsFiltered(t *testing.T) {
	got := openai.FilterModels(false, []string{"text-embedding-3-small", "gpt-5.5", "gpt-4o-realtime-preview", "o3", "dall-e-3", "gpt-5.4-mini", "bad id"})
	if want := []string{"gpt-5.4-mini", "gpt-5.5", "o3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("OpenAI's list filtered: %q, want %q", got, want)
	}
	failing, lists, _ := modelsServer(t, http.StatusUnauthorized, `{"error":{"message":"no"}}`)
	k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": failing.URL + "/v1", "model": "mine"}})
	if _, all := describeAll(t, k, `{"refresh":true}`); !reflect.DeepEqual(all, []string{"mine"}) || lists.Load() != 1 {
		t.Fatalf("a failed list: %q, %d list requests", all, lists.Load())
	}
}

// A base URL the operator did not set is not reachable: a loopback server
// stays an SSRF target unless it is the capsule's base_url.
func TestOnlyTheOperatorsServerIsReached(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "openai_text.sse")})
	other := newWireServer(t, reply{body: fixture(t, "openai_text.sse")})
	k := bootAt(t, srv)
	o := fold(t, k.Generate(openai.Provider, ask("r-ok", "hi")))
	if o.end.Kind != ipc.StreamDone {
		t.Fatalf("%+v", o)
	}
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the other server saw %d requests", n)
	}
	redirect := newWireServer(t, reply{status: http.StatusTemporaryRedirect, header: map[string]string{"Location": other.URL + "/v1/chat/completions"}})
	o = fold(t, bootAt(t, redirect).Generate(openai.Provider, ask("r-redir", "hi")))
	if o.end.Kind != ipc.StreamError || len(other.requests()) != 0 || !strings.Contains(o.end.Text, "failed") {
		t.Fatalf("a redirect to another loopback port was followed: %+v, %d requests", o, len(other.requests()))
	}
}

// A stream faster than the principal's publish budget (here 128 KiB/s,
// 16 KiB of burst; about 700 KiB of events) waits for it: the budget
// refuses publishes, yet every delta arrives, in order, and the stream ends
// in Done rather than a dropped event or an error.
func TestAStreamFasterThanThePublishBudget(t *testing.T) {
	const n = 5000
	srv := newWireServer(t, reply{body: tokenStream(n), piece: 64 << 10})
	k := sdktest.NewWithPublishRate(t, 128<<10, 16<<10, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New,
		Config: map[string]string{"base_url": srv.URL + "/v1", "model": "test-model"}})
	evs := k.Generate(openai.Provider, ask("r1", "go"))
	if k.RateLimited() == 0 {
		t.Fatal("the publish budget never refused the stream: the test proves nothing")
	}
	deltas := 0
	for _, ev := range evs {
		if ev.Kind == ipc.StreamTextDelta {
			if want := fmt.Sprintf(" tok%d", deltas); ev.Text != want {
				t.Fatalf("delta %d is %q", deltas, ev.Text)
			}
			deltas++
		}
	}
	if deltas != n || len(evs) == 0 || evs[len(evs)-1].Kind != ipc.StreamDone {
		t.Fatalf("%d deltas of %d, last %+v", deltas, n, evs[len(evs)-1])
	}
}
