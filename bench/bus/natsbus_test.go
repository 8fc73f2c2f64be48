package bus_test

// The bus across two hosts over NATS (internal/bus/natsbus): a capsule on
// host A publishes through its dispatcher, a route on host B receives; the
// broker holds the publisher's connection to its grants. Compared in
// BenchmarkPubSub with raw nats.go pub/sub (impl=nats):
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench 'PubSub/impl=nats' -count 10 -p 1 ./bus/

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

func init() {
	pubSubImpls = append(pubSubImpls, pubSubImpl{"natsbus", setupNATSBusPubSub})
}

type nopTarget struct{}

func (nopTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, nil
}

// benchHost is one host: a bus, a dispatcher, the transport to the server.
type benchHost struct {
	bus *bus.Bus
	d   *dispatch.Dispatcher
	tr  *natsbus.Transport
}

func newBenchHost(b *testing.B, id string, ns *server.Server, auth *natsbus.Authenticator) *benchHost {
	h := &benchHost{bus: bus.New(bus.Options{Logger: quietLogger(), RouteBudget: 2 * benchWindow * 1024})}
	var d atomic.Pointer[dispatch.Dispatcher]
	tr, err := natsbus.New(natsbus.Options{HostID: id, Server: ns, Auth: auth, Logger: quietLogger(),
		ReceiveQueue: 2 * benchWindow,
		Deliver:      func(e *ipc.Envelope, runs func(string) bool) error { return d.Load().DeliverRemote(e, runs) }})
	if err != nil {
		b.Fatal(err)
	}
	h.tr = tr
	h.d = dispatch.New(h.bus, dispatch.Options{Logger: quietLogger(), Transport: tr, RateBytesPerSec: 1 << 40, RateBurst: 1 << 30})
	d.Store(h.d)
	return h
}

func (h *benchHost) close() {
	h.d.Close()
	h.tr.Close()
	h.bus.Close()
}

func setupNATSBusPubSub(b *testing.B, nonMatching int, onDelivery func()) (func(), func() error, func()) {
	auth := natsbus.NewAuthenticator(quietLogger())
	ns, err := natsbus.StartServer(natsbus.ServerOptions{}, auth)
	if err != nil {
		b.Fatal(err)
	}
	a, r := newBenchHost(b, "hostA", ns, auth), newBenchHost(b, "hostB", ns, auth)
	if err := a.d.Register(dispatch.CapsuleACL{ID: "publisher", Publish: []string{benchTopic}}, nopTarget{}); err != nil {
		b.Fatal(err)
	}
	others := nonMatchingPatterns(nonMatching)
	if err := r.d.Register(dispatch.CapsuleACL{ID: "receiver", Subscribe: append([]string{benchTopic}, others...)}, nopTarget{}); err != nil {
		b.Fatal(err)
	}
	for _, p := range others {
		if _, err := r.d.Subscribe(dispatch.Caller{Capsule: "receiver"}, p, false); err != nil {
			b.Fatal(err)
		}
	}
	route, err := r.d.Subscribe(dispatch.Caller{Capsule: "receiver"}, benchTopic, false)
	if err != nil {
		b.Fatal(err)
	}
	wg := receiveAll(route.Recv, onDelivery)
	from := dispatch.Caller{Capsule: "publisher", Principal: "default"}
	payload := json.RawMessage(benchPayload)
	publish := func() {
		if _, err := a.d.Publish(from, benchTopic, payload); err != nil {
			panic(err)
		}
	}
	check := func() error {
		for name, h := range map[string]*benchHost{"A": a, "B": r} {
			if s := h.tr.Stats(); len(s.Drops) != 0 {
				return fmt.Errorf("host %s dropped %v", name, s.Drops)
			}
			if s := h.bus.Stats(); s.Evicted != 0 || s.Rejected != 0 {
				return fmt.Errorf("host %s's bus evicted %d, rejected %d", name, s.Evicted, s.Rejected)
			}
		}
		return nil
	}
	teardown := func() {
		a.close()
		r.close()
		wg.Wait()
		ns.Shutdown()
		ns.WaitForShutdown()
	}
	return publish, check, teardown
}
