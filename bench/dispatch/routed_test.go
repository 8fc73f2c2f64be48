//go:build bench

package dispatch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/benchpeer"
)

func init() {
	routedImpls = append(routedImpls, routedImpl{"nats", setupNATSRouted})
}

// setupNATSRouted is the same shape on an embedded nats-server: one
// publisher connection, one subscriber connection holding the receiver and
// the non-matching subscriptions, no flush per message.
func setupNATSRouted(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error) {
	peer := benchpeer.StartNATS(b)
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
