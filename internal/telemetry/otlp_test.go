package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// The OTLP exporter posts a turn's spans to the collector's /v1/traces in
// OTLP's JSON encoding: hex ids, the parent's id, nanosecond times as
// strings, attributes, an error status.
func TestOTLPExporterPostsJSON(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []otlpTraces
		path string
		ct   string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req otlpTraces
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("collector: %v: %s", err, body)
		}
		mu.Lock()
		got, path, ct = append(got, req), r.URL.Path, r.Header.Get("Content-Type")
		mu.Unlock()
	}))
	defer collector.Close()
	tr, err := New(config.Telemetry{Tracing: "otlp", OTLPEndpoint: collector.URL}, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	prompt := env(ipc.UserPromptTopic, "alice", `{"type":"user_input","text":"hi","session_id":"s1"}`)
	tr.Publishing(prompt)
	inv := dispatch.Invocation{Capsule: "react", Handler: "on_prompt", Envelope: prompt}
	ctx := tr.Invoking(context.Background(), inv)
	tr.Invoked(ctx, inv, time.Millisecond, dispatch.Verdict{Action: dispatch.Deny, Reason: "no"}, nil)
	tr.Publishing(env(ipc.AgentResponseTopic, "alice", `{"type":"agent_response","text":"","is_final":true,"session_id":"s1","outcome":"error"}`))
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if path != "/v1/traces" || ct != "application/json" {
		t.Fatalf("posted to %s as %s", path, ct)
	}
	spans := map[string]otlpSpan{}
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			if len(rs.Resource.Attributes) == 0 || *rs.Resource.Attributes[0].Value.String != "astrid" {
				t.Errorf("resource %+v", rs.Resource)
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = s
				}
			}
		}
	}
	turn, call := spans[SpanTurn], spans[SpanCapsuleInvoke]
	want := prompt.Trace().String()
	if turn.TraceID != want[3:35] || turn.SpanID != want[36:52] || turn.ParentSpanID != "" {
		t.Errorf("turn span %+v, want ids of %s and no parent", turn, want)
	}
	if call.TraceID != turn.TraceID || call.ParentSpanID != turn.SpanID || call.Status == nil || call.Status.Code != 2 {
		t.Errorf("invocation span %+v: not the turn's child with an error status", call)
	}
	if turn.Status == nil || turn.Status.Code != 2 || turn.Start == "" || turn.End < turn.Start {
		t.Errorf("turn span status %+v, times %s..%s", turn.Status, turn.Start, turn.End)
	}
	attrs := map[string]string{}
	for _, a := range call.Attributes {
		if a.Value.String != nil {
			attrs[a.Key] = *a.Value.String
		}
	}
	if attrs[AttrCapsule] != "react" || attrs[AttrHandler] != "on_prompt" || attrs[AttrVerdict] != "deny" {
		t.Errorf("invocation attributes %v", attrs)
	}
}

// A collector that answers an error, or is not there, makes the export
// fail with why (the batcher logs it), within the export's bound.
func TestOTLPExporterCollectorError(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "full", http.StatusServiceUnavailable)
	}))
	defer collector.Close()
	span := tracetest.SpanStub{Name: "x"}.Snapshot()
	x := newOTLPExporter(collector.URL + "/v1/traces")
	if err := x.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("export to a collector answering 503: %v", err)
	}
	collector.Close()
	if err := x.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{span}); err == nil {
		t.Fatal("export to a closed collector succeeded")
	}
	if err := x.ExportSpans(context.Background(), nil); err != nil {
		t.Fatalf("an empty export failed: %v", err)
	}
}
