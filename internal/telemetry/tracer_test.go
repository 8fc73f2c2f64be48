package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

func env(topic, principal, payload string) *ipc.Envelope {
	return &ipc.Envelope{Topic: topic, Principal: principal, Payload: []byte(payload)}
}

func TestNewOffIsNil(t *testing.T) {
	for _, mode := range []string{"", "off", "OFF"} {
		tr, err := New(config.Telemetry{Tracing: mode}, t.TempDir(), nil)
		if tr != nil || err != nil {
			t.Fatalf("tracing %q: %v, %v; want no tracer", mode, tr, err)
		}
	}
	if _, err := New(config.Telemetry{Tracing: "jaeger"}, t.TempDir(), nil); err == nil {
		t.Fatal("an unknown exporter was accepted")
	}
	if _, err := New(config.Telemetry{Tracing: "otlp", OTLPEndpoint: "localhost:4318"}, t.TempDir(), nil); err == nil {
		t.Fatal("an endpoint without a scheme was accepted")
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:4318":           "http://localhost:4318/v1/traces",
		"http://localhost:4318/":          "http://localhost:4318/v1/traces",
		"https://c.example:443/otlp/v1/t": "https://c.example:443/otlp/v1/t",
	} {
		if got, err := tracesURL(in); err != nil || got != want {
			t.Errorf("tracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// The stdout exporter writes the spans of a turn to the trace file, as
// JSON, by the time the tracer is shut down.
func TestStdoutExporterWritesTraceFile(t *testing.T) {
	home := t.TempDir()
	tr, err := New(config.Telemetry{Tracing: "stdout", TraceFile: "traces.jsonl"}, home, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	e := env(ipc.UserPromptTopic, "alice", `{"type":"user_input","text":"hi","session_id":"s1"}`)
	tr.Publishing(e)
	if !e.Trace().Valid() {
		t.Fatal("the prompt did not get the turn's trace context")
	}
	// A call on the prompt: its span is made at export time, under the
	// id its publishes were given.
	ctx := tr.Invoking(context.Background(), dispatch.Invocation{Capsule: "react", Handler: "on_prompt", Envelope: e})
	child := dispatch.TraceFrom(ctx)
	if child.TraceID != e.Trace().TraceID || child.SpanID == e.Trace().SpanID {
		t.Fatalf("the call's trace context %v is not a child of %v", child, e.Trace())
	}
	tr.Invoked(ctx, dispatch.Invocation{Capsule: "react", Handler: "on_prompt", Envelope: e}, time.Millisecond, dispatch.Verdict{Action: dispatch.Final}, nil)
	tr.Publishing(env(ipc.AgentResponseTopic, "alice", `{"type":"agent_response","text":"ok","is_final":true,"session_id":"s1","outcome":"answer"}`))
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	spanID := child.String()[36:52]
	for _, want := range []string{`"Name":"astrid.turn"`, `"Name":"astrid.capsule.invoke"`, e.Trace().String()[3:35], `"SpanID":"` + spanID + `"`, `"Value":"final"`} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("trace file lacks %s: %s", want, data)
		}
	}
}

// Pairing is by principal: one principal's answer never ends another's span,
// a cancel request starts no turn, an untraced request opens no span, and an
// answer with no trace context takes the span's it closes.
func TestPairsArePerPrincipal(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewWithExporter(exp, nil)
	defer tr.Shutdown(context.Background())

	tr.Publishing(env(ipc.UserPromptTopic, "alice", `{"type":"user_input","text":"","session_id":"s1","context":{"action":"cancel_turn"}}`))
	tr.Publishing(env(ipc.ToolRequestExecuteTopic, "alice", `{"type":"tool_execute_request","call_id":"c0","tool_name":"x","arguments":{}}`))
	if n := len(tr.pairs.open); n != 0 {
		t.Fatalf("a cancel or an untraced request opened %d spans", n)
	}

	prompt := env(ipc.UserPromptTopic, "alice", `{"type":"user_input","text":"hi","session_id":"s1"}`)
	tr.Publishing(prompt)
	req := env(ipc.ToolRequestExecuteTopic, "alice", `{"type":"tool_execute_request","call_id":"c1","tool_name":"read_file","arguments":{}}`)
	req.SetTrace(prompt.Trace())
	tr.Publishing(req)
	// Mallory answers alice's call and ends alice's turn: neither counts.
	tr.Publishing(env(ipc.ToolExecuteResultTopic, "mallory", `{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false}}`))
	tr.Publishing(env(ipc.AgentResponseTopic, "mallory", `{"type":"agent_response","text":"","is_final":true,"session_id":"s1"}`))
	if got := len(exp.GetSpans()); got != 0 {
		t.Fatalf("another principal's events ended %d spans", got)
	}
	res := env(ipc.ToolExecuteResultTopic, "alice", `{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"no","is_error":true}}`)
	tr.Publishing(res)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != SpanToolCall || spans[0].Status.Code != codes.Error {
		t.Fatalf("after alice's result: %+v", spans)
	}
	if res.Trace() != traceContext(spans[0].SpanContext) {
		t.Fatal("the untraced result did not take the tool span's context")
	}
	tr.Publishing(env(ipc.AgentResponseTopic, "alice", `{"type":"agent_response","text":"","is_final":false,"session_id":"s1"}`))
	tr.Publishing(env(ipc.AgentResponseTopic, "alice", `{"type":"agent_response","text":"","is_final":true,"session_id":"s1","outcome":"timeout"}`))
	spans = exp.GetSpans()
	if len(spans) != 2 || spans[1].Name != SpanTurn || spans[1].Status.Code != codes.Error {
		t.Fatalf("after alice's final response: %+v", spans)
	}
}

// Requests never answered cannot grow the table: past maxOpen the oldest
// span is ended as abandoned; Shutdown ends the rest.
func TestOpenSpansBounded(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewWithExporter(exp, nil)
	parent := ipc.TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{1}, Flags: ipc.TraceFlagSampled}
	for i := range maxOpen + 10 {
		e := env(ipc.ToolRequestExecuteTopic, "p", fmt.Sprintf(`{"type":"tool_execute_request","call_id":"c%d","tool_name":"t","arguments":{}}`, i))
		e.SetTrace(parent)
		tr.Publishing(e)
	}
	if n := len(tr.pairs.open); n != maxOpen {
		t.Fatalf("%d spans open, want the bound %d", n, maxOpen)
	}
	spans := exp.GetSpans()
	if len(spans) != 10 || !strings.HasPrefix(spans[0].Status.Description, "abandoned") || !hasAttr(spans[0], AttrCallID, "c0") {
		t.Fatalf("%d spans ended; the first %+v", len(spans), spans[0])
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tr.pairs.pending(kindTool) {
		t.Fatal("spans still open after Shutdown")
	}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	for _, a := range s.Attributes {
		if string(a.Key) == key && a.Value.AsString() == value {
			return true
		}
	}
	return false
}

// The payload scan takes whatever a capsule publishes without panicking.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"type":"tool_execute_request","call_id":"c1","tool_name":"x","context":{"turn_id":"t"},"result":{"is_error":true},"event":"Done"}`))
	f.Add([]byte(`{"call_id":1,"context":[],"result":"x","event":{"Error":"e"}}`))
	f.Add([]byte(`{"call_id":"\ud800"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		_ = scan(payload, ^want(0))
	})
}

// A collector that is not there costs warnings, never a hung shutdown: the
// export gives up within its bound.
func TestUnreachableCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	tr, err := New(config.Telemetry{Tracing: "otlp", OTLPEndpoint: "http://" + addr}, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("an unreachable collector failed the boot: %v", err)
	}
	e := env(ipc.UserPromptTopic, "alice", `{"type":"user_input","text":"hi","session_id":"s1"}`)
	tr.Publishing(e)
	tr.Publishing(env(ipc.AgentResponseTopic, "alice", `{"type":"agent_response","text":"ok","is_final":true,"session_id":"s1"}`))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = tr.Shutdown(ctx) // an error (the collector refused), but it returns
	if ctx.Err() != nil {
		t.Fatal("shutdown waited out its whole context")
	}
}
