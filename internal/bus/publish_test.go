package bus

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPublishStampsSeqAndTimestamp(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := newTestBus(t, Options{Now: clock.now})
	r := subscribe(t, b, RouteSpec{Pattern: "t.*"})
	for i := 0; i < 3; i++ {
		e := env("t.x", "")
		e.Seq = 999 // whatever the publisher set is overwritten
		publish(t, b, e)
	}
	publish(t, b, env("other", "")) // unrouted publishes consume a seq too
	publish(t, b, env("t.y", ""))
	ds := drain(r)
	wantSeq := []uint64{1, 2, 3, 5}
	if len(ds) != len(wantSeq) {
		t.Fatalf("got %d deliveries, want %d", len(ds), len(wantSeq))
	}
	for i, d := range ds {
		if d.Envelope.Seq != wantSeq[i] {
			t.Errorf("delivery %d: seq %d, want %d", i, d.Envelope.Seq, wantSeq[i])
		}
		if i > 0 && d.Envelope.Timestamp <= ds[i-1].Envelope.Timestamp {
			t.Errorf("delivery %d: timestamp %v not after %v", i, d.Envelope.Timestamp, ds[i-1].Envelope.Timestamp)
		}
		// The fake clock moves a millisecond per reading, one reading per publish.
		want := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(d.Envelope.Seq) * time.Millisecond)
		if got := d.Envelope.Time(); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("delivery %d: stamped %v, want %v", i, got, want)
		}
	}
}

func TestPublishRefusesTooLarge(t *testing.T) {
	b := newTestBus(t, Options{MaxMessage: 1000, RouteBudget: 4000})
	r := subscribe(t, b, RouteSpec{Pattern: "t.*"})
	cases := []struct {
		size int
		err  error
	}{
		{999, nil},
		{1000, nil},
		{1001, ErrTooLarge},
		{3000, ErrTooLarge},
	}
	for _, c := range cases {
		e := envSized(t, "t.x", "alice", c.size)
		n, err := b.Publish(e)
		if !errors.Is(err, c.err) {
			t.Errorf("size %d: err = %v, want %v", c.size, err, c.err)
		}
		if c.err != nil && (n != 0 || e.Seq != 0) {
			t.Errorf("size %d refused but reached %d routes, seq %d", c.size, n, e.Seq)
		}
		if c.err != nil && !strings.Contains(err.Error(), "t.x") {
			t.Errorf("error %q does not name the topic", err)
		}
	}
	if got := len(drain(r)); got != 2 {
		t.Errorf("route got %d, want the 2 admitted", got)
	}
	if s := b.Stats(); s.Rejected != 2 || s.Published != 2 || s.Evicted != 0 {
		t.Errorf("Stats = %+v, want 2 rejected, 2 published, 0 evicted", s)
	}
}

// A message as large as MaxMessage always fits a route, even one full of
// others' messages (upstream silently refused max-size messages at routes).
func TestMaxSizeMessageFitsARoute(t *testing.T) {
	b := newTestBus(t, Options{MaxMessage: 1 << 20, RouteBudget: 1 << 20})
	r := subscribe(t, b, RouteSpec{Pattern: "t.*"})
	publish(t, b, envSized(t, "t.x", "bob", 1000))
	if n := publish(t, b, envSized(t, "t.x", "alice", 1<<20)); n != 1 {
		t.Fatalf("max-size message reached %d routes, want 1", n)
	}
	d, ok := r.TryRecv()
	if !ok || d.Envelope.Principal != "alice" || d.Lost != 1 {
		t.Fatalf("got %+v, %v; want alice's message with Lost 1 (bob's evicted)", d, ok)
	}
}

func TestOptionsClampMaxMessageToBudget(t *testing.T) {
	b := newTestBus(t, Options{MaxMessage: 10_000, RouteBudget: 2_000})
	if _, err := b.Publish(envSized(t, "t.x", "", 2_001)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("message over the route budget: err = %v, want ErrTooLarge", err)
	}
}

// Each publisher's envelopes reach a route in its order, whatever other
// publishers do concurrently (run with -race).
func TestConcurrentPublishersKeepTheirOrder(t *testing.T) {
	const publishers, each = 4, 2000
	b := newTestBus(t, Options{RouteBudget: 64 << 20})
	r := subscribe(t, b, RouteSpec{Pattern: "t.*"})
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e := env("t.x", "")
				e.SourceID = string(rune('a' + p))
				if _, err := b.Publish(e); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	got := 0
	last := map[string]uint64{}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for got < publishers*each {
		d, err := r.Recv(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		src := d.Envelope.SourceID
		if d.Envelope.Seq <= last[src] {
			t.Fatalf("publisher %s: seq %d after %d", src, d.Envelope.Seq, last[src])
		}
		last[src] = d.Envelope.Seq
		got++
	}
	<-done
	if s := b.Stats(); s.Published != publishers*each || s.Delivered != publishers*each || s.Evicted != 0 {
		t.Errorf("Stats = %+v", s)
	}
}
