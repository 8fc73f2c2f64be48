package telemetry

import (
	"context"
	"testing"

	"log/slog"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// BenchmarkInvokeSpan is what tracing adds to one traced interceptor call:
// a capsule invocation span opened and ended, exported to nothing.
func BenchmarkInvokeSpan(b *testing.B) {
	tr := newTracer(sdktraceProcessor(tracetest.NewNoopExporter()), slog.Default())
	defer tr.Shutdown(context.Background())
	e := &ipc.Envelope{Topic: "tool.v1.execute.read_file", Payload: []byte(`{}`), Principal: "default"}
	e.SetTrace(ipc.TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{1}, Flags: ipc.TraceFlagSampled})
	inv := dispatch.Invocation{Capsule: "astrid-capsule-fs", Handler: "tool_execute_read_file", Principal: "default", Envelope: e}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c := tr.Invoking(ctx, inv)
		tr.Invoked(c, inv, 0, dispatch.Verdict{}, nil)
	}
}

func sdktraceProcessor(exp sdktrace.SpanExporter) sdktrace.TracerProviderOption {
	return sdktrace.WithSpanProcessor(newBatcher(exp, slog.Default()))
}
