package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Batching: ended spans are appended to a buffer under a mutex and exported
// every batchInterval, or as soon as batchSize are waiting. Unlike the SDK's
// BatchSpanProcessor, whose queue is a channel that wakes its goroutine for
// every span, ending a span wakes nothing: on a 2-core VM a goroutine wake
// costs tens of µs, and a turn ends ~40 spans (docs/rationale/observability.md: "Why does
// the tracer batch spans itself?").
const (
	batchInterval = time.Second
	batchSize     = 512
	// maxQueued bounds the spans waiting for an exporter that is slow or
	// gone; past it spans are dropped (counted, logged once per export).
	maxQueued = 8192
)

// batcher is an sdktrace.SpanProcessor that exports in batches.
type batcher struct {
	exp sdktrace.SpanExporter
	log *slog.Logger
	// prepare, if set, runs before each export, on the exporting
	// goroutine: the tracer makes its deferred invocation spans there.
	prepare func()

	mu      sync.Mutex
	buf     []sdktrace.ReadOnlySpan
	dropped int

	exportMu sync.Mutex // one export at a time, in order
	full     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	closed   sync.Once
}

func newBatcher(exp sdktrace.SpanExporter, log *slog.Logger) *batcher {
	b := &batcher{exp: exp, log: log, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues s; it wakes the exporting goroutine only when a whole batch
// is waiting.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if len(b.buf) >= maxQueued {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.buf = append(b.buf, s)
	n := len(b.buf)
	b.mu.Unlock()
	if n == batchSize {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

func (b *batcher) run() {
	defer close(b.done)
	t := time.NewTicker(batchInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.full:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*exportTimeout)
		_ = b.export(ctx)
		cancel()
	}
}

// export hands what is queued to the exporter.
func (b *batcher) export(ctx context.Context) error {
	b.exportMu.Lock()
	defer b.exportMu.Unlock()
	if b.prepare != nil {
		b.prepare()
	}
	b.mu.Lock()
	spans, dropped := b.buf, b.dropped
	b.buf, b.dropped = nil, 0
	b.mu.Unlock()
	if dropped > 0 {
		b.log.Warn("telemetry: spans dropped, the exporter did not keep up", "dropped", dropped)
	}
	if len(spans) == 0 {
		return nil
	}
	err := b.exp.ExportSpans(ctx, spans)
	if err != nil {
		b.log.Warn("telemetry: spans not exported", "spans", len(spans), "err", err)
	}
	return err
}

// ForceFlush exports what is queued now.
func (b *batcher) ForceFlush(ctx context.Context) error { return b.export(ctx) }

// Shutdown stops the exporting goroutine, exports what is left and shuts
// the exporter down; ctx bounds both.
func (b *batcher) Shutdown(ctx context.Context) error {
	var err error
	b.closed.Do(func() {
		close(b.stop)
		<-b.done
		_ = b.export(ctx)
		err = b.exp.Shutdown(ctx)
	})
	return err
}
