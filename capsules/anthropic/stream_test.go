package anthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func last(t *testing.T, evs []ipc.StreamEvent) ipc.StreamEvent {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs[len(evs)-1]
}

// wantError checks that the stream ended in exactly one Error, the last
// event, naming every one of says.
func wantError(t *testing.T, evs []ipc.StreamEvent, says ...string) string {
	t.Helper()
	end := last(t, evs)
	if end.Kind != ipc.StreamError {
		t.Fatalf("the stream ended in %v, not an Error: %+v", end.Kind, evs)
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Kind == ipc.StreamError || ev.Kind == ipc.StreamDone {
			t.Fatalf("an end before the last event: %+v", evs)
		}
	}
	for _, s := range says {
		if !strings.Contains(end.Text, s) {
			t.Errorf("the Error %q does not say %q", end.Text, s)
		}
	}
	return end.Text
}

func text(evs []ipc.StreamEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == ipc.StreamTextDelta {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// The documented basic stream: text deltas as they come, one Usage (the
// request's total, from message_start and the cumulative message_delta)
// just before Done; the ping is nothing. The request carries the key, the SDK's API version, the
// configured model and max_tokens, stream: true.
func TestTextStream(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "text.sse")})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	want := []ipc.StreamEvent{
		{Kind: ipc.StreamTextDelta, Text: "Hello"},
		{Kind: ipc.StreamTextDelta, Text: "!"},
		{Kind: ipc.StreamUsage, Usage: ipc.Usage{InputTokens: 25, OutputTokens: 15}},
		{Kind: ipc.StreamDone},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("events\n got %+v\nwant %+v", evs, want)
	}
	// Prompt caching: Anthropic counts the cached input apart from
	// input_tokens; the bus's input counts all of it, cached_tokens the
	// part read from the cache.
	cached := bytes.Replace(fixture(t, "text.sse"), []byte(`"usage": {"input_tokens": 25, "output_tokens": 1}`),
		[]byte(`"usage": {"input_tokens": 25, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 1}`), 1)
	evs = generate(t, newFakeAPI(t, reply{body: cached}), nil, ipc.LLMRequest{})
	if got := evs[len(evs)-2]; got.Kind != ipc.StreamUsage || got.Usage != (ipc.Usage{InputTokens: 2125, OutputTokens: 15, CachedTokens: 2000}) {
		t.Fatalf("cached usage: %+v", got)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	// API version 2026-10-21 takes the key as a bearer token.
	if r.header.Get("Authorization") != "Bearer sk-ant-test-key" || r.header.Get("Anthropic-Version") != "2026-10-21" {
		t.Errorf("headers: authorization %q, anthropic-version %q", r.header.Get("Authorization"), r.header.Get("Anthropic-Version"))
	}
	if r.body["model"] != anthropic.DefaultModel || r.body["max_tokens"] != 8192.0 || r.body["stream"] != true {
		t.Errorf("body: %s", r.raw)
	}
	if _, ok := r.body["temperature"]; ok {
		t.Errorf("a temperature nobody set was sent: %s", r.raw)
	}
	if r.header.Get("X-Stainless-Retry-Count") != "0" {
		t.Errorf("retry count header %q", r.header.Get("X-Stainless-Retry-Count"))
	}
}

// The documented tool-use stream, delivered 7 bytes at a time: the text,
// then one call whose arguments arrive in many fragments, every delta and
// the end under the id content_block_start gave.
func TestToolCallArgumentsInManyFragments(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "tool_fragments.sse"), chunk: 7})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	if got := text(evs); got != "Okay, let's check the weather for San Francisco, CA:" {
		t.Errorf("text %q", got)
	}
	const id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
	var args strings.Builder
	var kinds []string
	deltas := 0
	for _, ev := range evs {
		switch ev.Kind {
		case ipc.StreamToolCallStart:
			if ev.ID != id || ev.Name != "get_weather" {
				t.Errorf("start %+v", ev)
			}
		case ipc.StreamToolCallDelta:
			deltas++
			if ev.ID != id {
				t.Errorf("a delta under id %q", ev.ID)
			}
			args.WriteString(ev.ArgsDelta)
		case ipc.StreamToolCallEnd:
			if ev.ID != id {
				t.Errorf("end under id %q", ev.ID)
			}
		default:
			continue
		}
		kinds = append(kinds, string(ev.Kind))
	}
	if deltas != 8 {
		t.Errorf("%d deltas, want the 8 non-empty fragments", deltas)
	}
	if k := strings.Join(kinds, ","); !strings.HasPrefix(k, "ToolCallStart,ToolCallDelta") || !strings.HasSuffix(k, "ToolCallDelta,ToolCallEnd") {
		t.Errorf("order %s", k)
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(args.String()), &in); err != nil || in["location"] != "San Francisco, CA" || in["unit"] != "fahrenheit" {
		t.Errorf("arguments %q: %v", args.String(), err)
	}
	if end := last(t, evs); end.Kind != ipc.StreamDone {
		t.Errorf("ended in %+v", end)
	}
}

// Two calls in one answer (recorded padding after the JSON, a ping between
// fragments): each keeps its own id from start to end, and the usage is
// message_delta's.
func TestParallelToolCalls(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "parallel_tools.sse"), chunk: 64})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	args := map[string]*strings.Builder{}
	var order []string
	for _, ev := range evs {
		switch ev.Kind {
		case ipc.StreamToolCallStart:
			args[ev.ID] = &strings.Builder{}
			order = append(order, "start:"+ev.ID)
		case ipc.StreamToolCallDelta:
			b, ok := args[ev.ID]
			if !ok {
				t.Fatalf("a delta for an id never started: %+v", ev)
			}
			b.WriteString(ev.ArgsDelta)
		case ipc.StreamToolCallEnd:
			order = append(order, "end:"+ev.ID)
		}
	}
	const a, b = "toolu_017QoD96fYwGzCWvLfaPADWg", "toolu_01Ahb3PDUdBBBHyWvNxtHT8M"
	if got := strings.Join(order, " "); got != "start:"+a+" end:"+a+" start:"+b+" end:"+b {
		t.Errorf("order %s", got)
	}
	for id, want := range map[string]string{a: "README.md", b: "go.mod"} {
		var in map[string]string
		if err := json.Unmarshal([]byte(args[id].String()), &in); err != nil || in["file_path"] != want {
			t.Errorf("%s arguments %q: %v", id, args[id].String(), err)
		}
	}
	n := len(evs)
	if n < 2 || evs[n-2].Kind != ipc.StreamUsage || evs[n-2].Usage != (ipc.Usage{InputTokens: 394, OutputTokens: 79}) || evs[n-1].Kind != ipc.StreamDone {
		t.Errorf("the end of the stream: %+v", evs[max(0, n-2):])
	}
}

// Delivered one byte at a time, every multi-byte character is split
// across reads; the deltas are still whole, valid UTF-8.
func TestMultiByteCharactersSplitAcrossChunks(t *testing.T) {
	body := fixture(t, "utf8.sse")
	if !bytes.Contains(body, []byte("🌸")) {
		t.Fatal("the fixture lost its 4-byte character")
	}
	api := newFakeAPI(t, reply{body: body, chunk: 1})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	for _, ev := range evs {
		if ev.Kind == ipc.StreamTextDelta && !utf8.ValidString(ev.Text) {
			t.Errorf("a delta that is not valid UTF-8: %q", ev.Text)
		}
	}
	if got := text(evs); got != "Grüße aus 東京 🌸 — naïve café" {
		t.Errorf("text %q", got)
	}
	if u := evs[len(evs)-2]; u.Kind != ipc.StreamUsage || u.Usage != (ipc.Usage{InputTokens: 12, OutputTokens: 17}) {
		t.Errorf("usage %+v", u)
	}
}

// Thinking deltas are ReasoningDelta; the signature is not shown.
func TestThinkingIsReasoning(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "thinking.sse")})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	var reasoning strings.Builder
	for _, ev := range evs {
		if ev.Kind == ipc.StreamReasoningDelta {
			reasoning.WriteString(ev.Text)
		}
	}
	if !strings.HasPrefix(reasoning.String(), "Let me solve this step by step") || strings.Contains(reasoning.String(), "EqQB") {
		t.Errorf("reasoning %q", reasoning.String())
	}
	if text(evs) != "27 * 453 = 12,231" || last(t, evs).Kind != ipc.StreamDone {
		t.Errorf("events %+v", evs)
	}
}

// A body cut short, at an event boundary or inside a line, is an Error,
// never a Done: the deltas that came are kept, the end says what happened.
func TestTruncatedStreamIsAnError(t *testing.T) {
	body := fixture(t, "text.sse")
	stop := bytes.Index(body, []byte("event: message_stop"))
	mid := bytes.Index(body, []byte(`"text": "!"`))
	for name, cut := range map[string][]byte{"before message_stop": body[:stop], "inside a line": body[:mid]} {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, reply{body: cut})
			evs := generate(t, api, nil, ipc.LLMRequest{})
			wantError(t, evs, "ended before message_stop")
			if !strings.HasPrefix(text(evs), "Hello") {
				t.Errorf("the deltas before the cut were lost: %+v", evs)
			}
		})
	}
}

// An `error` event mid-stream (overloaded_error) ends the stream with its
// type and message, after the text that came before it.
func TestErrorEventMidStream(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "overloaded_midstream.sse")})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	wantError(t, evs, "overloaded_error", "Overloaded")
	if text(evs) != "Hello" {
		t.Errorf("events %+v", evs)
	}
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests: output had been streamed, so no retry", n)
	}
}

// A 429 with Retry-After is retried once; a second 429 is an Error with
// Anthropic's message; a wait longer than the cap is not waited out.
func TestRateLimit(t *testing.T) {
	limited := reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: fixture(t, "rate_limit_429.json")}
	t.Run("retried once", func(t *testing.T) {
		api := newFakeAPI(t, limited, reply{body: fixture(t, "text.sse")})
		evs := generate(t, api, nil, ipc.LLMRequest{})
		if text(evs) != "Hello!" || last(t, evs).Kind != ipc.StreamDone {
			t.Fatalf("events %+v", evs)
		}
		if n := len(api.requests()); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
	t.Run("twice", func(t *testing.T) {
		api := newFakeAPI(t, limited)
		evs := generate(t, api, nil, ipc.LLMRequest{})
		wantError(t, evs, "HTTP 429", "rate_limit_error", "per-minute rate limit", "req_011CSHoEeqs5C35K2UUqR7Fy")
		if n := len(api.requests()); n != 2 {
			t.Fatalf("%d requests, want 2 (one retry)", n)
		}
	})
	t.Run("a wait past the cap", func(t *testing.T) {
		long := limited
		long.header = map[string]string{"Retry-After": "3600"}
		api := newFakeAPI(t, long)
		evs := generate(t, api, nil, ipc.LLMRequest{})
		wantError(t, evs, "HTTP 429", "wait 1h0m0s")
		if n := len(api.requests()); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	})
	t.Run("529 overloaded", func(t *testing.T) {
		over := reply{status: 529, body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), header: map[string]string{"Retry-After": "0"}}
		api := newFakeAPI(t, over, reply{body: fixture(t, "text.sse")})
		evs := generate(t, api, nil, ipc.LLMRequest{})
		if last(t, evs).Kind != ipc.StreamDone || len(api.requests()) != 2 {
			t.Fatalf("events %+v after %d requests", evs, len(api.requests()))
		}
	})
}

// A 500 with Anthropic's JSON body is one Error with its type, message and
// request id, and is not retried.
func TestServerErrorWithJSONBody(t *testing.T) {
	api := newFakeAPI(t, reply{status: 500, body: fixture(t, "api_error_500.json")})
	evs := generate(t, api, nil, ipc.LLMRequest{})
	wantError(t, evs, "HTTP 500", "api_error", "Internal server error", "req_011CSHoEeqs5C35K2UUqR7Fz")
	if len(evs) != 1 || len(api.requests()) != 1 {
		t.Fatalf("events %+v, %d requests", evs, len(api.requests()))
	}
	// A body that is not Anthropic's JSON is shown, bounded.
	api = newFakeAPI(t, reply{status: 502, body: []byte("<html>bad gateway</html>"), header: map[string]string{"Content-Type": "text/html"}})
	wantError(t, generate(t, api, nil, ipc.LLMRequest{}), "HTTP 502", "bad gateway")
}

// A connection that goes silent after the first event ends in an Error
// naming stream_timeout_secs, not in a hang until the call's deadline.
func TestStalledConnection(t *testing.T) {
	body := fixture(t, "text.sse")
	first := body[:bytes.Index(body, []byte("event: content_block_start"))]
	api := newFakeAPI(t, reply{body: first, hang: true})
	evs := generate(t, api, map[string]string{"stream_timeout_secs": "0.2"}, ipc.LLMRequest{})
	wantError(t, evs, "no data from the API for 200ms", "stream_timeout_secs")
}

// An event whose data is not JSON, and a line past 1 MiB, each end the
// stream in one readable Error.
func TestMalformedStreams(t *testing.T) {
	body := fixture(t, "text.sse")
	start := body[:bytes.Index(body, []byte("event: ping"))]
	bad := append(append([]byte(nil), start...), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\n\n"...)
	api := newFakeAPI(t, reply{body: bad})
	wantError(t, generate(t, api, nil, ipc.LLMRequest{}), "not valid JSON")

	long := append(append([]byte(nil), start...), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""...)
	long = append(long, bytes.Repeat([]byte("a"), 1<<20+10)...)
	long = append(long, "\"}}\n\n"...)
	api = newFakeAPI(t, reply{body: long, chunk: 64 << 10})
	wantError(t, generate(t, api, nil, ipc.LLMRequest{}), "longer than 1048576 bytes")
}

// Without a key or a base_url nothing is sent; the Error names the command
// that sets the key and the environment variable.
func TestMissingKey(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "text.sse")})
	evs := generate(t, api, map[string]string{"api_key": "", "base_url": ""}, ipc.LLMRequest{})
	wantError(t, evs, "printf %s sk-ant-… | astrid capsule env set astrid-capsule-anthropic api_key", "ANTHROPIC_API_KEY")
	if len(evs) != 1 || len(api.requests()) != 0 {
		t.Fatalf("events %+v, %d requests", evs, len(api.requests()))
	}
	// A local server (base_url set) needs no key: none is sent.
	evs = generate(t, api, map[string]string{"api_key": ""}, ipc.LLMRequest{})
	if last(t, evs).Kind != ipc.StreamDone {
		t.Fatalf("events %+v", evs)
	}
	if h := api.requests()[0].header; h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials sent: %v", h)
	}
}

// A stream faster than the principal's publish budget (here 128 KiB/s,
// 16 KiB of burst) waits for it: the budget refuses publishes, yet every
// delta arrives, in order, and the stream ends in Done rather than a
// dropped event or a silent end.
func TestAStreamFasterThanThePublishBudget(t *testing.T) {
	const n = 5000
	api := newFakeAPI(t, reply{body: manyDeltas(n), chunk: 1 << 16})
	k := sdktest.NewWithPublishRate(t, 128<<10, 16<<10, provider(api, nil))
	evs := k.Generate(anthropic.Provider, ipc.LLMRequest{RequestID: "req-budget", Messages: []ipc.Message{ipc.TextMessage(ipc.RoleUser, "Hello")}})
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
	if deltas != n || last(t, evs).Kind != ipc.StreamDone {
		t.Fatalf("%d deltas, last %+v", deltas, last(t, evs))
	}
}

// Describe over the bus: one entry per model, the configured one first,
// then the other well-known ones, each with its topics, ready with a key,
// not ready (and why, naming the command) without one.
func TestDescribeOverTheBus(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "text.sse")})
	for _, c := range []struct {
		env   map[string]string
		ready bool
	}{{nil, true}, {map[string]string{"api_key": "", "base_url": ""}, false}} {
		k := sdktest.New(t, provider(api, c.env))
		var d struct {
			Providers []struct {
				ID           string   `json:"id"`
				RequestTopic string   `json:"request_topic"`
				StreamTopic  string   `json:"stream_topic"`
				Models       []string `json:"models"`
				Ready        bool     `json:"ready"`
				Why          string   `json:"why"`
			} `json:"providers"`
		}
		if err := json.Unmarshal(k.DescribeLLM(), &d); err != nil || len(d.Providers) != len(anthropic.KnownModels) {
			t.Fatalf("%+v, %v", d, err)
		}
		var ids []string
		for _, e := range d.Providers {
			ids = append(ids, e.ID)
		}
		if want := []string{"claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5"}; !slices.Equal(ids, want) {
			t.Errorf("models %q, want %q", ids, want)
		}
		e := d.Providers[0]
		if e.ID != anthropic.DefaultModel || e.RequestTopic != "llm.v1.request.generate.anthropic" || e.StreamTopic != "llm.v1.stream.anthropic" || e.Models[0] != anthropic.DefaultModel {
			t.Errorf("entry %+v", e)
		}
		if e.Ready != c.ready || (!c.ready && !strings.Contains(e.Why, "astrid capsule env set astrid-capsule-anthropic api_key")) {
			t.Errorf("env %v: ready %v why %q", c.env, e.Ready, e.Why)
		}
	}
}
