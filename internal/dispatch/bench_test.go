package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
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
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// routedWindow bounds how far the publisher runs ahead of the receiver:
// about 2 MiB of envelopes, half a route's budget.
const routedWindow = 4096

// BenchmarkPublishRouted is the dispatch-level half of DESIGN §7 (a):
// publish → one routed receiver, 256-byte JSON payload, ACL check and rate
// limiter on, deliveries counted at one receiver goroutine; optionally with
// 500 routes that do not match. A run with any eviction is invalid.
func BenchmarkPublishRouted(b *testing.B) {
	for _, nonMatching := range []int{0, 500} {
		b.Run(fmt.Sprintf("nonmatching=%d", nonMatching), func(b *testing.B) {
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
			var received, lost atomic.Int64
			finished := make(chan struct{})
			want := int64(b.N)
			go func() {
				defer close(finished)
				for received.Load()+lost.Load() < want {
					dl, err := route.Recv(context.Background())
					if err != nil {
						return
					}
					received.Add(1)
					lost.Add(int64(dl.Lost))
				}
			}()
			from := Caller{Capsule: "pub", Principal: "default"}
			b.SetBytes(int64(len(benchPayload)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range int64(b.N) {
				// Keep well inside the route's 4 MiB budget so that the run
				// measures delivery, not eviction.
				for i-received.Load() > routedWindow {
					runtime.Gosched()
				}
				if _, err := d.Publish(from, "bench.v1.event", benchPayload); err != nil {
					b.Fatal(err)
				}
			}
			<-finished
			b.StopTimer()
			if s := bs.Stats(); s.Evicted != 0 || lost.Load() != 0 || received.Load() != want {
				b.Fatalf("invalid run: %d evicted, %d of %d received", s.Evicted, received.Load(), want)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
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
