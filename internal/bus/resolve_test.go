package bus

import (
	"context"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// TestPublishResolvedNeverMisdelivers hands PublishResolved resolutions
// that are right, stale (a route was added or closed since) and for
// another topic: every publish reaches exactly the routes matching it now.
func TestPublishResolvedNeverMisdelivers(t *testing.T) {
	b := New(Options{Logger: quietLogger()})
	defer b.Close()
	const topic = "app.v1.event"
	first, err := b.Subscribe(RouteSpec{Owner: "a", Pattern: topic})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Subscribe(RouteSpec{Owner: "o", Pattern: "app.v1.other"})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Resolve(topic)
	if !b.Current(res) || res.Topic() != topic {
		t.Fatal("a fresh resolution is not current")
	}
	publish := func(res *Resolution, want int) {
		t.Helper()
		e := &ipc.Envelope{Topic: topic, Payload: []byte(`{}`), SourceID: "p"}
		n, err := b.PublishResolved(e, b.Now(), res)
		if err != nil || n != want {
			t.Fatalf("PublishResolved = %d, %v; want %d routes", n, err, want)
		}
	}
	publish(res, 1)
	second, err := b.Subscribe(RouteSpec{Owner: "b", Pattern: "app.v1.*"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Current(res) {
		t.Fatal("a resolution made before Subscribe is still current")
	}
	publish(res, 2) // stale: matched afresh, the new route included
	first.Close()
	publish(b.Resolve("app.v1.other"), 1) // another topic's resolution is ignored
	for _, r := range []*Route{second, second} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := r.Recv(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if _, ok := other.TryRecv(); ok {
		t.Fatal("the other topic's route received an envelope")
	}
	if s := b.Stats(); s.Published != 3 {
		t.Fatalf("stats count %d published, want 3", s.Published)
	}
}
