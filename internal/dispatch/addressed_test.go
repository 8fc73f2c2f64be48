package dispatch

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// A reply can carry a person's data (the file a tool read), so only the
// capsules that asked read it (DESIGN §4c): a capsule subscribed to, or
// intercepting, the reply address — the consolidated
// tool.v1.execute.result — receives no answer to another capsule's
// request, for any principal, however it listens.
func TestRepliesReachOnlyTheirAskers(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	rec := newRecorder()
	answers := "tool.v1.execute.result"
	register(t, d, CapsuleACL{ID: "react", Publish: []string{"tool.v1.request.execute"}, Subscribe: []string{answers},
		Interceptors: []Interceptor{{Pattern: answers, Handler: "result"}}}, rec.cont())
	register(t, d, CapsuleACL{ID: "spy", Subscribe: []string{answers, "tool.v1.execute.*", "tool.*"},
		Interceptors: []Interceptor{{Pattern: answers, Handler: "steal"}}}, rec.cont())
	register(t, d, CapsuleACL{ID: "router", Publish: []string{answers}, Subscribe: []string{"tool.v1.request.execute"}}, continueTarget)
	router := Caller{Capsule: "router", Principal: "alice", Continues: true}
	if _, err := d.Subscribe(router, "tool.v1.request.execute", false); err != nil {
		t.Fatal(err)
	}
	var spyRoutes []*bus.Route
	for _, p := range []string{answers, "tool.v1.execute.*"} {
		r, err := d.Subscribe(Caller{Capsule: "spy", Principal: "alice"}, p, false)
		if err != nil {
			t.Fatal(err)
		}
		spyRoutes = append(spyRoutes, r)
	}
	reactRoute, err := d.Subscribe(Caller{Capsule: "react", Principal: "alice"}, answers, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Publish(Caller{Capsule: "react", Principal: "alice"}, "tool.v1.request.execute", json.RawMessage(`{}`), RequestOf(Request{ReplyTo: answers, CorrelationID: "call-1", Timeout: time.Minute})); err != nil {
		t.Fatal(err)
	}
	// Three replies: the first answers the request, the others stream on
	// it until its deadline; each reaches react alone.
	for i := range 3 {
		if _, err := d.Publish(router, answers, json.RawMessage(fmt.Sprintf(`{"secret":%d}`, i)), ReplyOf("call-1")); err != nil {
			t.Fatal(err)
		}
		if dl := recvOne(t, reactRoute); dl.Envelope.CorrelationID() != "call-1" {
			t.Fatalf("react received %s", dl.Envelope.Payload)
		}
	}
	for _, c := range rec.wait(t, 3) {
		if c.capsule != "react" {
			t.Fatalf("reply intercepted by %s: %+v", c.capsule, c)
		}
	}
	// A reply nobody here asked for (a guessed correlation id, a late
	// one) reaches nobody, and is counted.
	before := d.Stats().RepliesUnaddressed
	if _, err := d.Publish(router, answers, json.RawMessage(`{"secret":"x"}`), ReplyOf("call-guessed")); err != nil {
		t.Fatal(err)
	}
	rec.quiet(t, d)
	for _, r := range spyRoutes {
		if dl, ok := r.TryRecv(); ok {
			t.Fatalf("spy read %s on %s", dl.Envelope.Payload, r.Spec().Pattern)
		}
	}
	if _, ok := reactRoute.TryRecv(); ok {
		t.Fatal("react received a reply to no request of its")
	}
	if got := d.Stats().RepliesUnaddressed; got != before+1 {
		t.Fatalf("RepliesUnaddressed = %d, want %d", got, before+1)
	}
}

// A capsule that relays a request (the approval capsule re-publishes the
// call it approved) becomes one of its askers; the capsule that asked
// first still gets the reply.
func TestARelayedRequestAnswersEveryAsker(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	from, r := requester(t, d)
	register(t, d, CapsuleACL{ID: "relay", Publish: []string{"svc.v1.ask"}, Subscribe: []string{"svc.v1.answer"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "svc", Publish: []string{"svc.v1.answer"}, Subscribe: []string{"svc.v1.ask"}}, continueTarget)
	if _, err := d.Subscribe(Caller{Capsule: "svc"}, "svc.v1.ask", false); err != nil {
		t.Fatal(err)
	}
	relayRoute, err := d.Subscribe(Caller{Capsule: "relay", Principal: "alice"}, "svc.v1.answer", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Caller{from, {Capsule: "relay", Principal: "alice", Continues: true}} {
		if _, err := d.Publish(c, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("c1"))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Publish(Caller{Capsule: "svc", Principal: "alice", Continues: true}, "svc.v1.answer", json.RawMessage(`"done"`), ReplyOf("c1")); err != nil {
		t.Fatal(err)
	}
	for name, route := range map[string]*bus.Route{"asker": r, "relay": relayRoute} {
		if dl := recvOne(t, route); string(dl.Envelope.Payload) != `"done"` {
			t.Fatalf("%s received %s", name, dl.Envelope.Payload)
		}
	}
	// Another principal's request of the same id is another request.
	if _, err := d.Publish(Caller{Capsule: "svc", Principal: "bob", Continues: true}, "svc.v1.answer", json.RawMessage(`"bob's"`), ReplyOf("c1")); err != nil {
		t.Fatal(err)
	}
	settle(t, d)
	if dl, ok := r.TryRecv(); ok {
		t.Fatalf("alice's asker read bob's reply %s", dl.Envelope.Payload)
	}
}

// A reply from another host reaches only this host's askers too.
func TestARemoteReplyReachesOnlyItsAskers(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{Transport: newFakeTransport()})
	from, r := requester(t, d)
	register(t, d, CapsuleACL{ID: "spy", Subscribe: []string{"svc.v1.answer"}}, continueTarget)
	spy, err := d.Subscribe(Caller{Capsule: "spy", Principal: "alice"}, "svc.v1.answer", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("c1"))); err != nil {
		t.Fatal(err)
	}
	for _, corr := range []string{"c1", "c2"} { // c2: asked by nobody here
		e := &ipc.Envelope{Topic: "svc.v1.answer", Payload: json.RawMessage(`"remote"`), SourceID: "svc", Principal: "alice"}
		e.SetReply(corr)
		if err := d.DeliverRemote(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if dl := recvOne(t, r); dl.Envelope.CorrelationID() != "c1" {
		t.Fatalf("asker received %s", dl.Envelope.CorrelationID())
	}
	settle(t, d)
	if dl, ok := spy.TryRecv(); ok {
		t.Fatalf("spy read the remote reply %s", dl.Envelope.CorrelationID())
	}
	if dl, ok := r.TryRecv(); ok {
		t.Fatalf("asker received a reply to no request of its: %s", dl.Envelope.CorrelationID())
	}
}

// The answered requests kept for their streams are bounded: past
// MaxAnsweredRequests the one that went longest without a reply is
// forgotten, so a live stream, renewed by each of its replies, outlives
// thousands of single answers.
func TestAnsweredRequestsAreBounded(t *testing.T) {
	var rq requests
	now := time.Now()
	key := func(i int) requestKey {
		return requestKey{principal: "alice", replyTo: "a", correlation: fmt.Sprint(i)}
	}
	remember := func(k requestKey, expires time.Time) {
		rq.mu.Lock()
		rq.remember(&pendingRequest{key: k, askers: []string{"x"}, expires: expires}, now)
		rq.mu.Unlock()
	}
	stream := requestKey{principal: "alice", replyTo: "a", correlation: "stream"}
	remember(stream, now.Add(time.Hour))
	for i := range 3 * MaxAnsweredRequests {
		remember(key(i), now.Add(time.Hour))
		if i%(MaxAnsweredRequests/2) == 0 { // an event of the stream
			if askers, _ := rq.addressees(stream); len(askers) != 1 {
				t.Fatalf("the live stream was forgotten after %d single answers", i)
			}
		}
	}
	linked := 0
	for p := rq.oldest; p != nil; p = p.next {
		linked++
	}
	if len(rq.answered) > MaxAnsweredRequests || linked != len(rq.answered) {
		t.Fatalf("%d answered requests kept (%d linked), bound %d", len(rq.answered), linked, MaxAnsweredRequests)
	}
	if askers, first := rq.addressees(key(0)); len(askers) != 0 || first {
		t.Fatal("the least recently answered request is still addressed past the bound")
	}
	if askers, _ := rq.addressees(key(3*MaxAnsweredRequests - 1)); len(askers) != 1 {
		t.Fatal("the newest answered request was forgotten")
	}
	// Expired ones go first, and are not addressed.
	remember(key(-1), now.Add(-time.Second))
	if askers, _ := rq.addressees(key(-1)); len(askers) != 0 {
		t.Fatal("an expired answered request is still addressed")
	}
}
