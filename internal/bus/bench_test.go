package bus

import (
	"github.com/astrid-go/astrid/internal/testutil"

	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Benchmarks per DESIGN §7. Run (peers need the bench tag):
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench . -count 10 -p 1 ./internal/bus/
//
// Each benchmark is a table of implementations; nats_bench_test.go adds the
// embedded NATS peer under the bench tag, so both run in the same invocation
// and are driven by the same loop.

const (
	benchTopic = "bench.v1.target"
	// benchWindow bounds how far the publisher may run ahead of the
	// receiver, identically for every implementation, so that no run drops
	// or evicts: a run that did would be invalid (DESIGN §7).
	benchWindow = 20_000
)

// benchPayload is a 256-byte JSON payload.
var benchPayload = func() json.RawMessage {
	p := []byte(`{"type":"custom","data":"` + strings.Repeat("x", 256-27) + `"}`)
	if len(p) != 256 || !json.Valid(p) {
		panic(fmt.Sprintf("bench payload is %d bytes", len(p)))
	}
	return p
}()

// nonMatchingPatterns are subscriptions that never match benchTopic, shaped
// like real ones: exact topics, subtrees, and wildcards at the front and in
// the middle, many sharing benchTopic's leading segments.
func nonMatchingPatterns(n int) []string {
	out := make([]string, n)
	for i := range out {
		switch i % 4 {
		case 0:
			out[i] = fmt.Sprintf("bench.v1.other%d", i)
		case 1:
			out[i] = fmt.Sprintf("bench.v1.other%d.*", i)
		case 2:
			out[i] = fmt.Sprintf("*.v1.other%d", i)
		default:
			out[i] = fmt.Sprintf("bench.*.other%d", i)
		}
	}
	return out
}

// pubSubImpl sets up one publisher and one receiver on benchTopic with
// nonMatching other subscriptions. publish sends one 256-byte message;
// the receiver calls onDelivery per message. check reports drops.
type pubSubImpl struct {
	name  string
	setup func(b *testing.B, nonMatching int, onDelivery func()) (publish func(), check func() error, teardown func())
}

// reqReplyImpl sets up a responder echoing benchTopic; roundTrip sends one
// request and waits for its reply.
type reqReplyImpl struct {
	name  string
	setup func(b *testing.B) (roundTrip func() error, teardown func())
}

var (
	pubSubImpls   = []pubSubImpl{{"bus", setupBusPubSub}}
	reqReplyImpls = []reqReplyImpl{{"bus", setupBusReqReply}}
)

// BenchmarkPubSub is benchmark (a), bus-only level: one publishing
// goroutine, deliveries counted at one receiver; ns/op is per delivered
// message.
func BenchmarkPubSub(b *testing.B) {
	for _, impl := range pubSubImpls {
		for _, nonMatching := range []int{0, 500} {
			b.Run(fmt.Sprintf("impl=%s/nonmatching=%d", impl.name, nonMatching), func(b *testing.B) {
				runPubSub(b, impl, nonMatching)
			})
		}
	}
}

func runPubSub(b *testing.B, impl pubSubImpl, nonMatching int) {
	var received atomic.Int64
	var count int64
	done := make(chan struct{})
	target := int64(b.N)
	onDelivery := func() {
		count++
		if count&255 == 0 || count == target {
			received.Store(count)
		}
		if count == target {
			close(done)
		}
	}
	publish, check, teardown := impl.setup(b, nonMatching, onDelivery)
	defer teardown()
	b.SetBytes(int64(len(benchPayload)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if i&255 == 0 {
			for spins := 0; int64(i)-received.Load() > benchWindow; spins++ {
				// Yield first; if the receiver side still lags, sleep so a
				// spinning publisher does not take the CPU it needs.
				if spins < 16 {
					runtime.Gosched()
				} else {
					time.Sleep(20 * time.Microsecond)
				}
			}
		}
		publish()
	}
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	if err := check(); err != nil {
		b.Fatalf("invalid run: %v", err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

func setupBusPubSub(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error, func()) {
	bus := New(Options{Logger: quietLogger(), RouteBudget: 2 * benchWindow * 1024})
	for i, p := range nonMatchingPatterns(nonMatching) {
		if _, err := bus.Subscribe(RouteSpec{Owner: fmt.Sprint("other", i), Pattern: p}); err != nil {
			b.Fatal(err)
		}
	}
	r, err := bus.Subscribe(RouteSpec{Owner: "receiver", Pattern: benchTopic})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, err := r.Recv(context.Background()); err != nil {
				return
			}
			onDelivery()
		}
	}()
	publish := func() {
		// A fresh envelope per message, as dispatch hands the bus.
		e := &ipc.Envelope{Topic: benchTopic, Payload: benchPayload, SourceID: "publisher", Principal: "default"}
		if _, err := bus.Publish(e); err != nil {
			panic(err)
		}
	}
	check := func() error {
		if s := bus.Stats(); s.Evicted != 0 || s.Rejected != 0 {
			return fmt.Errorf("bus evicted %d, rejected %d", s.Evicted, s.Rejected)
		}
		return nil
	}
	teardown := func() {
		bus.Close()
		wg.Wait()
	}
	return publish, check, teardown
}

// BenchmarkRequestReply is benchmark (b): a closed loop, one request in
// flight; p50 and p99 round trips are reported.
func BenchmarkRequestReply(b *testing.B) {
	for _, impl := range reqReplyImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			roundTrip, teardown := impl.setup(b)
			defer teardown()
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range lat {
				t0 := time.Now()
				if err := roundTrip(); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(t0)
			}
			b.StopTimer()
			testutil.ReportLatency(b, lat, "rtt-")
		})
	}
}

func setupBusReqReply(b *testing.B) (func() error, func()) {
	bus := New(Options{Logger: quietLogger()})
	requests, err := bus.Subscribe(RouteSpec{Owner: "responder", Pattern: benchTopic})
	if err != nil {
		b.Fatal(err)
	}
	const replyTopic = "bench.v1.reply.requester"
	replies, err := bus.Subscribe(RouteSpec{Owner: "requester", Pattern: replyTopic, Principal: "default", Scoped: true})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			d, err := requests.Recv(context.Background())
			if err != nil {
				return
			}
			reply := &ipc.Envelope{Topic: replyTopic, Payload: d.Envelope.Payload, SourceID: "responder", Principal: d.Envelope.Principal}
			if _, err := bus.Publish(reply); err != nil {
				return
			}
		}
	}()
	roundTrip := func() error {
		e := &ipc.Envelope{Topic: benchTopic, Payload: benchPayload, SourceID: "requester", Principal: "default"}
		if _, err := bus.Publish(e); err != nil {
			return err
		}
		_, err := replies.Recv(context.Background())
		return err
	}
	return roundTrip, func() { bus.Close(); wg.Wait() }
}

// BenchmarkFairness is benchmark (c): 1000 principals publish into one route
// as fast as one goroutine can, far beyond what the receiver keeps up with,
// while a quiet principal publishes one message a millisecond. Each op is one
// quiet message; its delay from publish to receipt is reported as p50/p99,
// and the run fails if any quiet message was evicted.
func BenchmarkFairness(b *testing.B) {
	const flooders = 1000
	bus := New(Options{Logger: quietLogger()}) // DESIGN §4b budget: 4 MiB
	defer bus.Close()
	r, err := bus.Subscribe(RouteSpec{Owner: "sink", Pattern: "bench.v1.fair"})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, flooders)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	// Two flooding goroutines (half the principals each) publish faster
	// than one receiver drains on any machine, so the route stays under
	// pressure and evicts.
	const floodGoroutines = 2
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flooded atomic.Int64
	for g := range floodGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i += floodGoroutines {
				if i&1023 < floodGoroutines {
					select {
					case <-stop:
						flooded.Add(int64(i / floodGoroutines))
						return
					default:
					}
				}
				e := &ipc.Envelope{Topic: "bench.v1.fair", Payload: benchPayload, SourceID: "flood", Principal: names[i%flooders]}
				_, _ = bus.Publish(e)
			}
		}()
	}
	quietDelays := make([]time.Duration, 0, b.N)
	recvDone := make(chan error, 1)
	go func() {
		for len(quietDelays) < b.N {
			d, err := r.Recv(context.Background())
			if err != nil {
				recvDone <- fmt.Errorf("receiver: %w after %d quiet messages", err, len(quietDelays))
				return
			}
			if d.Envelope.Principal == "quiet" {
				quietDelays = append(quietDelays, time.Since(d.Envelope.Time()))
			}
		}
		recvDone <- nil
	}()
	b.ResetTimer()
	tick := time.NewTicker(time.Millisecond)
	for i := 0; i < b.N; i++ {
		<-tick.C
		e := &ipc.Envelope{Topic: "bench.v1.fair", Payload: benchPayload, SourceID: "quiet", Principal: "quiet"}
		if _, err := bus.Publish(e); err != nil {
			b.Fatal(err)
		}
	}
	tick.Stop()
	var recvErr error
	select {
	case recvErr = <-recvDone:
	case <-time.After(10 * time.Second):
		// A quiet message never arrived: it was evicted or starved.
		recvErr = fmt.Errorf("only %d of %d quiet messages received", len(quietDelays), b.N)
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	if recvErr != nil {
		st := bus.Stats()
		bus.Close()
		b.Fatalf("%v (bus stats: %+v)", recvErr, st)
	}
	s := bus.Stats()
	if b.N >= 100 && s.Evicted == 0 {
		b.Fatal("the flood evicted nothing: the route was never under pressure")
	}
	testutil.ReportLatency(b, quietDelays, "quiet-delay-")
	b.ReportMetric(float64(s.Evicted)/float64(b.N), "evicted/op")
	b.ReportMetric(float64(flooded.Load())/float64(b.N), "flood-msgs/op")
}
