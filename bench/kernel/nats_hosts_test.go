package kernel_test

// The tool call across two kernels over NATS against its peer, one raw
// nats.go request/reply over the same two servers. Each kernel connects to
// its own node of a 2-node nats-server cluster on loopback (the
// external-cluster mode, --nats-url): the router and the caller on host
// A, the echo tool on host B; the peer's requester is on A's node and its
// responder on B's, so both cross the same route.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
)

// clusterNode starts a nats-server listening for clients and routes on
// loopback, routed to seed if not nil.
func clusterNode(b *testing.B, name string, seed *server.Server) *server.Server {
	b.Helper()
	opts := &server.Options{ServerName: name, Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		Cluster: server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: server.RANDOM_PORT}}
	if seed != nil {
		opts.Routes = server.RoutesFromStr("nats-route://" + seed.ClusterAddr().String())
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats-server not ready")
	}
	b.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

// bootOn boots a kernel with builtins on the cluster node at url, its
// audit chain on unless auditOff.
func bootOn(b *testing.B, host, url string, auditOff bool, builtins ...kernel.Builtin) *kernel.Kernel {
	b.Helper()
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 << 40
	cfg.NATS = config.NATS{HostID: host, URL: url}
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: b.TempDir(), Workspace: b.TempDir(), Config: cfg,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Builtins:  builtins,
		Frontends: []dispatch.CapsuleACL{toolclient.ACL()},
		AuditOff:  auditOff,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	return k
}

// BenchmarkRoundTripAcrossHostsInterleaved is a tool call made on host A
// and served by the echo tool on host B, and one raw request/reply between
// the same two nodes, taking turns call by call. Reported: each side's
// mean and p50, and the ratios ours ÷ NATS. audit=on is the kernel as a
// daemon runs it: host A's router records each call in the audit chain and
// holds the result until its end entry is durable (an fdatasync);
// audit=off leaves the chain out, to compare the transport alone.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench RoundTripAcrossHostsInterleaved -count 3 ./kernel/
func BenchmarkRoundTripAcrossHostsInterleaved(b *testing.B) {
	for _, audit := range []string{"off", "on"} {
		b.Run("audit="+audit, func(b *testing.B) { roundTripAcrossHosts(b, audit == "off") })
	}
}

func roundTripAcrossHosts(b *testing.B, auditOff bool) {
	nodeA := clusterNode(b, "nodeA", nil)
	nodeB := clusterNode(b, "nodeB", nodeA)
	a := bootOn(b, "hostA", nodeA.ClientURL(), auditOff, kernel.Builtin{Manifest: router.Manifest, New: router.New})
	bootOn(b, "hostB", nodeB.ClientURL(), auditOff, kernel.Builtin{Manifest: toolclienttest.EchoManifest, New: toolclienttest.NewEcho})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(a.Dispatcher.ExactInterceptors("tool.v1.execute.echo")) == 0 {
		if ctx.Err() != nil {
			b.Fatal("host A never learnt that host B provides echo")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ours, closeOurs := toolclienttest.RoundTrip(b, a.Frontend(), "echo", toolclienttest.EchoArgs, toolclienttest.EchoWant)
	defer closeOurs()
	peer := crossNodeRequestReply(b, nodeA, nodeB)
	testutil.Interleave(b, 100, "astrid", "nats", ours, peer)
}

// crossNodeRequestReply is the peer: a requester on one node, a responder
// on the other, the same request and reply sizes as setupNATSRoundTrip.
func crossNodeRequestReply(b *testing.B, reqNode, respNode *server.Server) func() error {
	b.Helper()
	connect := func(ns *server.Server, name string) *nats.Conn {
		nc, err := nats.Connect(ns.ClientURL(), nats.Name(name))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		return nc
	}
	call := toolRequestReply(b, connect(reqNode, "requester"), connect(respNode, "responder"), "peer.tool.v1.request.execute")
	// The responder's interest crosses the route on its own time.
	deadline := time.Now().Add(30 * time.Second)
	for err := call(); err != nil; err = call() {
		if !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline) {
			b.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return call
}
