package natsbus

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/internal/testutil"
)

// routeProxy carries one node's routes to another, so that a test can
// break them as a killed process or a failed network would, with no
// shutdown event, and let them come back.
type routeProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu       sync.Mutex
	refusing bool
	conns    []net.Conn
}

func startRouteProxy(t *testing.T, target string) *routeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &routeProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut(true)
		p.wg.Wait()
	})
	return p
}

func (p *routeProxy) url() string { return "nats-route://" + p.ln.Addr().String() }

func (p *routeProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		up, err := net.Dial("tcp", p.target)
		if p.refusing || err != nil {
			p.mu.Unlock()
			_ = c.Close()
			if up != nil {
				_ = up.Close()
			}
			continue
		}
		p.conns = append(p.conns, c, up)
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
		p.mu.Unlock()
	}
}

func (p *routeProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut closes every route carried, and refuses new ones while refusing.
func (p *routeProxy) cut(refusing bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = refusing
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// proxiedPair is two cluster nodes whose only routes go through a proxy.
func proxiedPair(t *testing.T) (a, b *server.Server, authA, authB *Authenticator, proxy *routeProxy) {
	t.Helper()
	secret := writeSecret(t, testSecret, 0o600)
	a, authA = startEmbedded(t, ServerOptions{Name: "nodeA", ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: secret})
	proxy = startRouteProxy(t, a.ClusterAddr().String())
	b, authB = startEmbedded(t, ServerOptions{Name: "nodeB", ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: secret, Routes: []string{proxy.url()}})
	for _, ns := range []*server.Server{a, b} {
		testutil.WaitFor(t, guard, "the routes to open", func() bool { return ns.NumRoutes() >= 1 })
	}
	return a, b, authA, authB, proxy
}

// TestRouteClosedAnswersItsHostsCalls: the routes to the node of the host
// running a call close with no shutdown event (its process was killed, or
// the network broke): the calling host answers the call at once, naming
// the host and the closed route, and ignores the host's announcements
// while the node is unreachable. When a route to that node opens again (the
// node was up all along), the host is heard again.
func TestRouteClosedAnswersItsHostsCalls(t *testing.T) {
	a, lost, _, proxy := callAcrossProxiedPair(t)
	proxy.cut(true)
	expectLostC1(t, lost, LostGone)
	if hearsProvider(a, "hostB") {
		t.Fatal("host B still listed after the routes to its node closed")
	}

	proxy.cut(false) // node B's next route attempt gets through
	testutil.WaitFor(t, guard, "host B to be heard again once a route to its node opens", func() bool { return hearsProvider(a, "hostB") })
	call(a, "c2", 2)
	replied(a, "c2")
	if n := a.RemoteRequests(); n != 0 {
		t.Fatalf("%d calls tracked after the only one was answered", n)
	}
}

// TestOwnNodeStoppingIsNoRouteLoss: when the calling host's own node stops,
// its routes close too, but that is this host's loss of the bus: every call
// running elsewhere is answered so, once, not as a loss of the other
// node.
func TestOwnNodeStoppingIsNoRouteLoss(t *testing.T) {
	a, lost, _, _ := callAcrossProxiedPair(t)
	a.opts.Server.Shutdown()
	expectLostC1(t, lost, LostOwnLink)
}

// callAcrossProxiedPair has host A, on the first node of a proxied pair,
// forward call c1 of tool echo to host B, its provider on the second node.
func callAcrossProxiedPair(t *testing.T) (a *Transport, lost chan LostRequest, nodeB *server.Server, proxy *routeProxy) {
	t.Helper()
	nodeA, nodeB, authA, authB, proxy := proxiedPair(t)
	a, lost = callerHost(t, nodeA, authA, "hostA")
	providerHost(t, nodeB, authB, "hostB")
	testutil.WaitFor(t, guard, "host A to hear host B's provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "c1", 1)
	taken(t, a, 1)
	return a, lost, nodeB, proxy
}

// expectLostC1 expects call c1, and no other, answered as lost on host B
// for reason.
func expectLostC1(t *testing.T, lost chan LostRequest, reason string) {
	t.Helper()
	checkLost(t, lostRequests(t, lost, 1)[0], "c1", "hostB", reason)
}
