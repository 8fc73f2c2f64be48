package natsbus

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// routePeer is a raw TCP connection to a node's route port speaking the
// route protocol by hand: what any local process, under any uid, can do
// with a loopback cluster port.
type routePeer struct {
	conn net.Conn
	r    *bufio.Reader
	// info is the INFO line the node sent first.
	info string
}

func dialRoutePeer(t *testing.T, addr string) *routePeer {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, guard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(guard)); err != nil {
		t.Fatal(err)
	}
	p := &routePeer{conn: conn, r: bufio.NewReader(conn)}
	if p.info, err = p.r.ReadString('\n'); err != nil || !strings.HasPrefix(p.info, "INFO ") {
		t.Fatalf("the node's first line: %q, %v", p.info, err)
	}
	return p
}

// connect is a route CONNECT presenting user and pass (none if empty), as
// a nats-server node of cluster "test" sends it.
func routeConnect(t *testing.T, user, pass string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"echo": false, "verbose": false, "pedantic": false, "tls_required": false,
		"headers": true, "name": "NROGUEPEER", "cluster": "test", "dynamic": false, "user": user, "pass": pass})
	if err != nil {
		t.Fatal(err)
	}
	return "CONNECT " + string(b) + "\r\n"
}

// send writes lines; a write failing because the node already closed the
// connection is no failure (the node may refuse before the last line).
func (p *routePeer) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.conn, l); err != nil {
			return
		}
	}
}

// readUntil reads what the node sends until a line has prefix stop, or
// the node closes the connection; it returns everything read.
func (p *routePeer) readUntil(t *testing.T, stop string) string {
	t.Helper()
	var got strings.Builder
	for {
		line, err := p.r.ReadString('\n')
		got.WriteString(line)
		if strings.HasPrefix(line, stop) {
			return got.String()
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the node neither answered %q nor closed the connection; read:\n%s", stop, got.String())
			}
			return got.String()
		}
	}
}

// TestRoutePeerWithoutTheSecretIsRefusedOnLoopback is the attack of issue
// 31 as a test: a process dials the loopback route port of a node of a
// running cluster and speaks the route protocol, subscribing to every
// capsule's subject and publishing a forged envelope as capsule pub. With
// no secret, a wrong one, or speaking before authenticating, it is refused
// (-ERR, the connection closed) before anything reaches it, what it
// published reaches no host, the refusal is logged with its address and
// counted, and the cluster keeps carrying envelopes. The same peer
// presenting the secret's password is admitted (its PING answered), which
// shows the refusals come from the secret and not from a malformed peer.
func TestRoutePeerWithoutTheSecretIsRefusedOnLoopback(t *testing.T) {
	secretFile := writeSecret(t, testSecret, 0o600)
	var logs serverLogs
	nodes, hosts := securedPair(t, ServerOptions{ClusterSecretFile: secretFile}, &logs)
	addr := nodes[0].ClusterAddr().String()
	frame, err := appendFrame(nil, "hostA", nil, &ipc.Envelope{Topic: "news.today", SourceID: "pub", Payload: []byte(`"forged"`), Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	attack := []string{
		"INFO {\"id\":\"NROGUEPEER\",\"cluster\":\"test\"}\r\n",
		"RS+ $G astrid.>\r\n",
		"RS+ $G astrid_hosts.>\r\n",
		"RMSG $G astrid.pub.news.today " + strconv.Itoa(len(frame)) + "\r\n" + string(frame) + "\r\n",
		"PING\r\n",
	}
	for _, c := range []struct {
		name    string
		connect string
	}{
		{"no secret", routeConnect(t, "", "")},
		{"the route user without a password", routeConnect(t, routeUser, "")},
		{"a wrong secret", routeConnect(t, routeUser, routePassword([]byte(strings.ToUpper(testSecret))))},
		{"the secret itself instead of its password", routeConnect(t, routeUser, testSecret)},
		{"speaking before authenticating", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused := hosts[0].Stats().Node.RoutesRefused
			p := dialRoutePeer(t, addr)
			lines := attack
			if c.connect != "" {
				lines = append([]string{c.connect}, attack...)
			}
			p.send(t, lines...)
			got := p.readUntil(t, "PONG")
			if !strings.Contains(got, "-ERR 'Authorization Violation'") || strings.Contains(got, "PONG") || strings.Contains(got, "MSG") {
				t.Fatalf("the node answered:\n%s", got)
			}
			// The connection is closed: nothing more will come.
			if _, err := p.r.ReadByte(); err == nil {
				t.Fatal("the node kept the connection open")
			}
			// nats-server's line names the peer's address for every
			// refusal; routeGuard's adds the reason for a CONNECT's.
			who := p.conn.LocalAddr().String()
			testutil.WaitFor(t, guard, "the refusal to be logged and counted", func() bool {
				return hosts[0].Stats().Node.RoutesRefused >= refused+1 && strings.Contains(logs.String(), who)
			})
			// The cluster keeps serving, and the forgery reached no host:
			// host B's next envelope is node 0's own.
			hosts[0].forward("pub", "news.today", `"cluster"`)
			if e := hosts[1].skipWarmUp(t); string(e.Payload) != `"cluster"` || e.SourceID != "pub" {
				t.Fatalf("host B received %s from %s", e.Payload, e.SourceID)
			}
			if len(routedServers(t, nodes[0])) != 1 {
				t.Fatalf("node 0 routes to %v", routedServers(t, nodes[0]))
			}
		})
	}
	if out := logs.String(); !strings.Contains(out, "route refused") || !strings.Contains(out, "no cluster secret presented") ||
		!strings.Contains(out, "wrong cluster secret") {
		t.Fatalf("the refusals' reasons were not logged:\n%s", out)
	}

	t.Run("the secret's password", func(t *testing.T) {
		p := dialRoutePeer(t, addr)
		p.send(t, routeConnect(t, routeUser, routePassword([]byte(testSecret))), "PING\r\n")
		if got := p.readUntil(t, "PONG"); !strings.Contains(got, "PONG") || strings.Contains(got, "-ERR") {
			t.Fatalf("the node answered the secret's holder:\n%s", got)
		}
		who := "remote=" + p.conn.LocalAddr().String()
		testutil.WaitFor(t, guard, "the join to be logged", func() bool {
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "route joined") && strings.Contains(l, who) {
					return true
				}
			}
			return false
		})
	})
	for _, s := range []string{testSecret, routePassword([]byte(testSecret))} {
		if strings.Contains(logs.String(), s) {
			t.Fatalf("the logs carry the secret or its password %q", s)
		}
	}
}

// TestClusterNodesClientPortAdmitsNoStranger: a cluster node listens for
// clients on a loopback port no one is told about (nats-server routes only
// once its client listener is up). A process finding it cannot connect
// without credentials this process issued, nor subscribe or publish by
// speaking before CONNECT; each refusal is counted.
func TestClusterNodesClientPortAdmitsNoStranger(t *testing.T) {
	var logs serverLogs
	nodes, hosts := securedPair(t, ServerOptions{ClusterSecretFile: writeSecret(t, testSecret, 0o600)}, &logs)
	refused := hosts[0].Stats().Node.ClientsRefused
	if _, err := nats.Connect(nodes[0].ClientURL(), nats.MaxReconnects(0)); err == nil {
		t.Fatal("a client with no credentials connected")
	}
	conn, err := net.DialTimeout("tcp", nodes[0].Addr().String(), guard)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(guard)); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, "SUB astrid.> 1\r\nPUB astrid.pub.news.today 2\r\nhi\r\nPING\r\n")
	got, _ := io.ReadAll(conn)
	if !strings.Contains(string(got), "-ERR 'Authorization Violation'") || strings.Contains(string(got), "PONG") {
		t.Fatalf("the node answered:\n%s", got)
	}
	testutil.WaitFor(t, guard, "the refusal to be counted", func() bool { return hosts[0].Stats().Node.ClientsRefused >= refused+1 })
	hosts[0].forward("pub", "news.today", `"cluster"`)
	if e := hosts[1].skipWarmUp(t); string(e.Payload) != `"cluster"` {
		t.Fatalf("host B received %s", e.Payload)
	}
}

// TestClusterSecretCreatedOnceAndKept: EnsureClusterSecret creates the
// secret 0600 in a directory it creates 0700, StartServer accepts it, a
// second call keeps it as it is, and a file group or others may read is
// refused, naming the file.
func TestClusterSecretCreatedOnceAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "nats", "cluster.secret")
	created, err := EnsureClusterSecret(path)
	if err != nil || !created {
		t.Fatalf("EnsureClusterSecret = %v, %v", created, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode %04o, want 0600", info.Mode().Perm())
	}
	if dir, err := os.Stat(filepath.Dir(path)); err != nil || dir.Mode().Perm() != 0o700 {
		t.Fatalf("secret directory: %v, %v", dir.Mode(), err)
	}
	first, err := readClusterSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2*clusterSecretBytes {
		t.Fatalf("secret of %d bytes", len(first))
	}
	ns, _ := startEmbedded(t, ServerOptions{ClusterName: "test", ClusterListen: "127.0.0.1:0", ClusterSecretFile: path})
	if ns.ClusterAddr() == nil {
		t.Fatal("the node does not listen for routes")
	}
	created, err = EnsureClusterSecret(path)
	if err != nil || created {
		t.Fatalf("second EnsureClusterSecret = %v, %v", created, err)
	}
	again, err := readClusterSecret(path)
	if err != nil || string(again) != string(first) {
		t.Fatalf("the secret changed (%v)", err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the directory holds %v (%v), want the secret alone", entries, err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureClusterSecret(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a secret group may read: %v", err)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Fatal("the refused file was removed")
	}
}

// TestNodeCountsPermissionViolations: a client holding a capsule's
// credentials that publishes as another capsule is refused by the broker;
// the node logs the violation with the client's address and counts it.
func TestNodeCountsPermissionViolations(t *testing.T) {
	var logs serverLogs
	ns, auth := startEmbedded(t, ServerOptions{Listen: "127.0.0.1:0", Logger: logs.logger()})
	h := newTestHost(t, ns, auth, "hostB")
	h.attach(t, "tool", []string{"tool.v1.execute.echo.result"}, nil)
	user, secret := h.credentials(t, auth, "tool")
	r, err := dialRogue(t, ns, user, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish("astrid.router.tool.v1.execute.echo.result", []byte("forged")); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, guard, "the violation", func() bool { return r.violations() == 1 })
	testutil.WaitFor(t, guard, "the node to count it", func() bool { return h.Stats().Node.Violations == 1 })
	if out := logs.String(); !strings.Contains(out, "127.0.0.1:") || !strings.Contains(out, "Publish Violation") {
		t.Fatalf("the violation was not logged with the client's address:\n%s", out)
	}
}
