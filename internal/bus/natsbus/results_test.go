package natsbus

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// TestReplyGoesToTheHostHoldingTheRequest: a reply from another host is
// intercepted here by every interceptor while this host holds the request
// it answers (it published the request to another host and has seen no
// reply to it; for the request's principal and reply address only);
// otherwise only by a capsule the election picks and no other host serves.
// The first reply ends the request. Any envelope that is no reply keeps the
// election.
func TestReplyGoesToTheHostHoldingTheRequest(t *testing.T) {
	ns, auth := embedded(t)
	a, _ := callerHost(t, ns, auth, "hostA")
	providerHost(t, ns, auth, "hostB")
	testutil.WaitFor(t, guard, "host A to hear the provider", func() bool { return hearsProvider(a, "hostB") })

	reply := func(topic, principal, id string) *ipc.Envelope {
		e := &ipc.Envelope{Topic: topic, Payload: []byte(`"x"`), SourceID: "tool", Principal: principal}
		if id != "" {
			e.SetReply(id)
		}
		return e
	}
	// The election picks "router" and "audit" here, not "other".
	elected := func(capsule string) bool { return capsule != "other" }
	type runsOf struct{ router, audit, other bool }
	check := func(name string, e *ipc.Envelope, want runsOf) {
		t.Helper()
		runs := a.replyRuns(e, elected)
		if got := (runsOf{runs("router"), runs("audit"), runs("other")}); got != want {
			t.Errorf("%s: runs %+v, want %+v", name, got, want)
		}
	}
	notHeld := []struct {
		name string
		e    *ipc.Envelope
	}{
		{"a reply to another request", reply(echoReplyTo, "alice", "other")},
		{"the held request's id for another principal", reply(echoReplyTo, "bob", "held")},
		{"the held request's id on another address", reply("mesh.v1.ask.reply", "alice", "held")},
	}
	notReplies := []struct {
		name string
		e    *ipc.Envelope
	}{
		{"a plain envelope on the reply address", reply(echoReplyTo, "alice", "")},
		{"another plain envelope", reply("mesh.result", "alice", "")},
	}
	for _, tc := range append(notHeld, notReplies...) {
		// No other host serves a router: this host's runs as elected.
		check(tc.name+", the router only here", tc.e, runsOf{true, true, false})
	}

	// Host C runs the router too: a reply this host does not hold is C's
	// to take, whatever the election says here.
	callerHost(t, ns, auth, "hostC")
	testutil.WaitFor(t, guard, "host A to hear host C's router", func() bool {
		return slices.ContainsFunc(a.Hosts(), func(h HostInfo) bool { return h.ID == "hostC" && slices.Contains(h.Capsules, "router") })
	})
	for _, tc := range notHeld {
		check(tc.name+", a router on C too", tc.e, runsOf{false, true, false})
	}
	for _, tc := range notReplies {
		check(tc.name+" keeps the election", tc.e, runsOf{true, true, false})
	}

	call(a, "held", 1)
	if a.RemoteRequests() != 1 {
		t.Fatal("the request is not tracked")
	}
	held := reply(echoReplyTo, "alice", "held")
	check("the held request's reply, a router on C too", held, runsOf{true, true, true})
	if a.RemoteRequests() != 0 {
		t.Fatal("the reply did not end the request")
	}
	// Answered, the request is no longer held: a second reply (a replay,
	// or a handler answering twice) is not the router's here.
	check("a reply to a request already answered", held, runsOf{false, true, false})
}

// TestReplyRunsWithoutRequestTracking: a transport that tracks no requests
// (no RequestLost) keeps the election for replies too.
func TestReplyRunsWithoutRequestTracking(t *testing.T) {
	ns, auth := embedded(t)
	h := newTestHost(t, ns, auth, "hostA")
	e := &ipc.Envelope{Topic: echoReplyTo, Payload: []byte(`"x"`), Principal: "alice"}
	e.SetReply("c")
	if runs := h.replyRuns(e, func(string) bool { return true }); !runs("router") {
		t.Fatal("without request tracking a reply does not keep the election")
	}
}
