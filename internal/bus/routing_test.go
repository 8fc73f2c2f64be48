package bus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func TestPublishReachesMatchingRoutes(t *testing.T) {
	patterns := []string{
		"a.b.c",                    // exact
		"a.b.*",                    // trailing wildcard: one or more
		"a.*.c",                    // middle wildcard: exactly one
		"*",                        // one segment, no literal
		"*.*",                      // two segments, or more (trailing)
		"*.b.c",                    // literal only after the first segment
		"tool.v1.execute.*.result", // seed 000
		"astrid.v1.request.*",
	}
	cases := []struct {
		topic string
		want  []string
	}{
		{"a.b.c", []string{"a.b.c", "a.b.*", "a.*.c", "*.*", "*.b.c"}},
		{"a.b", []string{"*.*"}},
		{"a.b.c.d", []string{"a.b.*", "*.*"}},
		{"a", []string{"*"}},
		{"x.b.c", []string{"*.*", "*.b.c"}},
		{"tool.v1.execute.write_file.result", []string{"*.*", "tool.v1.execute.*.result"}},
		{"tool.v1.execute.result", []string{"*.*"}},
		{"tool.v1.execute.foo.bar.result", []string{"*.*"}},
		{"astrid.v1.request", []string{"*.*"}},
		{"astrid.v1.request.x.y", []string{"*.*", "astrid.v1.request.*"}},
	}
	b := newTestBus(t, Options{})
	routes := make([]*Route, len(patterns))
	for i, p := range patterns {
		routes[i] = subscribe(t, b, RouteSpec{Owner: "c", Pattern: p})
	}
	for _, c := range cases {
		t.Run(c.topic, func(t *testing.T) {
			n := publish(t, b, env(c.topic, ""))
			var got []string
			for _, r := range routes {
				for _, d := range drain(r) {
					if d.Envelope.Topic != c.topic {
						t.Errorf("route %q got %q", r.Spec().Pattern, d.Envelope.Topic)
					}
					got = append(got, r.Spec().Pattern)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) || n != len(want) {
				t.Errorf("Publish(%q) = %d, routes %q; want %d, %q", c.topic, n, got, len(want), want)
			}
		})
	}
}

// TestIndexAgreesWithMatcher checks the route index against ipc.MatchRoute
// over random patterns and topics drawn from a small alphabet, so that
// shared literals, wildcards at every position and depth mismatches occur.
func TestIndexAgreesWithMatcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "tool", "v1"}
	randomPath := func(wild bool) string {
		n := 1 + rng.IntN(5)
		s := ""
		for i := 0; i < n; i++ {
			w := words[rng.IntN(len(words))]
			if wild && rng.IntN(3) == 0 {
				w = "*"
			}
			if i > 0 {
				s += "."
			}
			s += w
		}
		return s
	}
	b := newTestBus(t, Options{})
	var routes []*Route
	for i := 0; i < 300; i++ {
		routes = append(routes, subscribe(t, b, RouteSpec{Owner: fmt.Sprint(i), Pattern: randomPath(true)}))
	}
	for i := 0; i < 2000; i++ {
		topic := randomPath(false)
		want := 0
		for _, r := range routes {
			if ipc.MatchRoute(r.Spec().Pattern, topic) {
				want++
			}
		}
		if got := publish(t, b, env(topic, "")); got != want {
			t.Fatalf("Publish(%q) reached %d routes, MatchRoute says %d", topic, got, want)
		}
		for _, r := range routes {
			ds := drain(r)
			if match := ipc.MatchRoute(r.Spec().Pattern, topic); match != (len(ds) == 1) || len(ds) > 1 {
				t.Fatalf("route %q got %d copies of %q; MatchRoute = %v", r.Spec().Pattern, len(ds), topic, match)
			}
		}
	}
}

func TestPublishWithoutRoutesReturnsZero(t *testing.T) {
	b := newTestBus(t, Options{})
	if n := publish(t, b, env("nobody.listens", "")); n != 0 {
		t.Fatalf("Publish = %d, want 0", n)
	}
	if s := b.Stats(); s.Published != 1 || s.Unrouted != 1 {
		t.Fatalf("Stats = %+v, want 1 published and 1 unrouted", s)
	}
}

// Upstream routed_demux_no_broadcast_storm and
// routed_receiver_isolation_between_subscriptions: each route gets its own copy.
func TestEachRouteGetsItsOwnCopy(t *testing.T) {
	b := newTestBus(t, Options{})
	var routes []*Route
	for i := 0; i < 5; i++ {
		// The same owner and pattern twice still makes two routes.
		routes = append(routes, subscribe(t, b, RouteSpec{Owner: "same", Pattern: "t.*"}))
	}
	for i := 0; i < 10; i++ {
		if n := publish(t, b, env(fmt.Sprintf("t.e%d", i), "")); n != 5 {
			t.Fatalf("Publish reached %d routes, want 5", n)
		}
	}
	for _, r := range routes {
		if got := len(drain(r)); got != 10 {
			t.Errorf("route %d got %d, want 10", r.ID(), got)
		}
	}
	if ids := []uint64{routes[0].ID(), routes[1].ID()}; ids[0] != 1 || ids[1] != 2 {
		t.Errorf("route ids = %v, want 1, 2 (from 1, per subscription)", ids)
	}
}

func TestScopedRoutes(t *testing.T) {
	// Upstream cross_principal_audit_isolation_at_bus and
	// unscoped_route_unchanged_regression: 7 alice, 4 bob, 1 system.
	counts := map[string]int{"alice": 7, "bob": 4, "": 1}
	cases := []struct {
		name       string
		spec       RouteSpec
		want       int
		principals int
	}{
		{"unscoped gets everyone", RouteSpec{Pattern: "audit.*"}, 12, 3},
		{"scoped to alice", RouteSpec{Pattern: "audit.*", Principal: "alice", Scoped: true}, 7, 1},
		{"scoped to system", RouteSpec{Pattern: "audit.*", Principal: "", Scoped: true}, 1, 1},
		{"scoped to nobody active", RouteSpec{Pattern: "audit.*", Principal: "carol", Scoped: true}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newTestBus(t, Options{})
			r := subscribe(t, b, c.spec)
			for p, n := range counts {
				for i := 0; i < n; i++ {
					publish(t, b, env("audit.x", p))
				}
			}
			st := b.Stats().Routes[0]
			if st.Principals != c.principals || st.Enqueued != uint64(c.want) {
				t.Errorf("route stats = %+v, want %d principals, %d enqueued", st, c.principals, c.want)
			}
			ds := drain(r)
			if len(ds) != c.want {
				t.Fatalf("got %d, want %d", len(ds), c.want)
			}
			for _, d := range ds {
				if c.spec.Scoped && d.Envelope.Principal != c.spec.Principal {
					t.Errorf("scoped route for %q got %q's event", c.spec.Principal, d.Envelope.Principal)
				}
			}
		})
	}
}

// Upstream scoped_drop_no_spurious_notify: a refused event does not ring the
// doorbell of a parked receiver.
func TestScopedRefusalDoesNotWakeReceiver(t *testing.T) {
	b := newTestBus(t, Options{})
	r := subscribe(t, b, RouteSpec{Pattern: "t.x", Principal: "alice", Scoped: true})
	if _, ok, _ := r.take(true); ok { // park: the next enqueue would ring
		t.Fatal("empty route delivered")
	}
	for i := 0; i < 50; i++ {
		publish(t, b, env("t.x", "bob"))
	}
	select {
	case <-r.doorbell:
		t.Fatal("bob's events rang alice's doorbell")
	default:
	}
	publish(t, b, env("t.x", "alice"))
	select {
	case <-r.doorbell:
	default:
		t.Fatal("alice's event did not ring the parked receiver's doorbell")
	}
}

// A route's Accept sees each envelope its pattern and scope admit; what it
// refuses is neither queued nor counted on the route, and a parked receiver
// is not woken for it (one principal's many clients, each matching its own
// turn, issue 38).
func TestAcceptFiltersBeforeTheQueue(t *testing.T) {
	b := newTestBus(t, Options{})
	var seen []string
	mine := func(e *ipc.Envelope) bool {
		seen = append(seen, e.Topic)
		return strings.Contains(string(e.Payload), `"turn":"mine"`)
	}
	r := subscribe(t, b, RouteSpec{Pattern: "agent.*", Principal: "alice", Scoped: true, Accept: mine})
	other := subscribe(t, b, RouteSpec{Pattern: "agent.*"})
	if _, ok, _ := r.take(true); ok { // park: the next enqueue would ring
		t.Fatal("empty route delivered")
	}
	for i := 0; i < 20; i++ {
		e := env("agent.x", "alice")
		e.Payload = []byte(`{"turn":"theirs"}`)
		publish(t, b, e)
	}
	publish(t, b, env("agent.x", "bob")) // out of scope: Accept is not asked
	select {
	case <-r.doorbell:
		t.Fatal("refused events rang the receiver's doorbell")
	default:
	}
	if len(seen) != 20 {
		t.Fatalf("Accept saw %d envelopes, want alice's 20", len(seen))
	}
	e := env("agent.x", "alice")
	e.Payload = []byte(`{"turn":"mine"}`)
	publish(t, b, e)
	ds := drain(r)
	if len(ds) != 1 || string(ds[0].Envelope.Payload) != `{"turn":"mine"}` || ds[0].Lost != 0 {
		t.Fatalf("route got %+v, want only the matching envelope, nothing lost", ds)
	}
	for _, st := range b.Stats().Routes {
		if st.ID == r.ID() && st.Enqueued != 1 {
			t.Errorf("filtered route enqueued %d, want 1", st.Enqueued)
		}
	}
	if n := len(drain(other)); n != 22 {
		t.Errorf("the unfiltered route got %d, want all 22", n)
	}
}

func TestSubscribeRejectsInvalidPattern(t *testing.T) {
	b := newTestBus(t, Options{})
	for _, p := range []string{"", "a..b", "a.>", "$sys.x", "a b"} {
		if _, err := b.Subscribe(RouteSpec{Owner: "c", Pattern: p}); err == nil {
			t.Errorf("Subscribe(%q) succeeded", p)
		}
	}
}
