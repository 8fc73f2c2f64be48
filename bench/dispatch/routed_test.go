package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/bench/natspeer"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
)

// benchPayload is a 256-byte JSON payload.
var benchPayload = func() json.RawMessage {
	prefix := `{"type":"custom","data":"`
	return json.RawMessage(prefix + strings.Repeat("x", 256-len(prefix)-2) + `"}`)
}()

// continueTarget answers Continue and does nothing else.
type continueTarget struct{}

func (continueTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, nil
}

// routedWindow bounds how far the publisher runs ahead of the receiver:
// about 2 MiB of envelopes, half a route's budget. Every implementation is
// held to the same window.
const routedWindow = 4096

// routedImpl sets up one publisher and one receiver of "bench.v1.event"
// with nonMatching other subscriptions; onDelivery runs per message
// received. check reports anything that makes the run invalid (a drop, an
// eviction).
type routedImpl struct {
	name  string
	setup func(b *testing.B, nonMatching int, onDelivery func()) (publish func(), check func() error)
}

// routedImpls are driven by the same loop.
var routedImpls = []routedImpl{{"dispatch", setupDispatchRouted}, {"nats", setupNATSRouted}}

// BenchmarkPublishRouted is DESIGN §7 (a) at the dispatch level: publish →
// one routed receiver, 256-byte JSON payload, ACL check and rate limiter on,
// deliveries counted at one receiver goroutine; again with 500 routes that
// do not match; NATS the same way. Run:
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench PublishRouted -count 10 -p 1 ./dispatch/
func BenchmarkPublishRouted(b *testing.B) {
	for _, impl := range routedImpls {
		for _, nonMatching := range []int{0, 500} {
			b.Run(fmt.Sprintf("impl=%s/nonmatching=%d", impl.name, nonMatching), func(b *testing.B) {
				// The receiver counts locally and shows its progress every
				// 256 deliveries, and the publisher looks every 256
				// publishes (as the bus benchmark does): a shared counter
				// touched by both sides for every message would measure
				// the two cores trading its cache line, not the systems.
				var received atomic.Int64
				var count int64
				target := int64(b.N)
				onDelivery := func() {
					count++
					if count&255 == 0 || count == target {
						received.Store(count)
					}
				}
				publish, check := impl.setup(b, nonMatching, onDelivery)
				b.SetBytes(int64(len(benchPayload)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := range int64(b.N) {
					if i&255 == 0 {
						for i-received.Load() > routedWindow {
							runtime.Gosched()
						}
					}
					publish()
				}
				for received.Load() < int64(b.N) {
					if err := check(); err != nil {
						b.Fatal(err)
					}
					runtime.Gosched()
				}
				b.StopTimer()
				if err := check(); err != nil {
					b.Fatalf("invalid run: %v", err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

func setupDispatchRouted(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bs := bus.New(bus.Options{Logger: quiet})
	// The rate limit lifted (dispatch's largest burst) so that the
	// benchmark measures the path, not the 10 MiB/s budget; the bucket is
	// still charged on every publish.
	d := dispatch.New(bs, dispatch.Options{RateBytesPerSec: 1 << 32, RateBurst: 1 << 32, Logger: quiet})
	b.Cleanup(func() { d.Close(); bs.Close() })
	for _, acl := range []dispatch.CapsuleACL{
		{ID: "pub", Publish: []string{"bench.v1.*"}},
		{ID: "sub", Subscribe: []string{"bench.v1.*", "other.*"}},
	} {
		if err := d.Register(acl, continueTarget{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range nonMatching {
		if _, err := d.Subscribe(dispatch.Caller{Capsule: "sub"}, fmt.Sprintf("other.t%d", i), false); err != nil {
			b.Fatal(err)
		}
	}
	route, err := d.Subscribe(dispatch.Caller{Capsule: "sub"}, "bench.v1.event", false)
	if err != nil {
		b.Fatal(err)
	}
	var lost atomic.Uint64
	go func() {
		for {
			dl, err := route.Recv(context.Background())
			if err != nil {
				return
			}
			lost.Add(dl.Lost)
			onDelivery()
		}
	}()
	from := dispatch.Caller{Capsule: "pub", Principal: "default"}
	publish := func() {
		if _, err := d.Publish(from, "bench.v1.event", benchPayload); err != nil {
			panic(err)
		}
	}
	check := func() error {
		if s := bs.Stats(); s.Evicted != 0 || lost.Load() != 0 {
			return fmt.Errorf("%d evicted, %d lost", s.Evicted, lost.Load())
		}
		return nil
	}
	return publish, check
}

// setupNATSRouted is the same shape on an embedded nats-server: one
// publisher connection, one subscriber connection holding the receiver and
// the non-matching subscriptions, no flush per message.
func setupNATSRouted(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error) {
	peer := natspeer.StartNATS(b)
	pub, subConn := peer.Connect("publisher"), peer.Connect("receiver")
	for i := range nonMatching {
		if _, err := subConn.Subscribe(fmt.Sprintf("other.t%d", i), func(*nats.Msg) {}); err != nil {
			b.Fatal(err)
		}
	}
	sub, err := subConn.Subscribe("bench.v1.event", func(*nats.Msg) { onDelivery() })
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		b.Fatal(err)
	}
	if err := subConn.Flush(); err != nil {
		b.Fatal(err)
	}
	publish := func() {
		if err := pub.Publish("bench.v1.event", benchPayload); err != nil {
			panic(err)
		}
	}
	check := func() error {
		if n, err := sub.Dropped(); err != nil || n != 0 {
			return fmt.Errorf("nats dropped %d (%v)", n, err)
		}
		if err := subConn.LastError(); errors.Is(err, nats.ErrSlowConsumer) {
			return err
		}
		return nil
	}
	return publish, check
}
