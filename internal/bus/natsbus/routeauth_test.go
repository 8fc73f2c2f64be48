package natsbus

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// testSecret is a cluster secret long enough to be accepted.
const testSecret = "0123456789abcdef0123456789abcdef-the-operators-secret"

// writeSecret writes secret to a file of the given mode.
func writeSecret(t testing.TB, secret string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.secret")
	if err := os.WriteFile(path, []byte(secret+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// serverLogs captures what nodes log, nats-server's own debug lines included.
type serverLogs struct{ testutil.SyncBuffer }

func (l *serverLogs) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&l.SyncBuffer, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// refusals is how many route connections the node refused for their
// credentials.
func (l *serverLogs) refusals() int {
	return strings.Count(l.String(), server.ErrAuthentication.Error())
}

// securedPair starts two nodes of one cluster on loopback, each with
// extra's options, the second routing to the first, and waits for the
// route. It returns the nodes and their hosts: pub on node 0 publishes
// news.*, watch on node 1 subscribes to it, and an envelope has crossed.
func securedPair(t *testing.T, extra ServerOptions, logs *serverLogs) ([2]*server.Server, [2]*testHost) {
	t.Helper()
	var nodes [2]*server.Server
	var hosts [2]*testHost
	for i := range nodes {
		o := extra
		o.Name, o.ClusterName, o.ClusterListen, o.Logger = "node"+string(rune('0'+i)), "test", "127.0.0.1:0", logs.logger()
		if i > 0 {
			o.Routes = []string{"nats-route://" + nodes[0].ClusterAddr().String()}
		}
		ns, auth := startEmbedded(t, o)
		nodes[i] = ns
		hosts[i] = newTestHost(t, ns, auth, "host"+string(rune('A'+i)))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	for _, ns := range nodes {
		testutil.WaitFor(t, guard, "the cluster to form", func() bool { return len(routedServers(t, ns)) == 1 })
	}
	hosts[0].attach(t, "pub", []string{"news.*"}, nil)
	hosts[1].attach(t, "watch", nil, []string{"news.*"})
	testutil.WaitFor(t, guard, "an envelope to cross the route", func() bool {
		hosts[0].forward("pub", "news.today", `0`)
		return len(hosts[1].got) > 0
	})
	return nodes, hosts
}

// routedServers are the names of the servers ns has routes to (a pair of
// nodes keeps several routes: a pool, and one for the system account).
func routedServers(t testing.TB, ns *server.Server) []string {
	t.Helper()
	rz, err := ns.Routez(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rz.Routes {
		if !slices.Contains(names, r.RemoteName) {
			names = append(names, r.RemoteName)
		}
	}
	return names
}

// rogueNode is a server an attacker runs next to the cluster, routing to
// its seed: publish sends a forged envelope as the cluster's capsule pub;
// received counts what reached the rogue's subscribers.
type rogueNode struct {
	ns       *server.Server
	publish  func()
	received func() int
}

// rawRogue is a plain nats-server, not an astrid node, routing to seed
// (with whatever credentials seed carries), with a client subscribed to
// everything.
func rawRogue(t *testing.T, seed string) rogueNode {
	t.Helper()
	opts := &server.Options{ServerName: "rogue", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		Cluster: server.ClusterOpts{Name: "test", Host: "127.0.0.1", Port: server.RANDOM_PORT},
		Routes:  server.RoutesFromStr(seed)}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(guard) {
		t.Fatal("rogue server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var mu sync.Mutex
	n := 0
	frame, err := appendFrame(nil, "hostA", nil, &ipc.Envelope{Topic: "news.today", SourceID: "pub", Payload: []byte(`"forged"`), Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the rogue's own publish, which its server echoes.
	if _, err := nc.Subscribe(">", func(m *nats.Msg) {
		if !bytes.Equal(m.Data, frame) {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return rogueNode{ns: ns,
		publish: func() {
			if err := nc.Publish("astrid.pub.news.today", frame); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		},
		received: func() int { mu.Lock(); defer mu.Unlock(); return n }}
}

// astridRogue is an embedded astrid node with o's route settings, whose
// host has capsule pub publishing and watch subscribing news.*.
func astridRogue(t *testing.T, seed string, o ServerOptions) rogueNode {
	t.Helper()
	o.Name, o.ClusterName, o.ClusterListen, o.Routes = "rogue", "test", "127.0.0.1:0", []string{seed}
	ns, auth := startEmbedded(t, o)
	h := newTestHost(t, ns, auth, "rogueHost")
	h.attach(t, "pub", []string{"news.*"}, nil)
	h.attach(t, "watch", nil, []string{"news.*"})
	return rogueNode{ns: ns,
		publish:  func() { h.forward("pub", "news.today", `"forged"`) },
		received: func() int { return len(h.got) }}
}

// keptOut checks that rogue r, which routes to node 0, was refused: once
// node 0 has refused it three times (refused; the rogue opens two
// connections, then retries every second, so a retry was refused too), the
// cluster's nodes route only to each other, and an envelope of the cluster
// crosses while none reaches the rogue. (The rogue itself counts a route
// for an instant each time, from node 0's INFO to node 0's refusal of its
// CONNECT; node 0 sends nothing before that CONNECT.)
func keptOut(t *testing.T, nodes [2]*server.Server, hosts [2]*testHost, r rogueNode, refused func() bool) {
	t.Helper()
	admitted := func() bool { return len(routedServers(t, nodes[0])) > 1 }
	testutil.WaitFor(t, guard, "node 0 to refuse the rogue's retry", func() bool { return refused() || admitted() })
	for i, ns := range nodes {
		if got, peer := routedServers(t, ns), nodes[1-i].Name(); len(got) != 1 || got[0] != peer {
			t.Fatalf("node %d routes to %v, want only its peer %s", i, got, peer)
		}
	}
	r.publish()
	hosts[0].forward("pub", "news.today", `"cluster"`)
	// Node 0's envelope reaching node 1 orders nothing on the rogue's
	// path, but a route the rogue had would show above.
	if e := hosts[1].skipWarmUp(t); string(e.Payload) != `"cluster"` {
		t.Fatalf("host B received %s from %s", e.Payload, e.SourceID)
	}
	if n := r.received(); n != 0 {
		t.Fatalf("the rogue received %d messages from the cluster", n)
	}
}

// TestClusterSecretKeepsRogueNodesOut: two nodes holding the cluster secret
// route to each other and carry envelopes; a node routing in without the
// secret, with another one, or with a guessed password is refused, so
// what it publishes never reaches the cluster and the cluster's envelopes
// never reach it. Neither the secret nor the password the nodes present
// appears in anything they log.
func TestClusterSecretKeepsRogueNodesOut(t *testing.T) {
	secretFile := writeSecret(t, testSecret, 0o600)
	var logs serverLogs
	nodes, hosts := securedPair(t, ServerOptions{ClusterSecretFile: secretFile}, &logs)
	seed := "nats-route://" + nodes[0].ClusterAddr().String()
	rogues := []struct {
		name  string
		start func(t *testing.T) rogueNode
	}{
		{"a plain nats-server presenting nothing", func(t *testing.T) rogueNode { return rawRogue(t, seed) }},
		{"a plain nats-server guessing the password", func(t *testing.T) rogueNode {
			return rawRogue(t, strings.Replace(seed, "//", "//"+routeUser+":"+strings.Repeat("0", 64)+"@", 1))
		}},
		{"an astrid node with another secret", func(t *testing.T) rogueNode {
			return astridRogue(t, seed, ServerOptions{ClusterSecretFile: writeSecret(t, strings.ToUpper(testSecret), 0o600)})
		}},
	}
	for _, rc := range rogues {
		t.Run(rc.name, func(t *testing.T) {
			before, counted := logs.refusals(), hosts[0].Stats().Node.RoutesRefused
			r := rc.start(t)
			keptOut(t, nodes, hosts, r, func() bool { return logs.refusals() >= before+3 })
			if n := hosts[0].Stats().Node.RoutesRefused; n < counted+3 {
				t.Fatalf("node 0 counted %d route refusals, want at least %d", n-counted, 3)
			}
		})
	}
	out := logs.String()
	if !strings.Contains(out, "nats-server:") {
		t.Fatal("nothing of nats-server's log reached the node's logger")
	}
	for _, s := range []string{testSecret, routePassword([]byte(testSecret))} {
		if strings.Contains(out, s) {
			t.Fatalf("the logs carry the secret or its password %q", s)
		}
	}
}

// TestClusterSecretFileMustBeTheOwners: a secret file others may read, or
// one that is too short, not a file, or missing, stops the node at start
// with an error naming the file, and never quoting it.
func TestClusterSecretFileMustBeTheOwners(t *testing.T) {
	cases := []struct {
		name, want string
		file       func(t *testing.T) string
	}{
		{"group may read", "mode 0640", func(t *testing.T) string { return writeSecret(t, testSecret, 0o640) }},
		{"others may read", "mode 0604", func(t *testing.T) string { return writeSecret(t, testSecret, 0o604) }},
		{"group may write", "chmod 600", func(t *testing.T) string { return writeSecret(t, testSecret, 0o620) }},
		{"too short", "want at least 32", func(t *testing.T) string { return writeSecret(t, testSecret[:31], 0o600) }},
		{"a directory", "not a regular file", func(t *testing.T) string { return t.TempDir() }},
		{"missing", "no such file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.file(t)
			ns, err := StartServer(ServerOptions{ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: path}, NewAuthenticator(nil))
			if err == nil {
				ns.Shutdown()
				ns.WaitForShutdown()
				t.Fatal("the node started")
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, c.want) || strings.Contains(msg, testSecret[:31]) {
				t.Fatalf("error %q: want the file %s and %q, without the secret", msg, path, c.want)
			}
		})
	}
}

// TestEveryClusterNodeNeedsASecret: a node that would accept or open routes
// with neither a secret nor TLS refuses to start, on loopback too (any
// local user can dial a loopback port), naming the setting. Credentials
// written into a route address are refused, and the error does not repeat
// them.
func TestEveryClusterNodeNeedsASecret(t *testing.T) {
	for _, o := range []ServerOptions{
		{ClusterListen: "0.0.0.0:0"}, {ClusterListen: ":0"}, {ClusterListen: "[::]:0"}, {ClusterListen: "192.0.2.1:0"},
		{ClusterListen: "gpu-box:0"}, {ClusterListen: "127.0.0.1:0"}, {ClusterListen: "[::1]:0"}, {ClusterListen: "localhost:0"},
		{Routes: []string{"nats-route://127.0.0.1:1"}},
	} {
		o.ClusterName = "test"
		ns, err := StartServer(o, NewAuthenticator(nil))
		if err == nil {
			ns.Shutdown()
			ns.WaitForShutdown()
		}
		if err == nil || !strings.Contains(err.Error(), "cluster_secret_file") {
			t.Fatalf("listen %q, routes %v without a secret: %v", o.ClusterListen, o.Routes, err)
		}
	}
	_, err := StartServer(ServerOptions{ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: writeSecret(t, testSecret, 0o600),
		Routes: []string{"nats-route://astrid-route:hunter2hunter2@127.0.0.1:1"}}, NewAuthenticator(nil))
	if err == nil || !strings.Contains(err.Error(), "carries credentials") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a route with credentials: %v", err)
	}
}

// TestLocalOnly: only a node listening on, and routing to, loopback alone
// may create its own cluster secret.
func TestLocalOnly(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "127.3.4.5", "::1", "localhost"} {
		if !loopbackHost(host) {
			t.Fatalf("%s is loopback", host)
		}
	}
	for _, c := range []struct {
		listen string
		routes []string
		want   bool
	}{
		{"127.0.0.1:6222", nil, true},
		{"localhost:0", []string{"nats-route://127.0.0.1:6222", "nats-route://[::1]:6223"}, true},
		{"", []string{"nats-route://localhost:6222"}, true},
		{"", nil, false},
		{"0.0.0.0:6222", nil, false},
		{":6222", nil, false},
		{"127.0.0.1:6222", []string{"nats-route://gpu-box:6222"}, false},
		{"", []string{"nats-route://10.0.0.2:6222"}, false},
		{"not an address", nil, false},
	} {
		if got := LocalOnly(c.listen, c.routes); got != c.want {
			t.Errorf("LocalOnly(%q, %v) = %v, want %v", c.listen, c.routes, got, c.want)
		}
	}
}

// TestClusterSecretCoversRoutesLearnedFromPeers: nodes 1 and 2 are told of
// node 0 only and learn of each other from it; the route between them
// (an implicit route, opened by nats-server) presents the secret too, so
// every node routes to both others.
func TestClusterSecretCoversRoutesLearnedFromPeers(t *testing.T) {
	secretFile := writeSecret(t, testSecret, 0o600)
	var logs serverLogs
	var nodes []*server.Server
	for i := range 3 {
		o := ServerOptions{Name: "node" + string(rune('0'+i)), ClusterName: "test", ClusterListen: "127.0.0.1:0",
			ClusterSecretFile: secretFile, Logger: logs.logger()}
		if i > 0 {
			o.Routes = []string{"nats-route://" + nodes[0].ClusterAddr().String()}
		}
		ns, _ := startEmbedded(t, o)
		nodes = append(nodes, ns)
	}
	for i, ns := range nodes {
		testutil.WaitFor(t, guard, "each node to route to both others", func() bool { return len(routedServers(t, ns)) == 2 })
		if n := logs.refusals(); n != 0 {
			t.Fatalf("node %d: %d routes refused among nodes holding the secret:\n%s", i, n, logs.String())
		}
	}
}
