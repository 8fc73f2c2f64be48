package telemetry

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Capsule invocation spans are most of a turn's spans (~60 of ~70), and
// making one with the SDK costs a few µs and ~2 KiB on the calling
// goroutine. So a call records only what its span needs (invocation: one
// small allocation) and its span id, chosen at once so that the call's
// publishes can name it as their parent; the span itself is made later, by
// the exporting goroutine just before each export (materialize), with the
// recorded id and times (docs/rationale/observability.md: "Why are invocation spans made
// after the call?").

// invocation is a finished (or running) interceptor call's span to be.
type invocation struct {
	parent     trace.SpanContext
	id         trace.SpanID
	start, end time.Time
	capsule    string
	handler    string
	topic      string
	verdict    string // "" for continue
	status     codes.Code
	desc       string
}

// deferred holds the invocations waiting for the next export.
type deferred struct {
	mu      sync.Mutex
	calls   []*invocation
	dropped int
}

func (d *deferred) add(c *invocation) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.calls) >= maxQueued {
		d.dropped++
		return false
	}
	d.calls = append(d.calls, c)
	return true
}

func (d *deferred) take() ([]*invocation, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	calls, dropped := d.calls, d.dropped
	d.calls, d.dropped = nil, 0
	return calls, dropped
}

// materialize makes the spans of the invocations recorded so far.
func (t *Tracer) materialize() {
	calls, dropped := t.deferred.take()
	if dropped > 0 {
		t.log.Warn("telemetry: invocation spans dropped, the exporter did not keep up", "dropped", dropped)
	}
	for _, c := range calls {
		t.makeInvocationSpan(c)
	}
}

func (t *Tracer) makeInvocationSpan(c *invocation) {
	ctx := trace.ContextWithSpanContext(context.WithValue(context.Background(), presetSpanID{}, c.id), c.parent)
	_, s := t.tracer.Start(ctx, SpanCapsuleInvoke, trace.WithTimestamp(c.start), trace.WithAttributes(
		attribute.String(AttrCapsule, c.capsule), attribute.String(AttrHandler, c.handler), attribute.String(AttrTopic, c.topic)))
	if c.verdict != "" {
		s.SetAttributes(attribute.String(AttrVerdict, c.verdict))
	}
	if c.status != codes.Unset {
		s.SetStatus(c.status, c.desc)
	}
	s.End(trace.WithTimestamp(c.end))
}

// presetSpanID carries, in the context given to Start, the span id an
// invocation span was promised.
type presetSpanID struct{}

// idGenerator is the SDK's ID generator, honouring a preset span id; its
// random ids come from math/rand/v2's per-thread generator (the SDK's
// default takes a mutex per id).
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		a, b := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			tid[i], tid[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
		}
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(presetSpanID{}).(trace.SpanID); ok {
		return id
	}
	return newSpanID()
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		a := rand.Uint64()
		for i := range 8 {
			sid[i] = byte(a >> (8 * i))
		}
	}
	return sid
}
