package bus_test

// Benchmarks (a) and (b) of DESIGN §7 at the bus level, the bus against its
// peer, embedded NATS, driven by the same loops in the same invocation:
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench 'PubSub|RequestReply' -count 10 -p 1 ./bus/
//
// NATS is nats-server in-process with no listener, clients connected
// through nats.InProcessServer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/bench/natspeer"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

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
	pubSubImpls   = []pubSubImpl{{"bus", setupBusPubSub}, {"nats", setupNATSPubSub}}
	reqReplyImpls = []reqReplyImpl{{"bus", setupBusReqReply}, {"nats", setupNATSReqReply}}
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
	bs := bus.New(bus.Options{Logger: quietLogger(), RouteBudget: 2 * benchWindow * 1024})
	for i, p := range nonMatchingPatterns(nonMatching) {
		if _, err := bs.Subscribe(bus.RouteSpec{Owner: fmt.Sprint("other", i), Pattern: p}); err != nil {
			b.Fatal(err)
		}
	}
	r, err := bs.Subscribe(bus.RouteSpec{Owner: "receiver", Pattern: benchTopic})
	if err != nil {
		b.Fatal(err)
	}
	wg := receiveAll(r.Recv, onDelivery)
	publish := func() {
		// A fresh envelope per message, as dispatch hands the bus.
		e := &ipc.Envelope{Topic: benchTopic, Payload: benchPayload, SourceID: "publisher", Principal: "default"}
		if _, err := bs.Publish(e); err != nil {
			panic(err)
		}
	}
	check := func() error {
		if s := bs.Stats(); s.Evicted != 0 || s.Rejected != 0 {
			return fmt.Errorf("bus evicted %d, rejected %d", s.Evicted, s.Rejected)
		}
		return nil
	}
	teardown := func() {
		bs.Close()
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
	bs := bus.New(bus.Options{Logger: quietLogger()})
	requests, err := bs.Subscribe(bus.RouteSpec{Owner: "responder", Pattern: benchTopic})
	if err != nil {
		b.Fatal(err)
	}
	const replyTopic = "bench.v1.reply.requester"
	replies, err := bs.Subscribe(bus.RouteSpec{Owner: "requester", Pattern: replyTopic, Principal: "default", Scoped: true})
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
			if _, err := bs.Publish(reply); err != nil {
				return
			}
		}
	}()
	roundTrip := func() error {
		e := &ipc.Envelope{Topic: benchTopic, Payload: benchPayload, SourceID: "requester", Principal: "default"}
		if _, err := bs.Publish(e); err != nil {
			return err
		}
		_, err := replies.Recv(context.Background())
		return err
	}
	return roundTrip, func() { bs.Close(); wg.Wait() }
}

func setupNATSPubSub(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error, func()) {
	peer := natspeer.StartNATS(b)
	pub, subConn := peer.Connect("publisher"), peer.Connect("receiver")
	for _, p := range nonMatchingPatterns(nonMatching) {
		if _, err := subConn.Subscribe(natspeer.SubjectOf(p), func(*nats.Msg) {}); err != nil {
			b.Fatal(err)
		}
	}
	sub, err := subConn.Subscribe(benchTopic, func(*nats.Msg) { onDelivery() })
	if err != nil {
		b.Fatal(err)
	}
	if err := subConn.Flush(); err != nil {
		b.Fatal(err)
	}
	publish := func() {
		if err := pub.Publish(benchTopic, benchPayload); err != nil {
			panic(err)
		}
	}
	check := func() error {
		dropped, err := sub.Dropped()
		if err != nil {
			return err
		}
		if dropped != 0 {
			return fmt.Errorf("nats subscription dropped %d", dropped)
		}
		if err := subConn.LastError(); errors.Is(err, nats.ErrSlowConsumer) {
			return err
		}
		return nil
	}
	return publish, check, func() {}
}

func setupNATSReqReply(b *testing.B) (func() error, func()) {
	peer := natspeer.StartNATS(b)
	requester, responder := peer.Connect("requester"), peer.Connect("responder")
	if _, err := responder.Subscribe(benchTopic, func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		b.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		b.Fatal(err)
	}
	roundTrip := func() error {
		_, err := requester.Request(benchTopic, benchPayload, 5*time.Second)
		return err
	}
	return roundTrip, func() {}
}

// receiveAll receives from recv on a goroutine of its own, calling
// onDelivery for each delivery, until recv fails (the route closed); the
// returned group is done once it has stopped.
func receiveAll[T any](recv func(context.Context) (T, error), onDelivery func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, err := recv(context.Background()); err != nil {
				return
			}
			onDelivery()
		}
	}()
	return &wg
}
