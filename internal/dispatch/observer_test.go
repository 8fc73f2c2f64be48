package dispatch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// traceObserver records what it is shown and gives every call a child trace
// context, as a tracer does.
type traceObserver struct {
	mu        sync.Mutex
	published []ipc.TraceContext
	invoked   []string
	tookAny   bool
	child     ipc.TraceContext
}

func (o *traceObserver) Publishing(e *ipc.Envelope) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.published = append(o.published, e.Trace())
}

func (o *traceObserver) Invoking(ctx context.Context, inv Invocation) context.Context {
	if inv.Envelope.Trace().Valid() {
		return WithTrace(ctx, o.child)
	}
	return ctx
}

func (o *traceObserver) Invoked(ctx context.Context, inv Invocation, took time.Duration, v Verdict, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.invoked = append(o.invoked, inv.Capsule+"/"+inv.Handler)
	o.tookAny = o.tookAny || took > 0
}

// The trace context a publisher's Caller carries lands in the envelope; an
// observer's Invoking context reaches the handler, whose own publish (made
// with TraceFrom its context, as the host layer does) carries the child's.
func TestObserverCarriesTrace(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	root := ipc.TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{1}, Flags: ipc.TraceFlagSampled}
	obs := &traceObserver{child: ipc.TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: ipc.TraceFlagSampled}}
	d.AddObserver(obs)
	done := make(chan ipc.TraceContext, 1)
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.req"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "mid", Publish: []string{"a.res"}, Subscribe: []string{"a.req"},
		Interceptors: []Interceptor{{Pattern: "a.req", Handler: "on_req"}}},
		targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
			_, err := d.Publish(Caller{Capsule: "mid", Principal: inv.Principal, Continues: true, Trace: TraceFrom(ctx)}, "a.res", []byte(`{}`))
			return Verdict{}, err
		}))
	register(t, d, CapsuleACL{ID: "end", Subscribe: []string{"a.res"},
		Interceptors: []Interceptor{{Pattern: "a.res", Handler: "on_res"}}},
		targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
			done <- inv.Envelope.Trace()
			return Verdict{}, nil
		}))
	if _, err := d.Publish(Caller{Capsule: "pub", Principal: "default", Trace: root}, "a.req", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := testutil.WaitForRecv(t, waitLimit, "the relay to reach its end", done); got != obs.child {
		t.Fatalf("the handler's publish carried %v, want the observer's child %v", got, obs.child)
	}
	d.Close()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.published) != 2 || obs.published[0] != root || obs.published[1] != obs.child {
		t.Fatalf("publishes seen with traces %v, want [root child]", obs.published)
	}
	// Invoked runs when a call returns: mid's call may outlast end's.
	slices.Sort(obs.invoked)
	if !slices.Equal(obs.invoked, []string{"end/on_res", "mid/on_req"}) || !obs.tookAny {
		t.Fatalf("calls seen %v (any took time: %v)", obs.invoked, obs.tookAny)
	}
}

// Without an observer and without a trace, an envelope gets no Provenance:
// tracing off costs no allocation (the publish benchmarks' allocs/op say the
// same of the whole path).
func TestNoTraceNoProvenance(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	got := make(chan *ipc.Envelope, 1)
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.req"}}, continueTarget)
	register(t, d, interceptorACL("end", "a.req", 0), targetFunc(func(ctx context.Context, inv Invocation) (Verdict, error) {
		if TraceFrom(ctx).Valid() {
			t.Error("a call got a trace context with no tracer")
		}
		got <- inv.Envelope
		return Verdict{}, nil
	}))
	if _, err := d.Publish(Caller{Capsule: "pub", Principal: "default"}, "a.req", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if e := <-got; e.Provenance != nil {
		t.Fatalf("an untraced publish allocated a Provenance: %+v", e.Provenance)
	}
}

// Publishing with no observer allocates only what a publish always did: the
// envelope (observers cost nothing while there are none).
func TestPublishAllocsWithoutObserver(t *testing.T) {
	d, _ := newTestDispatcher(t, unlimited)
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"bench.v1.*"}}, continueTarget)
	from := Caller{Capsule: "pub", Principal: "default"}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := d.Publish(from, "bench.v1.event", benchPayload); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("a publish with no observer allocates %.1f times, want at most 1 (the envelope)", allocs)
	}
}
