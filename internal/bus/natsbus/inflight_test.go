package natsbus

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/ipc"
)

// callerHost is host id with a "router" capsule that publishes tool calls,
// whose lost calls are collected.
func callerHost(t *testing.T, ns *server.Server, auth *Authenticator, id string) (*Transport, chan LostCall) {
	t.Helper()
	lost := make(chan LostCall, 256)
	tr, err := New(Options{HostID: id, Server: ns, Auth: auth,
		Deliver:  func(*ipc.Envelope, func(string) bool) error { return nil },
		CallLost: func(c LostCall) { lost <- c },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	must(t, tr.Attach("router", []string{"tool.v1.execute.*", ipc.ToolExecuteResultTopic}, nil, nil))
	return tr, lost
}

// providerHost is host id with capsule "tool", the provider of tool echo.
func providerHost(t *testing.T, ns *server.Server, auth *Authenticator, id string) *testHost {
	t.Helper()
	h := newTestHost(t, ns, auth, id)
	must(t, h.Attach("tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"}, []string{"tool.v1.execute.echo"}))
	return h
}

func hearsProvider(tr *Transport, hosts ...string) bool {
	seen := 0
	for _, h := range tr.Hosts() {
		if slices.Contains(hosts, h.ID) && slices.Contains(h.Intercepts["tool"], "tool.v1.execute.echo") {
			seen++
		}
	}
	return seen == len(hosts)
}

// call forwards tool call id from the caller's router, with sequence seq.
func call(tr *Transport, id string, seq uint64) {
	payload, _ := ipc.ToolExecuteRequest{CallID: id, ToolName: "echo", Arguments: []byte(`{}`)}.MarshalJSON()
	tr.Forward(&ipc.Envelope{Topic: "tool.v1.execute.echo", Payload: payload, SourceID: "router", Principal: "alice", Seq: seq, Timestamp: time.Now().UnixNano()})
}

func consolidated(tr *Transport, id string) {
	payload, _ := ipc.ToolExecuteResult{CallID: id, Result: ipc.ToolCallResult{CallID: id, Content: "done"}}.MarshalJSON()
	tr.Forward(&ipc.Envelope{Topic: ipc.ToolExecuteResultTopic, Payload: payload, SourceID: "router", Principal: "alice", Seq: 1000, Timestamp: time.Now().UnixNano()})
}

// lostCalls collects n lost calls, and no more.
func lostCalls(t *testing.T, lost chan LostCall, n int) []LostCall {
	t.Helper()
	var got []LostCall
	for range n {
		select {
		case c := <-lost:
			got = append(got, c)
		case <-time.After(guard):
			t.Fatalf("%d lost calls answered, want %d", len(got), n)
		}
	}
	select {
	case c := <-lost:
		t.Fatalf("one more lost call answered: %+v", c)
	default:
	}
	sort.Slice(got, func(i, j int) bool { return got[i].CallID < got[j].CallID })
	return got
}

// TestCallsOfALostHostAreAnswered: the calling host tracks each call
// forwarded to a provider on other hosts with the host elected to run it;
// when that host leaves, exactly its calls still unanswered are answered as
// lost, naming it; a host forgotten for its silence gets the same.
func TestCallsOfALostHostAreAnswered(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	b := providerHost(t, ns, auth, "hostB")
	providerHost(t, ns, auth, "hostC")
	waitFor(t, "host A to hear both providers", func() bool { return hearsProvider(a, "hostB", "hostC") })

	const n = 32
	view := a.peers()
	byHost := map[string][]string{}
	for i := range n {
		id := fmt.Sprintf("call%02d", i)
		call(a, id, uint64(i+1))
		h := electedIn(view.ids, view, "tool", "hostA", uint64(i+1), "")
		if i > 0 { // call00 is answered below
			byHost[h] = append(byHost[h], id)
		}
	}
	if len(byHost["hostB"]) == 0 || len(byHost["hostC"]) == 0 {
		t.Fatalf("the calls did not spread over both hosts: %v", byHost)
	}
	if got := a.RemoteCalls(); got != n {
		t.Fatalf("%d calls tracked, want %d", got, n)
	}
	consolidated(a, "call00")
	if got := a.RemoteCalls(); got != n-1 {
		t.Fatalf("%d calls tracked after one was answered, want %d", got, n-1)
	}

	b.Close() // announces that it leaves
	got := lostCalls(t, lost, len(byHost["hostB"]))
	for i, c := range got {
		want := LostCall{CallID: byHost["hostB"][i], Tool: "echo", Principal: "alice", Host: "hostB", Reason: LostLeft}
		if c != want {
			t.Fatalf("lost call %d: %+v, want %+v", i, c, want)
		}
	}
	if got := a.RemoteCalls(); got != len(byHost["hostC"]) {
		t.Fatalf("%d calls still tracked, want host C's %d", got, len(byHost["hostC"]))
	}
	// Host C falls silent: once forgotten, its calls are answered too.
	a.forgetSilent(time.Now().Add(4 * DefaultPresenceInterval))
	for i, c := range lostCalls(t, lost, len(byHost["hostC"])) {
		want := LostCall{CallID: byHost["hostC"][i], Tool: "echo", Principal: "alice", Host: "hostC", Reason: LostSilent}
		if c != want {
			t.Fatalf("lost call %d: %+v, want %+v", i, c, want)
		}
	}
	if a.RemoteCalls() != 0 || hearsProvider(a, "hostC") {
		t.Fatalf("host C not forgotten: %d calls, hosts %+v", a.RemoteCalls(), a.Hosts())
	}
}

// TestCallsServedHereAreNotTracked: a call this host's own provider takes,
// a call no host provides, and a topic that is not a tool call are not
// tracked.
func TestCallsServedHereAreNotTracked(t *testing.T) {
	ns, auth := embedded(t)
	a, _ := callerHost(t, ns, auth, "hostA")
	providerHost(t, ns, auth, "hostB")
	waitFor(t, "host A to hear the provider", func() bool { return hearsProvider(a, "hostB") })
	payload, _ := ipc.ToolExecuteRequest{CallID: "x", ToolName: "other"}.MarshalJSON()
	a.Forward(&ipc.Envelope{Topic: "tool.v1.execute.other", Payload: payload, SourceID: "router", Principal: "alice", Seq: 1})
	if n := a.RemoteCalls(); n != 0 {
		t.Fatalf("a call of a tool no host provides is tracked (%d)", n)
	}
	must(t, a.Attach("local", nil, []string{"tool.v1.execute.echo"}, []string{"tool.v1.execute.echo"}))
	call(a, "y", 2)
	if n := a.RemoteCalls(); n != 0 {
		t.Fatalf("a call this host's provider takes is tracked (%d)", n)
	}
}

// TestOwnLinkLostAnswersEveryRemoteCall: when the calling host loses its
// NATS connection, no answer can reach it: every call running elsewhere is
// answered at once.
func TestOwnLinkLostAnswersEveryRemoteCall(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	providerHost(t, ns, auth, "hostB")
	waitFor(t, "host A to hear the provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "c1", 1)
	call(a, "c2", 2)
	ns.Shutdown()
	for i, c := range lostCalls(t, lost, 2) {
		want := LostCall{CallID: fmt.Sprintf("c%d", i+1), Tool: "echo", Principal: "alice", Host: "hostB", Reason: LostOwnLink}
		if c != want {
			t.Fatalf("lost call %d: %+v, want %+v", i, c, want)
		}
	}
}

// TestNodeShutdownAnswersItsHostsCalls: on a cluster of three embedded
// nodes, the node of the host running a call shuts down without its host
// saying it leaves: the calling host hears the node's shutdown event and
// answers the call at once, naming the host.
func TestNodeShutdownAnswersItsHostsCalls(t *testing.T) {
	nodes, auths := cluster(t, 3)
	a, lost := callerHost(t, nodes[0], auths[0], "hostA")
	providerHost(t, nodes[1], auths[1], "hostB")
	waitFor(t, "host A to hear host B's provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "c1", 1)
	nodes[1].Shutdown()
	got := lostCalls(t, lost, 1)
	want := LostCall{CallID: "c1", Tool: "echo", Principal: "alice", Host: "hostB", Reason: LostShutdown}
	if got[0] != want {
		t.Fatalf("lost call %+v, want %+v", got[0], want)
	}
	if hearsProvider(a, "hostB") {
		t.Fatal("host B still listed after its node shut down")
	}
}
