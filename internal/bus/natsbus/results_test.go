package natsbus

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// delivery is how a host was handed an envelope: to its routes (with
// whether every interceptor runs there, or none) or to one capsule's
// interceptor from its queue group.
type delivery struct {
	id      string
	all     bool
	capsule string
	routes  bool
	topic   string
}

// routerHost is host id with a router intercepting the echo tool's
// replies, recording each delivery.
func routerHost(t *testing.T, ns *server.Server, auth *Authenticator, id string) (*Transport, chan delivery) {
	t.Helper()
	got := make(chan delivery, 64)
	tr, err := New(Options{HostID: id, Server: ns, Auth: auth, RequestLost: func(LostRequest) {},
		Deliver: func(e *ipc.Envelope, runs func(string) bool) error {
			got <- delivery{id: e.CorrelationID(), all: runs == nil, routes: true, topic: e.Topic}
			return nil
		},
		Intercept: func(e *ipc.Envelope, runs func(string) bool) error {
			got <- delivery{id: e.CorrelationID(), capsule: "router", topic: e.Topic}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	must(t, tr.Attach("router", []string{"tool.v1.execute.*"}, []string{echoReplyTo}, []string{echoReplyTo}))
	return tr, got
}

// TestReplyGoesToTheHostHoldingTheRequest: a router on hosts A and C; A
// forwards a call to host B's tool. B's reply runs every interceptor on A,
// which holds the request, and none on C, where it only reaches the
// routes; no host runs it from the router's queue group. The first reply
// ends the request: a second one (a replay) runs no interceptor on A
// either.
func TestReplyGoesToTheHostHoldingTheRequest(t *testing.T) {
	ns, auth := embedded(t)
	a, gotA := routerHost(t, ns, auth, "hostA")
	_, gotC := routerHost(t, ns, auth, "hostC")
	b := providerHost(t, ns, auth, "hostB")

	req := &ipc.Envelope{Topic: "tool.v1.execute.echo", Payload: []byte(`{}`), SourceID: "router", Principal: "alice", Seq: 1}
	req.SetRequest(echoReplyTo, "held", ipc.DeadlineAfter(time.Now(), time.Minute))
	a.Forward(req)
	taken(t, a, 1)
	for i := range 2 {
		reply := &ipc.Envelope{Topic: echoReplyTo, Payload: []byte(`"done"`), SourceID: "tool", Principal: "alice", Seq: uint64(2 + i)}
		reply.SetReply("held")
		b.Forward(reply)
		must(t, b.Flush())
		want := delivery{id: "held", all: i == 0, routes: true, topic: echoReplyTo}
		if d := testutil.WaitForRecv(t, guard, "host A's delivery", gotA); d != want {
			t.Fatalf("reply %d on host A: %+v, want %+v", i, d, want)
		}
		want.all = false
		if d := testutil.WaitForRecv(t, guard, "host C's delivery", gotC); d != want {
			t.Fatalf("reply %d on host C: %+v, want %+v", i, d, want)
		}
	}
	if a.RemoteRequests() != 0 {
		t.Fatal("the reply did not end the request")
	}
	// Nothing came from the router's queue group: a marker after the
	// replies reaches each host's routes next.
	mark := &ipc.Envelope{Topic: echoReplyTo, Payload: []byte(`"mark"`), SourceID: "tool", Principal: "alice", Seq: 9}
	b.Forward(mark)
	for name, got := range map[string]chan delivery{"A": gotA, "C": gotC} {
		for {
			d := testutil.WaitForRecv(t, guard, "the marker", got)
			if d.id != "" {
				t.Fatalf("host %s was handed %+v before the marker", name, d)
			}
			if d.routes {
				break
			}
		}
	}
}
