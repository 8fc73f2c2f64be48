package dispatch

import (
	"github.com/astrid-go/astrid/internal/testutil"

	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchPayload is a 256-byte JSON payload.
var benchPayload = func() json.RawMessage {
	prefix := `{"type":"custom","data":"`
	return json.RawMessage(prefix + strings.Repeat("x", 256-len(prefix)-2) + `"}`)
}()

// unlimited lifts the rate limit so that benchmarks measure the path, not
// the 10 MiB/s budget; the bucket is still charged on every publish.
var unlimited = Options{RateBytesPerSec: maxRateBurst, RateBurst: maxRateBurst}

// chainBench registers a publisher and three no-op interceptors at distinct
// priorities on "bench.chain"; the last one calls done.
func chainBench(b *testing.B, done func()) *Dispatcher {
	d, _ := newTestDispatcher(b, unlimited)
	register(b, d, CapsuleACL{ID: "pub", Publish: []string{"bench.*"}}, continueTarget)
	for i, id := range []string{"guard", "transform", "handler"} {
		tg := continueTarget
		if i == 2 {
			tg = targetFunc(func(context.Context, Invocation) (Verdict, error) {
				done()
				return Verdict{}, nil
			})
		}
		register(b, d, interceptorACL(id, "bench.chain", uint32(10*(i+1))), tg)
	}
	return d
}

// BenchmarkChain3 is DESIGN §7 (d): events through a chain of three no-op
// interceptors at distinct priorities, pipelined with at most 32 events in
// flight (half a queue, so nothing is dropped); ns/op is per event.
func BenchmarkChain3(b *testing.B) {
	const window = 32
	inflight := make(chan struct{}, window)
	d := chainBench(b, func() { <-inflight })
	from := Caller{Capsule: "pub", Principal: "default"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		inflight <- struct{}{}
		if _, err := d.Publish(from, "bench.chain", benchPayload); err != nil {
			b.Fatal(err)
		}
	}
	for range window {
		inflight <- struct{}{}
	}
	b.StopTimer()
	if s := d.Stats(); s.QueueDrops != 0 || s.ChainsCut != 0 || s.Invocations != uint64(3*b.N) {
		b.Fatalf("invalid run: %+v", s)
	}
}

// BenchmarkChain3Latency runs the same chain closed-loop (one event in
// flight) and reports p50/p99 publish-to-last-link latency.
func BenchmarkChain3Latency(b *testing.B) {
	done := make(chan struct{})
	d := chainBench(b, func() { done <- struct{}{} })
	from := Caller{Capsule: "pub", Principal: "default"}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := d.Publish(from, "bench.chain", benchPayload); err != nil {
			b.Fatal(err)
		}
		<-done
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	testutil.ReportLatency(b, lat, "")
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

// routedImpls are driven by the same loop; nats_bench_test.go adds the
// embedded NATS peer under the bench tag.
var routedImpls = []routedImpl{{"dispatch", setupDispatchRouted}}

// BenchmarkPublishRouted is DESIGN §7 (a) at the dispatch level: publish →
// one routed receiver, 256-byte JSON payload, ACL check and rate limiter on,
// deliveries counted at one receiver goroutine; again with 500 routes that
// do not match. Run it with the NATS peer:
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench PublishRouted -count 10 -p 1 ./internal/dispatch/
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
	d, bs := newTestDispatcher(b, unlimited)
	register(b, d, CapsuleACL{ID: "pub", Publish: []string{"bench.v1.*"}}, continueTarget)
	register(b, d, CapsuleACL{ID: "sub", Subscribe: []string{"bench.v1.*", "other.*"}}, continueTarget)
	for i := range nonMatching {
		if _, err := d.Subscribe(Caller{Capsule: "sub"}, fmt.Sprintf("other.t%d", i), false); err != nil {
			b.Fatal(err)
		}
	}
	route, err := d.Subscribe(Caller{Capsule: "sub"}, "bench.v1.event", false)
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
	from := Caller{Capsule: "pub", Principal: "default"}
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

// BenchmarkPublishNoSubscriber is the dispatcher's own overhead: validation,
// ACL, rate limit, JSON check and interceptor lookup, with nothing matching.
func BenchmarkPublishNoSubscriber(b *testing.B) {
	d, _ := newTestDispatcher(b, unlimited)
	register(b, d, CapsuleACL{ID: "pub", Publish: []string{"a.b", "tool.v1.execute.*", "bench.v1.*"}}, continueTarget)
	for i := range 50 {
		register(b, d, interceptorACL(fmt.Sprintf("c%d", i), fmt.Sprintf("tool.v1.execute.t%d", i), 100), continueTarget)
	}
	from := Caller{Capsule: "pub", Principal: "default"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Publish(from, "bench.v1.event", benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}
