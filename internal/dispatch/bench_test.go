package dispatch

import (
	"github.com/astrid-go/astrid/internal/testutil"

	"context"
	"encoding/json"
	"fmt"
	"strings"
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
