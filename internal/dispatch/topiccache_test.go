package dispatch

import (
	"fmt"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
)

// TestRememberedTopicsFollowRouteAndInterceptorChanges: a capsule's
// remembered resolution of a topic never outlives the routes and
// interceptors it was made from. Each step publishes a topic the capsule has
// just published (a cache hit) after the routing changed.
func TestRememberedTopicsFollowRouteAndInterceptorChanges(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"app.v1.*"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "sub", Subscribe: []string{"app.v1.*"}}, continueTarget)
	from := Caller{Capsule: "pub", Principal: "alice"}
	const topic = "app.v1.event"

	if res := mustPublish(t, d, from, topic, `{}`); res.Routes != 0 || res.Interceptors != 0 {
		t.Fatalf("before any subscriber: %+v", res)
	}
	// A route added after the topic was remembered receives the next one.
	r, err := d.Subscribe(Caller{Capsule: "sub"}, topic, false)
	if err != nil {
		t.Fatal(err)
	}
	if res := mustPublish(t, d, from, topic, `{"n":1}`); res.Routes != 1 {
		t.Fatalf("after Subscribe: %+v, want one route", res)
	}
	if got := string(recvOne(t, r).Envelope.Payload); got != `{"n":1}` {
		t.Fatalf("route received %s", got)
	}
	// A route closed since is not delivered to.
	r.Close()
	if res := mustPublish(t, d, from, topic, `{}`); res.Routes != 0 {
		t.Fatalf("after Close: %+v, want no route", res)
	}
	// An interceptor registered since is invoked; unregistered, it is not.
	rec := newRecorder()
	register(t, d, CapsuleACL{ID: "icpt", Subscribe: []string{"app.v1.*"}, Interceptors: []Interceptor{{Pattern: topic, Handler: "h"}}}, rec.cont())
	if res := mustPublish(t, d, from, topic, `{"n":2}`); res.Interceptors != 1 {
		t.Fatalf("after Register: %+v, want one interceptor", res)
	}
	if c := rec.wait(t, 1)[0]; c.payload != `{"n":2}` {
		t.Fatalf("interceptor got %+v", c)
	}
	d.Unregister("icpt")
	if res := mustPublish(t, d, from, topic, `{}`); res.Interceptors != 0 {
		t.Fatalf("after Unregister: %+v, want no interceptor", res)
	}
	rec.quiet(t, d)
}

// TestMoreTopicsThanTheCacheHolds cycles through twice as many topics as a
// capsule remembers, each with its own route: every publish reaches exactly
// its own route, whether its entry was remembered, evicted or replaced.
func TestMoreTopicsThanTheCacheHolds(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"app.v1.*"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "sub", Subscribe: []string{"app.v1.*"}}, continueTarget)
	from := Caller{Capsule: "pub", Principal: "alice"}
	n := 2 * topicCacheSize
	routes := make([]*bus.Route, n)
	for round := range 3 {
		for i := range n {
			topic := fmt.Sprintf("app.v1.t%d", i)
			if round == 0 {
				r, err := d.Subscribe(Caller{Capsule: "sub"}, topic, false)
				if err != nil {
					t.Fatal(err)
				}
				routes[i] = r
				defer r.Close()
				mustPublish(t, d, from, topic, fmt.Sprintf(`{"round":%d}`, round))
				if got, want := string(recvOne(t, r).Envelope.Payload), fmt.Sprintf(`{"round":%d}`, round); got != want {
					t.Fatalf("%s received %s, want %s", topic, got, want)
				}
				continue
			}
			payload := fmt.Sprintf(`{"round":%d}`, round)
			if res := mustPublish(t, d, from, topic, payload); res.Routes != 1 {
				t.Fatalf("round %d %s: %+v, want one route", round, topic, res)
			}
			if got := string(recvOne(t, routes[i]).Envelope.Payload); got != payload {
				t.Fatalf("round %d: %s received %s, want %s", round, topic, got, payload)
			}
		}
	}
}
