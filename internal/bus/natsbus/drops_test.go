package natsbus

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// TestSlowConsumerDropsAreCounted: a host whose dispatcher stalls fills its
// receive queue; every envelope is then either delivered or counted as a
// slow-consumer drop, none vanishes.
func TestSlowConsumerDropsAreCounted(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	a.attach(t, "pub", []string{"news.*"}, nil)
	release := make(chan struct{})
	delivered := make(chan struct{}, 1024)
	b, err := New(Options{HostID: "hostB", Server: ns, Auth: auth, ReceiveQueue: 4, Deliver: func(*ipc.Envelope, func(string) bool) error {
		<-release
		delivered <- struct{}{}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Attach("sub", nil, []string{"news.*"}, nil); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for range n {
		a.forward("pub", "news.x", `1`)
	}
	testutil.WaitFor(t, guard, "the queue to overflow", func() bool { return b.Stats().Drops[DropSlowConsumer] > 0 })
	close(release)
	testutil.WaitFor(t, guard, "every envelope to be delivered or counted", func() bool {
		s := b.Stats()
		return s.Received+s.Drops[DropSlowConsumer] == n
	})
	if s := b.Stats(); s.Received != uint64(len(delivered)) {
		t.Fatalf("received %d, delivered %d", s.Received, len(delivered))
	}
}

func TestDeliverRefusalIsCounted(t *testing.T) {
	ns, auth := embedded(t)
	a := newTestHost(t, ns, auth, "hostA")
	a.attach(t, "pub", []string{"news.*"}, nil)
	b, err := New(Options{HostID: "hostB", Server: ns, Auth: auth, Deliver: func(*ipc.Envelope, func(string) bool) error {
		return errors.New("bus closed")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Attach("sub", nil, []string{"news.*"}, nil); err != nil {
		t.Fatal(err)
	}
	a.forward("pub", "news.x", `1`)
	testutil.WaitFor(t, guard, "the refusal to be counted", func() bool { return b.Stats().Drops[DropDeliver] == 1 })
}

func TestUndecodableIsCounted(t *testing.T) {
	ns, auth := embedded(t)
	b := newTestHost(t, ns, auth, "hostB")
	b.attach(t, "sub", nil, []string{"news.*"})
	a := newTestHost(t, ns, auth, "hostA")
	a.attach(t, "pub", []string{"news.*"}, nil)
	user, secret := a.credentials(t, auth, "pub")
	r, err := dialRogue(t, ns, user, secret)
	if err != nil {
		t.Fatal(err)
	}
	good, err := appendFrame(nil, "hostA", nil, &ipc.Envelope{Principal: "alice", Payload: json.RawMessage(`{"k":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{
		[]byte(`not json`),
		[]byte(`{"payload":not}`),
		append(good[:len(good)-1:len(good)-1], 0xff),                // the payload is not JSON
		good[:len("hostA")+3],                                       // cut inside the envelope
		append([]byte{5, 'h', 'o', 's', 't', 'A', 99}, good[7:]...), // another version
	}
	for _, body := range bodies {
		if err := r.Publish("astrid.pub.news.x", body); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, guard, "the refusals to be counted", func() bool { return b.Stats().Drops[DropDecode] == uint64(len(bodies)) })
	if len(b.got) != 0 {
		t.Fatal("an undecodable message was delivered")
	}
}
