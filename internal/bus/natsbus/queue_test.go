package natsbus

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
)

// toolHost is a host with a capsule "tool" intercepting tool.v1.execute.echo,
// counting its calls, and a route telling when the host has caught up.
type toolHost struct {
	d     *dispatch.Dispatcher
	tr    *Transport
	calls atomic.Int64
}

func (h *toolHost) hears(host string, capsules ...string) bool { return h.tr.hears(host, capsules...) }

// hears reports whether t knows host serves exactly capsules.
func (t *Transport) hears(host string, capsules ...string) bool {
	for _, x := range t.Hosts() {
		if x.ID == host {
			return slices.Equal(x.Capsules, capsules)
		}
	}
	return false
}

// toolHosts is host A publishing tool calls and hosts B and C serving
// them, once they have heard each other; publish(n) publishes n calls;
// send(n) does and returns once B and C have handed all of them to their
// dispatchers.
func toolHosts(t *testing.T) (pubT *Transport, b, c *toolHost, publish, send func(n int)) {
	ns, auth := embedded(t)
	pub, pubT := hostDispatcher(t, ns, auth, "hostA", dispatch.Options{})
	must(t, pub.Register(dispatch.CapsuleACL{ID: "caller", Publish: []string{"tool.v1.execute.echo", "sync"}}, nopTarget{}))
	var hosts []*toolHost
	for _, id := range []string{"hostB", "hostC"} {
		d, tr := hostDispatcher(t, ns, auth, id, dispatch.Options{})
		h := &toolHost{d: d, tr: tr}
		must(t, d.Register(dispatch.CapsuleACL{ID: "tool", Subscribe: []string{"tool.v1.execute.echo", "sync"},
			Interceptors: []dispatch.Interceptor{{Pattern: "tool.v1.execute.echo", Handler: "execute"}}},
			targetFunc(func(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
				h.calls.Add(1)
				return dispatch.Verdict{}, nil
			})))
		hosts = append(hosts, h)
	}
	b, c = hosts[0], hosts[1]
	testutil.WaitFor(t, guard, "the hosts to hear each other", func() bool {
		return b.hears("hostC", "tool") && c.hears("hostB", "tool") && b.hears("hostA", "caller") && c.hears("hostA", "caller") &&
			pubT.hears("hostB", "tool") && pubT.hears("hostC", "tool")
	})
	syncRoutes := make([]func(), 2)
	for i, h := range hosts {
		r, err := h.d.Subscribe(dispatch.Caller{Capsule: "tool"}, "sync", false)
		must(t, err)
		syncRoutes[i] = func() { receive(t, r) }
	}
	publish = func(n int) {
		for range n {
			_, err := pub.Publish(dispatch.Caller{Capsule: "caller", Principal: "alice"}, "tool.v1.execute.echo", json.RawMessage(`{}`))
			must(t, err)
		}
	}
	send = func(n int) {
		publish(n)
		must(t, pubT.Flush())
		_, err := pub.Publish(dispatch.Caller{Capsule: "caller"}, "sync", json.RawMessage(`0`))
		must(t, err)
		for _, wait := range syncRoutes {
			wait()
		}
	}
	return pubT, b, c, publish, send
}

// TestOneHostInterceptsPerEnvelope: a capsule loaded on several hosts
// intercepts each envelope on one of them (its NATS queue group), and when
// a host leaves, the others take its share.
func TestOneHostInterceptsPerEnvelope(t *testing.T) {
	_, b, c, publish, send := toolHosts(t)
	total := func() int64 { return b.calls.Load() + c.calls.Load() }

	const n = 64
	send(n)
	testutil.WaitFor(t, guard, "every call to be intercepted", func() bool { return total() >= n })
	testutil.WaitFor(t, guard, "the queues to empty", func() bool { return b.d.Queued("tool")+c.d.Queued("tool") == 0 })
	if got := total(); got != n {
		t.Fatalf("%d interceptions of %d envelopes: want each once", got, n)
	}
	if b.calls.Load() == 0 || c.calls.Load() == 0 {
		t.Fatalf("host B took %d, host C %d: the calls should spread", b.calls.Load(), c.calls.Load())
	}

	// Host C leaves: host B takes every call once it has heard.
	c.tr.Close()
	testutil.WaitFor(t, guard, "host B to hear host C left", func() bool { return !b.hears("hostC", "tool") })
	before := b.calls.Load()
	publish(n)
	testutil.WaitFor(t, guard, "host B to take every call", func() bool { return b.calls.Load()-before == n })
}

// TestPublishingHostKeepsItsOwnCapsule: when the publishing host has the
// capsule too, it ran it itself and no other host does.
func TestPublishingHostKeepsItsOwnCapsule(t *testing.T) {
	ns, auth := embedded(t)
	var localCalls, remoteCalls atomic.Int64
	counting := func(n *atomic.Int64) dispatch.Target {
		return targetFunc(func(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
			n.Add(1)
			return dispatch.Verdict{}, nil
		})
	}
	acl := dispatch.CapsuleACL{ID: "tool", Publish: []string{"tool.v1.execute.echo", "sync"}, Subscribe: []string{"tool.v1.execute.echo", "sync"},
		Interceptors: []dispatch.Interceptor{{Pattern: "tool.v1.execute.echo", Handler: "execute"}}}
	a, aT := hostDispatcher(t, ns, auth, "hostA", dispatch.Options{})
	must(t, a.Register(acl, counting(&localCalls)))
	b, bT := hostDispatcher(t, ns, auth, "hostB", dispatch.Options{})
	must(t, b.Register(acl, counting(&remoteCalls)))
	testutil.WaitFor(t, guard, "host B to hear host A", func() bool {
		for _, h := range bT.Hosts() {
			if h.ID == "hostA" && slices.Equal(h.Capsules, []string{"tool"}) {
				return true
			}
		}
		return false
	})
	sync, err := b.Subscribe(dispatch.Caller{Capsule: "tool"}, "sync", false)
	must(t, err)
	const n = 32
	for range n {
		_, err := a.Publish(dispatch.Caller{Capsule: "tool", Principal: "alice"}, "tool.v1.execute.echo", json.RawMessage(`{}`))
		must(t, err)
	}
	must(t, aT.Flush())
	_, err = a.Publish(dispatch.Caller{Capsule: "tool"}, "sync", json.RawMessage(`0`))
	must(t, err)
	receive(t, sync)
	testutil.WaitFor(t, guard, "the local calls", func() bool { return localCalls.Load() == n })
	testutil.WaitFor(t, guard, "host B's queue to empty", func() bool { return b.Queued("tool") == 0 })
	if got := remoteCalls.Load(); got != 0 {
		t.Fatalf("host B intercepted %d envelopes host A had already handled", got)
	}
	if s := b.Stats(); s.Remote != n+1 {
		t.Fatalf("host B's routes received %d remote envelopes, want %d", s.Remote, n+1)
	}
}
