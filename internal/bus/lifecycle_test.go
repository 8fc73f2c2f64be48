package bus

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestRecvWakesOnPublish(t *testing.T) {
	b := newTestBus(t, Options{})
	r := subscribe(t, b, RouteSpec{Pattern: "t.wake"})
	got := make(chan Delivery, 1)
	errc := make(chan error, 1)
	go func() {
		d, err := r.Recv(context.Background())
		got <- d
		errc <- err
	}()
	// Whether the receiver parks before or after this publish, it must get it.
	publish(t, b, env("t.wake", ""))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.Envelope.Topic != "t.wake" {
		t.Fatalf("got %+v", d)
	}
}

func TestRecvReturnsContextError(t *testing.T) {
	b := newTestBus(t, Options{})
	r := subscribe(t, b, RouteSpec{Pattern: "t.x"})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Recv(ctx)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv = %v, want context.Canceled", err)
	}
	deadline, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	if _, err := r.Recv(deadline); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv = %v, want context.DeadlineExceeded", err)
	}
	// The route still works afterwards.
	publish(t, b, env("t.x", ""))
	if _, ok := r.TryRecv(); !ok {
		t.Fatal("route stopped delivering after a cancelled Recv")
	}
}

func TestRouteClose(t *testing.T) {
	b := newTestBus(t, Options{})
	r := subscribe(t, b, RouteSpec{Owner: "fs", Pattern: "t.*"})
	other := subscribe(t, b, RouteSpec{Owner: "fs", Pattern: "t.*"})
	for i := 0; i < 5; i++ {
		publish(t, b, env("t.x", "alice"))
	}
	r.TryRecv() // one delivered, some now in the receiver's batch
	blocked := subscribe(t, b, RouteSpec{Pattern: "never.published"})
	errc := make(chan error, 1)
	go func() {
		_, err := blocked.Recv(context.Background())
		errc <- err
	}()

	r.Close()
	r.Close() // idempotent
	blocked.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("blocked Recv = %v, want ErrClosed", err)
	}
	if _, err := r.Recv(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Recv after Close = %v, want ErrClosed", err)
	}
	if _, ok := r.TryRecv(); ok {
		t.Fatal("TryRecv after Close delivered")
	}
	if n := publish(t, b, env("t.y", "")); n != 1 {
		t.Fatalf("Publish after one route closed reached %d, want 1 (the other)", n)
	}
	s := b.Stats()
	if s.DroppedOnClose != 4 || s.Delivered != 1 || len(s.Routes) != 1 || s.Routes[0].ID != other.ID() {
		t.Fatalf("Stats = %+v; want 4 dropped on close, 1 delivered, only route %d left", s, other.ID())
	}
}

func TestBusClose(t *testing.T) {
	b := New(Options{Logger: quietLogger()})
	r, _ := b.Subscribe(RouteSpec{Pattern: "t.*"})
	g := b.Observe()
	errc := make(chan error, 2)
	go func() { _, err := r.Recv(context.Background()); errc <- err }()
	go func() {
		_, err := g.Recv(context.Background())
		if err == nil { // the ring saw the publish below before Close
			_, err = g.Recv(context.Background())
		}
		errc <- err
	}()
	_, _ = b.Publish(env("other", "")) // only the ring gets it
	b.Close()
	b.Close()
	for i := 0; i < 2; i++ {
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("Recv on a closed bus = %v, want ErrClosed", err)
		}
	}
	if _, err := b.Publish(env("t.x", "")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close = %v, want ErrClosed", err)
	}
	if _, err := b.Subscribe(RouteSpec{Pattern: "t.*"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if _, err := b.Observe().Recv(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Observe after Close: Recv = %v, want ErrClosed", err)
	}
	r.Close() // closing after the bus is harmless
	g.Close()
	if s := b.Stats(); s.Published != 1 || len(s.Routes) != 0 || s.Rings != 0 {
		t.Fatalf("Stats after Close = %+v", s)
	}
}

func TestRingKeepsNewestAndCountsLag(t *testing.T) {
	b := newTestBus(t, Options{RingSize: 4})
	g := b.Observe()
	for i := 0; i < 10; i++ {
		publish(t, b, env("any.topic", "alice"))
	}
	publish(t, b, env("system.event", ""))
	var seqs []uint64
	var lost []uint64
	for {
		d, ok := g.TryRecv()
		if !ok {
			break
		}
		seqs = append(seqs, d.Envelope.Seq)
		lost = append(lost, d.Lost)
	}
	if want := []uint64{8, 9, 10, 11}; !slices.Equal(seqs, want) {
		t.Fatalf("ring seqs %v, want %v", seqs, want)
	}
	if want := []uint64{7, 0, 0, 0}; !slices.Equal(lost, want) {
		t.Fatalf("ring lost %v, want %v", lost, want)
	}
	if s := b.Stats(); s.Lagged != 7 || s.Rings != 1 {
		t.Fatalf("Stats lagged %d rings %d, want 7 and 1", s.Lagged, s.Rings)
	}
	g.Close()
	if s := b.Stats(); s.Lagged != 7 || s.Rings != 0 {
		t.Fatalf("after ring Close: lagged %d rings %d, want 7 (kept) and 0", s.Lagged, s.Rings)
	}
	if n := publish(t, b, env("any.topic", "")); n != 0 {
		t.Fatalf("rings are not routes: Publish = %d, want 0", n)
	}
}

func TestRingRecvWakes(t *testing.T) {
	b := newTestBus(t, Options{})
	g := b.Observe()
	defer g.Close()
	done := make(chan Delivery, 1)
	go func() {
		d, _ := g.Recv(context.Background())
		done <- d
	}()
	publish(t, b, env("x.y", ""))
	if d := <-done; d.Envelope == nil || d.Envelope.Topic != "x.y" {
		t.Fatalf("ring Recv got %+v", d)
	}
}

func TestStatsDescribeRoutes(t *testing.T) {
	b := newTestBus(t, Options{})
	r := subscribe(t, b, RouteSpec{Owner: "react", Pattern: "agent.v1.*", Principal: "alice", Scoped: true})
	e := env("agent.v1.response", "alice")
	publish(t, b, e)
	publish(t, b, env("agent.v1.response", "alice"))
	r.TryRecv()
	st := b.Stats().Routes[0]
	want := RouteStats{
		ID: r.ID(), Owner: "react", Pattern: "agent.v1.*", Principal: "alice", Scoped: true,
		QueuedBytes: e.Size(), QueuedMessages: 1, Principals: 0, Enqueued: 2, Delivered: 1,
	}
	// The second message sits in the receiver's batch, out of the queue.
	if st != want {
		t.Fatalf("route stats\n got %+v\nwant %+v", st, want)
	}
}
