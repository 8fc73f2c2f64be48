package dispatch

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// TestNotifyGoesPastAFullQueueToOneCapsule: a notice reaches the capsule it
// names, at the interceptor it names, even though that capsule's queue for
// the principal is full — by one more depth past the headroom of admitted
// work, never more — and no other capsule matching its topic gets it.
func TestNotifyGoesPastAFullQueueToOneCapsule(t *testing.T) {
	const depth = 4
	d, _ := newTestDispatcher(t, Options{QueueDepth: depth})
	g, other := newGate(), newRecorder()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"s.x"}}, continueTarget)
	register(t, d, interceptorACL("agent", "s.*", 100), g)
	register(t, d, interceptorACL("watcher", "s.*", 100), other.cont())
	alice := Caller{Capsule: "pub", Principal: "alice"}

	mustPublish(t, d, alice, "s.x", `0`)
	g.waitStarted(t) // the worker holds call 0
	for i := 1; i <= depth; i++ {
		mustPublish(t, d, alice, "s.x", strconv.Itoa(i))
	}
	if n := d.queued("agent", "alice"); n != depth {
		t.Fatalf("the agent's queue holds %d calls, want it full (%d)", n, depth)
	}

	notice := func(n int) *ipc.Envelope {
		return &ipc.Envelope{Topic: "s.x", Payload: []byte(`{"notice":` + strconv.Itoa(n) + `}`), SourceID: ipc.KernelSourceID, Principal: "alice"}
	}
	room := ReplyHeadroom * depth // the queue holds depth calls; a notice's limit is one depth more
	for i := range room {
		if !d.Notify("agent", "s.*", "h", notice(i)) {
			t.Fatalf("notice %d not queued with %d calls waiting", i, depth+i)
		}
	}
	if d.Notify("agent", "s.*", "h", notice(room)) {
		t.Fatal("a notice went past the headroom and one depth")
	}
	if d.Notify("nobody", "s.*", "h", notice(0)) {
		t.Fatal("a notice to no capsule was queued")
	}
	close(g.release)
	var notices int
	for range depth + room {
		inv := g.waitStarted(t)
		if inv.Envelope.SourceID == ipc.KernelSourceID {
			notices++
			if inv.Pattern != "s.*" || inv.Handler != "h" || inv.Principal != "alice" {
				t.Fatalf("a notice ran as %+v", inv)
			}
		}
	}
	if notices != room {
		t.Fatalf("%d notices ran, want %d", notices, room)
	}
	settle(t, d)
	other.mu.Lock()
	defer other.mu.Unlock()
	for _, c := range other.log {
		if strings.Contains(c.payload, "notice") {
			t.Fatalf("the watcher, which lost nothing, was told: %+v", c)
		}
	}
}

// TestAdmittedWorkHasHeadroom: replies a handler publishes (a stream
// event, a tool's result: PublishReply) may fill a queue to ReplyHeadroom
// times its depth; work that starts — and a request a handler forwards —
// is held to the depth, even in a queue replies filled.
func TestAdmittedWorkHasHeadroom(t *testing.T) {
	const depth = 2
	d, _ := newTestDispatcher(t, Options{QueueDepth: depth})
	g := newGate()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"s.x", "s.request"}, Subscribe: []string{"t.ask"}}, continueTarget)
	if _, err := d.Subscribe(Caller{Capsule: "pub"}, "t.ask", false); err != nil {
		t.Fatal(err)
	}
	acl := interceptorACL("agent", "s.*", 100)
	acl.Publish = []string{"t.ask"}
	register(t, d, acl, g)
	// The replies below answer agent's request: only its askers read them.
	if _, err := d.Publish(Caller{Capsule: "agent", Principal: "alice"}, "t.ask", json.RawMessage(`{}`), RequestOf(Request{ReplyTo: "s.x", CorrelationID: "corr"})); err != nil {
		t.Fatal(err)
	}
	starts := Caller{Capsule: "pub", Principal: "alice"}
	continues := Caller{Capsule: "pub", Principal: "alice", Continues: true}
	reply := func(from Caller, payload string) {
		t.Helper()
		if _, err := d.Publish(from, "s.x", json.RawMessage(payload), ReplyOf("corr")); err != nil {
			t.Fatal(err)
		}
	}

	mustPublish(t, d, starts, "s.x", `0`)
	g.waitStarted(t) // the worker holds call 0
	for i := 1; i <= depth; i++ {
		mustPublish(t, d, starts, "s.x", strconv.Itoa(i))
	}
	mustPublish(t, d, starts, "s.x", `"starts, past the depth"`)
	if s := d.Stats(); s.QueueDrops != 1 {
		t.Fatalf("QueueDrops = %d, want 1: work that starts is held to the depth", s.QueueDrops)
	}
	mustPublish(t, d, continues, "s.request", `"a handler's request, past the depth"`)
	if s := d.Stats(); s.QueueDrops != 2 {
		t.Fatalf("QueueDrops = %d, want 2: a request a handler forwards is held to the depth", s.QueueDrops)
	}
	mustPublish(t, d, continues, "s.x", `"a handler's plain event, past the depth"`)
	if s := d.Stats(); s.QueueDrops != 3 {
		t.Fatalf("QueueDrops = %d, want 3: only a reply gets the headroom", s.QueueDrops)
	}
	for i := depth; i < ReplyHeadroom*depth; i++ {
		reply(continues, strconv.Itoa(100+i))
	}
	if s := d.Stats(); s.QueueDrops != 3 {
		t.Fatalf("QueueDrops = %d, want 3: replies fill the headroom", s.QueueDrops)
	}
	reply(continues, `"continues, past the headroom"`)
	mustPublish(t, d, starts, "s.x", `"starts, in a full headroom"`)
	if s := d.Stats(); s.QueueDrops != 5 {
		t.Fatalf("QueueDrops = %d, want 5", s.QueueDrops)
	}
	close(g.release)
	for range ReplyHeadroom * depth {
		g.waitStarted(t)
	}
	settle(t, d)
}

// queued is the number of calls waiting in capsule id's queue for
// principal.
func (d *Dispatcher) queued(id, principal string) int {
	c := (*d.capsules.Load())[id]
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.queues[principal]; q != nil {
		return q.n
	}
	return 0
}
