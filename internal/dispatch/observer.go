package dispatch

import (
	"context"
	"slices"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// An Observer is told of every publish and every interceptor call, for
// tracing and metrics (internal/telemetry, internal/metrics). The dispatcher
// calls no observer while it has none (AddObserver was never called): one
// atomic load per publish and per call is all that costs, with no
// allocation (BenchmarkObserverOff).
//
// Observers run on the publishing or calling goroutine, holding no lock of
// the dispatcher's: they must be quick, must not block, and must not
// publish.
type Observer interface {
	// Publishing sees an envelope the dispatcher is about to hand to the
	// bus, before any receiver can see it. It may set the envelope's trace
	// context (ipc.Envelope.SetTrace) and must change nothing else.
	Publishing(e *ipc.Envelope)
	// Invoking sees an interceptor call about to be made; the context it
	// returns is the one the call gets (a tracer puts its span there, and
	// WithTrace the span's context for the call's publishes).
	Invoking(ctx context.Context, inv Invocation) context.Context
	// Invoked sees the call's answer and how long it took. ctx is the
	// context Invoking returned.
	Invoked(ctx context.Context, inv Invocation, took time.Duration, v Verdict, err error)
}

// AddObserver adds o to the observers every publish and call is shown to.
// There is no removal: an observer lives as long as the dispatcher.
func (d *Dispatcher) AddObserver(o Observer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var next []Observer
	if cur := d.observers.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, o)
	d.observers.Store(&next)
}

// observePublishing shows e to the observers, if any.
func (d *Dispatcher) observePublishing(e *ipc.Envelope) {
	if obs := d.observers.Load(); obs != nil {
		for _, o := range *obs {
			o.Publishing(e)
		}
	}
}

type traceKey struct{}

// WithTrace returns ctx carrying t, the trace context an interceptor call's
// publishes are to carry (the host layer reads it with TraceFrom into the
// call's Caller.Trace). A tracer's Invoking sets it; nothing else should.
func WithTrace(ctx context.Context, t ipc.TraceContext) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// TraceFrom returns the trace context ctx carries, or the zero one.
func TraceFrom(ctx context.Context) ipc.TraceContext {
	t, _ := ctx.Value(traceKey{}).(ipc.TraceContext)
	return t
}

type scopeKey struct{}

// withScope returns ctx carrying the scope of the event an interceptor call
// handles (ipc.Envelope.Scope); ctx itself when there is none, so an
// unscoped call costs nothing.
func withScope(ctx context.Context, scope uint64) context.Context {
	if scope == 0 {
		return ctx
	}
	return context.WithValue(ctx, scopeKey{}, scope)
}

// ScopeFrom returns the scope of the event an interceptor call's context
// was made for, or 0. The host layer reads it into the call's Caller.Scope,
// so that the call's publishes stay in the request's scope.
func ScopeFrom(ctx context.Context) uint64 {
	s, _ := ctx.Value(scopeKey{}).(uint64)
	return s
}
