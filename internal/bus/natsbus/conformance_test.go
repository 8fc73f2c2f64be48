package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// The conformance suite: the bus's and dispatch's behaviours (matchers,
// ACLs, fan-out, chains, drops, fairness, the tool round trip) written once
// against a world of hosts and run on each transport: "memory", where the
// publisher and the receivers share one dispatcher, and "nats", where the
// publisher is on host A and the receivers on host B, one embedded server
// between them.

// world is where a conformance test runs.
type world struct {
	// pub is the publishing host's dispatcher, recv the receiving host's;
	// the same dispatcher in memory.
	pub, recv *dispatch.Dispatcher
	// settle returns once every envelope published on pub so far has been
	// handed to recv's bus and interceptor queues.
	settle func(t testing.TB)
}

// worldOptions configure the receiving host's dispatcher.
type worldOptions struct{ recv dispatch.Options }

func forEachTransport(t *testing.T, o worldOptions, test func(t *testing.T, w *world)) {
	t.Run("memory", func(t *testing.T) {
		d, _ := hostDispatcher(t, nil, nil, "", o.recv)
		test(t, &world{pub: d, recv: d, settle: func(testing.TB) {}})
	})
	t.Run("nats", func(t *testing.T) {
		ns, auth := embedded(t)
		pub, pubT := hostDispatcher(t, ns, auth, "hostA", dispatch.Options{})
		recv, _ := hostDispatcher(t, ns, auth, "hostB", o.recv)
		test(t, &world{pub: pub, recv: recv, settle: barrier(t, pub, pubT, recv)})
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// hostDispatcher is one host: a bus, a dispatcher and, with a server, the
// transport between them and the cluster.
func hostDispatcher(t testing.TB, ns *server.Server, auth *Authenticator, hostID string, opts dispatch.Options) (*dispatch.Dispatcher, *Transport) {
	t.Helper()
	b := bus.New(bus.Options{Logger: quiet()})
	opts.Logger = quiet()
	var tr *Transport
	if ns != nil {
		var d atomic.Pointer[dispatch.Dispatcher]
		var err error
		tr, err = New(Options{HostID: hostID, Server: ns, Auth: auth, Logger: quiet(),
			Deliver:   func(e *ipc.Envelope, runs func(string) bool) error { return d.Load().DeliverRemote(e, runs) },
			Intercept: func(e *ipc.Envelope, runs func(string) bool) error { return d.Load().InterceptRemote(e, runs) }})
		if err != nil {
			t.Fatal(err)
		}
		opts.Transport = tr
		dd := dispatch.New(b, opts)
		d.Store(dd)
		t.Cleanup(func() {
			dd.Close()
			tr.Close()
			b.Close()
		})
		return dd, tr
	}
	d := dispatch.New(b, opts)
	t.Cleanup(func() {
		d.Close()
		b.Close()
	})
	return d, nil
}

// barrier registers a capsule on each host whose only use is to tell when
// the receiving host has caught up: once every publishing connection is
// flushed, the barrier's envelope reaches host B after all of them, on B's
// one receiving connection.
func barrier(t testing.TB, pub *dispatch.Dispatcher, pubT *Transport, recv *dispatch.Dispatcher) func(testing.TB) {
	must(t, pub.Register(dispatch.CapsuleACL{ID: "barrier", Publish: []string{"zz-barrier.sync.now"}}, nopTarget{}))
	must(t, recv.Register(dispatch.CapsuleACL{ID: "barrier-watch", Subscribe: []string{"zz-barrier.sync.now"}}, nopTarget{}))
	route, err := recv.Subscribe(dispatch.Caller{Capsule: "barrier-watch"}, "zz-barrier.sync.now", false)
	must(t, err)
	return func(t testing.TB) {
		t.Helper()
		must(t, pubT.Flush())
		_, err := pub.Publish(dispatch.Caller{Capsule: "barrier"}, "zz-barrier.sync.now", json.RawMessage(`0`))
		must(t, err)
		receive(t, route)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type nopTarget struct{}

func (nopTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, nil
}

type targetFunc func(context.Context, dispatch.Invocation) (dispatch.Verdict, error)

func (f targetFunc) Intercept(ctx context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	return f(ctx, inv)
}

func receive(t testing.TB, r *bus.Route) *ipc.Envelope {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	dl, err := r.Recv(ctx)
	if err != nil {
		t.Fatalf("nothing received on %s: %v", r.Spec().Pattern, err)
	}
	return dl.Envelope
}

// drain is everything r holds now.
func drain(r *bus.Route) []*ipc.Envelope {
	var out []*ipc.Envelope
	for {
		dl, ok := r.TryRecv()
		if !ok {
			return out
		}
		out = append(out, dl.Envelope)
	}
}

func publish(t testing.TB, d *dispatch.Dispatcher, capsule, principal, topic, payload string) {
	t.Helper()
	if _, err := d.Publish(dispatch.Caller{Capsule: capsule, Principal: principal}, topic, json.RawMessage(payload)); err != nil {
		t.Fatalf("publish %s from %s: %v", topic, capsule, err)
	}
}

func TestConformanceMatchers(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"*", "a.*", "x.*"}}, nopTarget{}))
		patterns := []string{"a.*", "a.*.c", "a.b", "*.b", "*"}
		routes := make([]*bus.Route, len(patterns))
		for i, p := range patterns {
			id := "watch" + string(rune('0'+i))
			must(t, w.recv.Register(dispatch.CapsuleACL{ID: id, Subscribe: []string{p}}, nopTarget{}))
			r, err := w.recv.Subscribe(dispatch.Caller{Capsule: id}, p, false)
			must(t, err)
			routes[i] = r
		}
		topics := []string{"a", "b", "a.b", "a.c", "a.b.c", "a.x.c", "x.b", "a.b.c.d"}
		for _, topic := range topics {
			publish(t, w.pub, "pub", "", topic, `1`)
		}
		w.settle(t)
		for i, p := range patterns {
			var got, want []string
			for _, e := range drain(routes[i]) {
				got = append(got, e.Topic)
			}
			for _, topic := range topics {
				if ipc.MatchRoute(p, topic) {
					want = append(want, topic)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("route %q received %q, want %q", p, got, want)
			}
		}
	})
}

func TestConformanceACL(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"a.*"}}, nopTarget{}))
		must(t, w.recv.Register(dispatch.CapsuleACL{ID: "watch", Subscribe: []string{"a.*", "b.*"}}, nopTarget{}))
		if _, err := w.recv.Subscribe(dispatch.Caller{Capsule: "watch"}, "c.*", false); !errors.Is(err, dispatch.ErrDenied) {
			t.Fatalf("subscribe outside [subscribe]: %v", err)
		}
		r, err := w.recv.Subscribe(dispatch.Caller{Capsule: "watch"}, "*.x", false)
		if !errors.Is(err, dispatch.ErrDenied) {
			t.Fatalf("a wildcard where no key has one: %v, %v", r, err)
		}
		route, err := w.recv.Subscribe(dispatch.Caller{Capsule: "watch"}, "b.*", false)
		must(t, err)
		if _, err := w.pub.Publish(dispatch.Caller{Capsule: "pub"}, "b.x", json.RawMessage(`1`)); !errors.Is(err, dispatch.ErrDenied) {
			t.Fatalf("publish outside [publish]: %v", err)
		}
		w.settle(t)
		if got := drain(route); len(got) != 0 {
			t.Fatalf("a refused publish reached %s", got[0].Topic)
		}
	})
}

func TestConformanceFanOut(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"f.*"}}, nopTarget{}))
		var routes []*bus.Route
		var calls atomic.Int64
		counting := targetFunc(func(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
			calls.Add(1)
			return dispatch.Verdict{}, nil
		})
		for _, id := range []string{"r1", "r2", "r3"} {
			must(t, w.recv.Register(dispatch.CapsuleACL{ID: id, Subscribe: []string{"f.*"},
				Interceptors: []dispatch.Interceptor{{Pattern: "f.*", Handler: "h", Priority: 5}}}, counting))
			r, err := w.recv.Subscribe(dispatch.Caller{Capsule: id}, "f.*", false)
			must(t, err)
			routes = append(routes, r)
		}
		const n = 10
		for range n {
			publish(t, w.pub, "pub", "alice", "f.x", `1`)
		}
		w.settle(t)
		for i, r := range routes {
			for range n {
				if e := receive(t, r); e.SourceID != "pub" || e.Principal != "alice" {
					t.Fatalf("route %d received %+v", i, e)
				}
			}
		}
		testutil.WaitFor(t, guard, "every interceptor to run for every event", func() bool { return calls.Load() == 3*n })
	})
}

func TestConformanceChain(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"ev"}}, nopTarget{}))
		var mu sync.Mutex
		var order []string
		seen := map[string]string{}
		done := make(chan struct{}, 4)
		link := func(name string, v dispatch.Verdict) dispatch.Target {
			return targetFunc(func(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
				mu.Lock()
				order = append(order, name)
				seen[name] = string(inv.Payload)
				mu.Unlock()
				done <- struct{}{}
				return v, nil
			})
		}
		for _, l := range []struct {
			id   string
			prio uint32
			v    dispatch.Verdict
		}{
			{"g3", 3, dispatch.Verdict{Action: dispatch.Deny, Reason: "no"}},
			{"g1", 1, dispatch.Verdict{Payload: []byte(`"from g1"`)}},
			{"g4", 4, dispatch.Verdict{}},
			{"g2", 2, dispatch.Verdict{}},
		} {
			must(t, w.recv.Register(dispatch.CapsuleACL{ID: l.id, Subscribe: []string{"ev"},
				Interceptors: []dispatch.Interceptor{{Pattern: "ev", Handler: "h", Priority: l.prio}}}, link(l.id, l.v)))
		}
		must(t, w.recv.Register(dispatch.CapsuleACL{ID: "watch", Subscribe: []string{"ev"}}, nopTarget{}))
		route, err := w.recv.Subscribe(dispatch.Caller{Capsule: "watch"}, "ev", false)
		must(t, err)
		publish(t, w.pub, "pub", "alice", "ev", `"original"`)
		for range 3 {
			<-done
		}
		testutil.WaitFor(t, guard, "the denial to be counted", func() bool { return w.recv.Stats().DenialsByReason["no"] == 1 })
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(order, []string{"g1", "g2", "g3"}) {
			t.Fatalf("chain ran %q, want g1 g2 g3 (g4 after the deny never)", order)
		}
		if seen["g2"] != `"from g1"` {
			t.Fatalf("g2 saw %s, want g1's replacement", seen["g2"])
		}
		if e := receive(t, route); string(e.Payload) != `"original"` {
			t.Fatalf("the route received %s: a chain's answer changed what subscribers get", e.Payload)
		}
	})
}

func TestConformanceQueueDrops(t *testing.T) {
	forEachTransport(t, worldOptions{recv: dispatch.Options{QueueDepth: 2}}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"ev"}}, nopTarget{}))
		entered := make(chan struct{}, 16)
		release := make(chan struct{})
		must(t, w.recv.Register(dispatch.CapsuleACL{ID: "slow", Subscribe: []string{"ev"},
			Interceptors: []dispatch.Interceptor{{Pattern: "ev", Handler: "h"}}},
			targetFunc(func(ctx context.Context, _ dispatch.Invocation) (dispatch.Verdict, error) {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return dispatch.Verdict{}, nil
			})))
		publish(t, w.pub, "pub", "alice", "ev", `0`)
		<-entered // the first call holds the queue's worker
		for i := range 5 {
			publish(t, w.pub, "pub", "alice", "ev", string(rune('1'+i)))
		}
		w.settle(t)
		if s := w.recv.Stats(); s.QueueDrops != 3 {
			t.Fatalf("queue drops %d, want 3 (depth 2, one call running)", s.QueueDrops)
		}
		close(release)
	})
}

func TestConformanceFairness(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "pub", Publish: []string{"ev"}}, nopTarget{}))
		must(t, w.recv.Register(dispatch.CapsuleACL{ID: "watch", Subscribe: []string{"ev"}}, nopTarget{}))
		route, err := w.recv.Subscribe(dispatch.Caller{Capsule: "watch"}, "ev", false)
		must(t, err)
		const heavy = 60
		for range heavy {
			publish(t, w.pub, "pub", "heavy", "ev", `1`)
		}
		publish(t, w.pub, "pub", "light", "ev", `2`)
		w.settle(t)
		// Deficit round robin: the light principal's one message comes in
		// the first rounds, not after the heavy one's backlog.
		for i := range heavy + 1 {
			if e := receive(t, route); e.Principal == "light" {
				if i > 8 {
					t.Fatalf("the light principal's message came %dth", i+1)
				}
				return
			}
		}
		t.Fatal("the light principal's message never came")
	})
}

// TestConformanceToolRoundTrip: a caller publishes a tool request, the
// provider (on the receiving host) answers it from its interceptor, and the
// caller receives the result with the provider as its source and its own
// principal.
func TestConformanceToolRoundTrip(t *testing.T) {
	forEachTransport(t, worldOptions{}, func(t *testing.T, w *world) {
		must(t, w.pub.Register(dispatch.CapsuleACL{ID: "caller",
			Publish: []string{"tool.v1.execute.echo"}, Subscribe: []string{"tool.v1.execute.echo.result"}}, nopTarget{}))
		must(t, w.recv.Register(dispatch.CapsuleACL{ID: "echo",
			Publish: []string{"tool.v1.execute.echo.result"}, Subscribe: []string{"tool.v1.execute.echo"},
			Interceptors: []dispatch.Interceptor{{Pattern: "tool.v1.execute.echo", Handler: "execute"}}},
			targetFunc(func(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
				_, err := w.recv.Publish(dispatch.Caller{Capsule: "echo", Principal: inv.Principal, Continues: true},
					"tool.v1.execute.echo.result", inv.Payload)
				return dispatch.Verdict{Action: dispatch.Final}, err
			})))
		results, err := w.pub.Subscribe(dispatch.Caller{Capsule: "caller", Principal: "alice"}, "tool.v1.execute.echo.result", true)
		must(t, err)
		for i := range 20 {
			payload := `{"call_id":"c` + string(rune('a'+i)) + `"}`
			publish(t, w.pub, "caller", "alice", "tool.v1.execute.echo", payload)
			e := receive(t, results)
			if e.SourceID != "echo" || e.Principal != "alice" || string(e.Payload) != payload {
				t.Fatalf("result %+v (payload %s), want echo's answer for alice with %s", e, e.Payload, payload)
			}
		}
	})
}
