package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/testutil"
)

// waitLimit bounds every wait in these tests so that a bug shows up as a
// failure instead of a hung test binary. It is never a speed assertion.
const waitLimit = 10 * time.Second

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) nanos() int64 { return c.now().UnixNano() }

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTestDispatcher returns a dispatcher on a real bus; both are closed when
// the test ends.
func newTestDispatcher(t testing.TB, opts Options) (*Dispatcher, *bus.Bus) {
	t.Helper()
	b := bus.New(bus.Options{Logger: quietLogger()})
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	d := New(b, opts)
	t.Cleanup(func() {
		d.Close()
		b.Close()
	})
	return d, b
}

// targetFunc adapts a function to Target.
type targetFunc func(ctx context.Context, inv Invocation) (Verdict, error)

func (f targetFunc) Intercept(ctx context.Context, inv Invocation) (Verdict, error) {
	return f(ctx, inv)
}

// continueTarget answers Continue and does nothing else.
var continueTarget = targetFunc(func(context.Context, Invocation) (Verdict, error) {
	return Verdict{}, nil
})

// call is one recorded interceptor invocation.
type call struct {
	capsule, handler, principal, payload string
}

// recorder collects calls from every target built with answer, in the order
// they happened, and signals each on calls.
type recorder struct {
	mu    sync.Mutex
	log   []call
	calls chan call
}

func newRecorder() *recorder { return &recorder{calls: make(chan call, 4096)} }

// answer returns a Target recording its calls and answering with fn.
func (r *recorder) answer(fn func(Invocation) (Verdict, error)) Target {
	return targetFunc(func(_ context.Context, inv Invocation) (Verdict, error) {
		c := call{capsule: inv.Capsule, handler: inv.Handler, principal: inv.Principal, payload: string(inv.Payload)}
		r.mu.Lock()
		r.log = append(r.log, c)
		r.mu.Unlock()
		defer func() { r.calls <- c }() // also when fn panics
		return fn(inv)
	})
}

func (r *recorder) cont() Target {
	return r.answer(func(Invocation) (Verdict, error) { return Verdict{}, nil })
}

// wait returns the next n calls, failing the test if they do not come.
func (r *recorder) wait(t testing.TB, n int) []call {
	t.Helper()
	out := make([]call, 0, n)
	for len(out) < n {
		out = append(out, testutil.WaitForRecv(t, waitLimit, fmt.Sprintf("interceptor call %d of %d (after %v)", len(out)+1, n, out), r.calls))
	}
	return out
}

// quiet asserts no further call is recorded once the dispatcher has gone
// idle; settle makes sure anything in flight has had its chance.
func (r *recorder) quiet(t testing.TB, d *Dispatcher) {
	t.Helper()
	settle(t, d)
	select {
	case c := <-r.calls:
		t.Fatalf("unexpected interceptor call %+v", c)
	default:
	}
}

// settle waits until no queue of d holds work or runs a call.
func settle(t testing.TB, d *Dispatcher) {
	t.Helper()
	testutil.WaitFor(t, waitLimit, "the dispatcher to go idle", func() bool { return !d.busy() })
}

// busy reports whether any queue has pending work or a worker mid-call.
func (d *Dispatcher) busy() bool {
	for _, c := range *d.capsules.Load() {
		c.mu.Lock()
		for _, q := range c.queues {
			if q.n > 0 || q.inCall {
				c.mu.Unlock()
				return true
			}
		}
		c.mu.Unlock()
	}
	return false
}

// queueCount is the number of live (capsule, principal) queues of id.
func (d *Dispatcher) queueCount(id string) int {
	c := (*d.capsules.Load())[id]
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queues)
}

func register(t testing.TB, d *Dispatcher, acl CapsuleACL, tg Target) {
	t.Helper()
	if err := d.Register(acl, tg); err != nil {
		t.Fatalf("Register(%s): %v", acl.ID, err)
	}
}

func mustPublish(t testing.TB, d *Dispatcher, from Caller, topic, payload string) Result {
	t.Helper()
	res, err := d.Publish(from, topic, json.RawMessage(payload))
	if err != nil {
		t.Fatalf("Publish(%s, %s): %v", from.Capsule, topic, err)
	}
	return res
}

func recvOne(t testing.TB, r *bus.Route) bus.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	dl, err := r.Recv(ctx)
	if err != nil {
		t.Fatalf("Recv on %s: %v", r.Spec().Pattern, err)
	}
	return dl
}
