package bus

import (
	"github.com/astrid-go/astrid/internal/testutil"

	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Benchmark (c) of DESIGN §7; (a) and (b), which compare the bus with
// embedded NATS, are in the bench module (bench/bus). Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench Fairness -count 10 -p 1 ./internal/bus/

// benchPayload is a 256-byte JSON payload.
var benchPayload = func() json.RawMessage {
	p := []byte(`{"type":"custom","data":"` + strings.Repeat("x", 256-27) + `"}`)
	if len(p) != 256 || !json.Valid(p) {
		panic(fmt.Sprintf("bench payload is %d bytes", len(p)))
	}
	return p
}()

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
