//go:build bench

package bus

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/benchpeer"
)

// The embedded NATS peer of benchmarks (a) and (b): nats-server in-process
// with no listener, clients connected through nats.InProcessServer, driven by
// the same loops as the bus (bench_test.go).

func init() {
	pubSubImpls = append(pubSubImpls, pubSubImpl{"nats", setupNATSPubSub})
	reqReplyImpls = append(reqReplyImpls, reqReplyImpl{"nats", setupNATSReqReply})
}

func setupNATSPubSub(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error, func()) {
	peer := benchpeer.StartNATS(b)
	pub, subConn := peer.Connect("publisher"), peer.Connect("receiver")
	for _, p := range nonMatchingPatterns(nonMatching) {
		if _, err := subConn.Subscribe(benchpeer.SubjectOf(p), func(*nats.Msg) {}); err != nil {
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
	peer := benchpeer.StartNATS(b)
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
