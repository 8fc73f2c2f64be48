package natsbus

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// cluster starts n embedded servers on loopback, each routing to the
// first, and waits until every one sees the others.
func cluster(t *testing.T, n int) ([]*server.Server, []*Authenticator) {
	t.Helper()
	var servers []*server.Server
	var auths []*Authenticator
	var seed string
	secret := writeSecret(t, testSecret, 0o600)
	for i := range n {
		o := ServerOptions{Name: "node" + string(rune('0'+i)), ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: secret}
		if seed != "" {
			o.Routes = []string{seed}
		}
		ns, auth := startEmbedded(t, o)
		if seed == "" {
			seed = "nats-route://" + ns.ClusterAddr().String()
		}
		servers, auths = append(servers, ns), append(auths, auth)
	}
	for _, ns := range servers {
		testutil.WaitFor(t, guard, "the cluster to form", func() bool { return ns.NumRoutes() >= n-1 })
	}
	return servers, auths
}

// TestAcrossAClusterOfThree: hosts on three nodes of one cluster, each
// connected in-process to its own node, exchange envelopes; the broker
// holds every capsule to its grants on every node.
func TestAcrossAClusterOfThree(t *testing.T) {
	servers, auths := cluster(t, 3)
	a := newTestHost(t, servers[0], auths[0], "hostA")
	b := newTestHost(t, servers[1], auths[1], "hostB")
	c := newTestHost(t, servers[2], auths[2], "hostC")
	a.attach(t, "pub", []string{"news.*"}, nil)
	b.attach(t, "watch", nil, []string{"news.*"})
	c.attach(t, "watch", nil, []string{"news.today"})
	// Subscription interest propagates between nodes on its own time:
	// publish until both hosts have heard.
	testutil.WaitFor(t, guard, "interest to reach node 0", func() bool {
		a.forward("pub", "news.today", `0`)
		return len(b.got) > 0 && len(c.got) > 0
	})
	a.forward("pub", "news.today", `"both"`)
	a.forward("pub", "news.other", `"b only"`)
	a.forward("pub", "news.today", `"end"`)
	if e := b.skipWarmUp(t); string(e.Payload) != `"both"` || e.SourceID != "pub" {
		t.Fatalf("host B received %s from %s", e.Payload, e.SourceID)
	}
	if e := b.next(t); string(e.Payload) != `"b only"` {
		t.Fatalf("host B received %s", e.Payload)
	}
	if e := c.skipWarmUp(t); string(e.Payload) != `"both"` {
		t.Fatalf("host C received %s", e.Payload)
	}
	if e := c.next(t); string(e.Payload) != `"end"` {
		t.Fatalf("host C received %s, want only what its keys match", e.Payload)
	}
	// A rogue on node 2 holding host C's credentials cannot publish as
	// host A's capsule on any node.
	user, secret := c.credentials(t, auths[2], "watch")
	r, err := dialRogue(t, servers[2], user, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish("astrid.pub.news.today", []byte(`{"payload":"forged"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, guard, "the violation", func() bool { return r.violations() == 1 })
	// C's credentials mean nothing to another node's authenticator.
	if !strings.HasPrefix(user, "capsule:hostC:") {
		t.Fatalf("user %q", user)
	}
	auths[0].mu.RLock()
	_, known := auths[0].users[user]
	auths[0].mu.RUnlock()
	if known {
		t.Fatal("node 0 knows host C's credentials")
	}
}

// skipWarmUp is the next envelope that is not one of the warm-up's (payload
// 0), which may still be arriving.
func (h *testHost) skipWarmUp(t *testing.T) *ipc.Envelope {
	for {
		if e := h.next(t); string(e.Payload) != "0" {
			return e
		}
	}
}
