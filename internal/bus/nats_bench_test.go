//go:build bench

package bus

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The embedded NATS peer of benchmarks (a) and (b): nats-server in-process
// with no listener, clients connected through nats.InProcessServer, driven by
// the same loops as the bus (bench_test.go).

func init() {
	pubSubImpls = append(pubSubImpls, pubSubImpl{"nats", setupNATSPubSub})
	reqReplyImpls = append(reqReplyImpls, reqReplyImpl{"nats", setupNATSReqReply})
}

func startNATS(b *testing.B) (*server.Server, func(name string) *nats.Conn) {
	srv, err := server.NewServer(&server.Options{DontListen: true, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(5 * time.Second) {
		b.Fatal("nats-server not ready")
	}
	connect := func(name string) *nats.Conn {
		nc, err := nats.Connect("", nats.InProcessServer(srv), nats.Name(name))
		if err != nil {
			b.Fatal(err)
		}
		return nc
	}
	return srv, connect
}

func stopNATS(srv *server.Server, conns ...*nats.Conn) {
	for _, nc := range conns {
		nc.Close()
	}
	srv.Shutdown()
	srv.WaitForShutdown()
}

// toNATSSubject rewrites a route pattern's trailing `.*` (one or more
// segments) as NATS's `>`.
func toNATSSubject(pattern string) string {
	if n := len(pattern); n > 2 && pattern[n-2:] == ".*" {
		return pattern[:n-1] + ">"
	}
	return pattern
}

func setupNATSPubSub(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error, func()) {
	srv, connect := startNATS(b)
	pub, subConn := connect("publisher"), connect("receiver")
	for _, p := range nonMatchingPatterns(nonMatching) {
		if _, err := subConn.Subscribe(toNATSSubject(p), func(*nats.Msg) {}); err != nil {
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
	return publish, check, func() { stopNATS(srv, pub, subConn) }
}

func setupNATSReqReply(b *testing.B) (func() error, func()) {
	srv, connect := startNATS(b)
	requester, responder := connect("requester"), connect("responder")
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
	return roundTrip, func() { stopNATS(srv, requester, responder) }
}
