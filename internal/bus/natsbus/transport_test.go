package natsbus

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

func TestEnvelopeCrossesHostsWhole(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	b := newTestHost(t, ns, auth, "hostB")
	a.attach(t, "pub", []string{"news.*"}, nil)
	b.attach(t, "sub", nil, []string{"news.*"})

	sent := &ipc.Envelope{
		Topic: "news.today", Payload: json.RawMessage(`{"type":"custom","value":{"n":1}}`),
		SourceID: "pub", Principal: "alice", Seq: 42, Timestamp: 1_700_000_000_123_456_789,
		Provenance: &ipc.Provenance{Signature: ipc.Signature{1, 2, 3}, DeviceKeyID: "dev-1", Origin: ipc.OriginLocalSocket},
	}
	// The turn's trace context crosses too (DESIGN §10).
	trace, err := ipc.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil {
		t.Fatal(err)
	}
	sent.SetTrace(trace)
	// The host an envelope comes from is the receiving host's word: what
	// the publishing host's envelope says does not travel.
	sent.SetHost("hostZ")
	a.Forward(sent)
	got := b.next(t)
	want, _ := json.Marshal(sent)
	have, _ := json.Marshal(got)
	if string(have) != string(want) {
		t.Fatalf("received %s\nsent     %s", have, want)
	}
	if got.Host() != "hostA" {
		t.Fatalf("received from host %q, want hostA", got.Host())
	}
	if got.Trace() != trace {
		t.Fatalf("trace %+v, sent %+v", got.Trace(), trace)
	}
	if s := a.Stats(); s.Forwarded != 1 {
		t.Fatalf("host A forwarded %d", s.Forwarded)
	}
	// Host B counts an envelope once the local bus took it (after Deliver
	// returned), so the count can trail the envelope itself: under load
	// the test read it first and saw 0.
	testutil.WaitFor(t, guard, "host B to count the envelope", func() bool { return b.Stats().Received >= 1 })
	if s := b.Stats(); s.Received != 1 {
		t.Fatalf("host B received %d", s.Received)
	}
}

func TestSourceComesFromTheSubject(t *testing.T) {
	ns, auth := embedded(t)
	b := newTestHost(t, ns, auth, "hostB")
	b.attach(t, "sub", nil, []string{"news.*"})
	a := newTestHost(t, ns, auth, "hostA")
	a.attach(t, "pub", []string{"news.*"}, nil)
	// The body claims another source and topic; the subject is what the
	// broker checked.
	user, secret := a.credentials(t, auth, "pub")
	r, err := dialRogue(t, ns, user, secret)
	if err != nil {
		t.Fatal(err)
	}
	body, err := appendFrame(nil, "hostA", nil, &ipc.Envelope{Topic: "admin.shutdown", SourceID: "router", Payload: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish("astrid.pub.news.x", body); err != nil {
		t.Fatal(err)
	}
	got := b.next(t)
	if got.SourceID != "pub" || got.Topic != "news.x" {
		t.Fatalf("received source %q topic %q; want pub, news.x from the subject", got.SourceID, got.Topic)
	}
}

func TestOwnEnvelopesAreNotReceivedBack(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	b := newTestHost(t, ns, auth, "hostB")
	a.attach(t, "pub", []string{"news.*"}, []string{"news.*"})
	b.attach(t, "sub", nil, []string{"news.*"})
	a.forward("pub", "news.one", `1`)
	a.forward("pub", "news.two", `2`)
	for _, want := range []string{"news.one", "news.two"} {
		if e := b.next(t); e.Topic != want {
			t.Fatalf("host B received %s, want %s", e.Topic, want)
		}
	}
	testutil.WaitFor(t, guard, "host A to see its two echoes", func() bool { return a.Stats().Echoes == 2 })
	if len(a.got) != 0 {
		t.Fatalf("host A delivered its own envelope to itself again")
	}
}

// TestOncePerHostInPublishOrder: overlapping keys of several capsules on one
// host still bring each envelope once, in the publisher's order.
func TestOncePerHostInPublishOrder(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	b := newTestHost(t, ns, auth, "hostB")
	a.attach(t, "pub", []string{"news.*"}, nil)
	b.attach(t, "all", nil, []string{"news.*"})
	b.attach(t, "today", nil, []string{"news.today"})
	b.attach(t, "any", nil, []string{"*.today", "news.*"})
	const n = 500
	for i := range n {
		a.forward("pub", "news.today", strings.Repeat("1", i%7+1))
	}
	a.forward("pub", "news.end", `0`)
	count := 0
	for {
		e := b.next(t)
		if e.Topic == "news.end" {
			break
		}
		if want := strings.Repeat("1", count%7+1); string(e.Payload) != want {
			t.Fatalf("envelope %d: payload %s, want %s (out of order or duplicated)", count, e.Payload, want)
		}
		count++
	}
	if count != n {
		t.Fatalf("host B received %d envelopes, want %d once each", count, n)
	}
}

// TestReceiverGrowsWithNewKeys: a capsule attached later with a key the
// receiver's permissions lacked is served by a wider receiver.
func TestReceiverGrowsWithNewKeys(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	b := newTestHost(t, ns, auth, "hostB")
	a.attach(t, "pub", []string{"x", "y"}, nil)
	b.attach(t, "one", nil, []string{"x"})
	a.forward("pub", "x", `1`)
	if e := b.next(t); e.Topic != "x" {
		t.Fatalf("got %s", e.Topic)
	}
	b.attach(t, "two", nil, []string{"y"})
	a.forward("pub", "y", `2`)
	a.forward("pub", "x", `3`)
	for _, want := range []string{"y", "x"} {
		if e := b.next(t); e.Topic != want {
			t.Fatalf("got %s, want %s", e.Topic, want)
		}
	}
	b.Detach("two")
	a.forward("pub", "y", `4`)
	a.forward("pub", "x", `5`)
	if e := b.next(t); e.Topic != "x" || string(e.Payload) != "5" {
		t.Fatalf("after detach got %s %s, want x 5 (y no longer wanted)", e.Topic, e.Payload)
	}
}

func TestAttachRefusesWhatNATSCannotCarry(t *testing.T) {
	ns, auth := embedded(t)
	h := newTestHost(t, ns, auth, "hostA")
	for _, tc := range []struct {
		id       string
		pub, sub []string
		names    string
	}{
		{"ok", []string{"a.>"}, nil, `"a.>"`},
		{"ok", nil, []string{"a b"}, `"a b"`},
		{"a.b", nil, nil, `"a.b"`},
		{"kernel", nil, nil, `"kernel"`},
	} {
		err := h.Attach(tc.id, tc.pub, tc.sub, nil)
		if !errors.Is(err, ErrUnmappable) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("Attach(%q, %q, %q) = %v; want ErrUnmappable naming %s", tc.id, tc.pub, tc.sub, err, tc.names)
		}
	}
	if n := h.Stats().Capsules; n != 0 {
		t.Fatalf("%d capsules attached after refusals", n)
	}
}
