package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/sdk"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testClusterSecret writes a cluster secret (mode 0600) for the kernels of
// one test to share: each boots on its own home, and would otherwise create
// a secret of its own there and refuse the others' routes.
func testClusterSecret(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.secret")
	if err := os.WriteFile(path, []byte(strings.Repeat("c5", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// bootHost boots a kernel with no capsule but two frontend identities, on
// the bus described by n.
func bootHost(t *testing.T, n config.NATS) *Kernel {
	t.Helper()
	cfg := config.Default()
	cfg.NATS = n
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Builtins: []Builtin{},
		Frontends: []dispatch.CapsuleACL{
			{ID: "sender", Publish: []string{"mesh.*"}},
			{ID: "watcher", Subscribe: []string{"mesh.*"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// TestTwoKernelsShareTheBus: two kernels, each embedding a node of one NATS
// cluster on loopback: what one host's capsule publishes reaches the
// other's subscribers with its source and principal; the kernel's own
// events stay home.
func TestTwoKernelsShareTheBus(t *testing.T) {
	portA, portB := freePort(t), freePort(t)
	secret := testClusterSecret(t)
	a := bootHost(t, config.NATS{HostID: "hostA", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portA), ClusterSecretFile: secret})
	b := bootHost(t, config.NATS{HostID: "hostB", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portB), ClusterSecretFile: secret,
		Routes: []string{fmt.Sprintf("nats-route://127.0.0.1:%d", portA)}})
	route, err := b.Dispatcher.Subscribe(dispatch.Caller{Capsule: "watcher"}, "mesh.*", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// The route between the two nodes forms on its own time: publish until
	// the first envelope arrives.
	for {
		if _, err := a.Dispatcher.Publish(dispatch.Caller{Capsule: "sender", Principal: "alice"}, "mesh.hello", json.RawMessage(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 50*time.Millisecond)
		dl, err := route.Recv(wait)
		stop()
		if err == nil {
			e := dl.Envelope
			if e.SourceID != "sender" || e.Principal != "alice" || e.Topic != "mesh.hello" || string(e.Payload) != `{"n":1}` {
				t.Fatalf("host B received %+v", e)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("host B never received host A's envelope")
		}
	}
	for { // what was published before the route formed may still come
		if _, ok := route.TryRecv(); !ok {
			break
		}
	}
	if _, err := a.Dispatcher.Publish(dispatch.Caller{}, "mesh.kernel", json.RawMessage(`1`), dispatch.KernelEvent); err != nil {
		t.Fatal(err)
	}
	if err := a.NATSTransport().Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Dispatcher.Publish(dispatch.Caller{Capsule: "sender", Principal: "alice"}, "mesh.marker", json.RawMessage(`2`)); err != nil {
		t.Fatal(err)
	}
	for {
		dl, err := route.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if dl.Envelope.Topic == "mesh.kernel" {
			t.Fatal("the kernel's own event crossed hosts")
		}
		if dl.Envelope.Topic == "mesh.marker" {
			break
		}
	}
	if s := b.NATSTransport().Stats(); s.Received == 0 || len(s.Drops) != 0 {
		t.Fatalf("host B's transport stats %+v", s)
	}
	// Each host lists the other with the capsules it serves.
	testutil.WaitForValue(t, testTimeout, "host A to list host B with its capsules", func() (any, bool) {
		hosts := a.NATSTransport().Hosts()
		return hosts, len(hosts) == 2 && hosts[1].ID == "hostB" && slices.Equal(hosts[1].Capsules, []string{"sender", "watcher"})
	})
	if b.NATSTransport().HostID() != "hostB" {
		t.Fatalf("host id %q", b.NATSTransport().HostID())
	}
}

func TestNoNATSByDefault(t *testing.T) {
	k := bootHost(t, config.Default().NATS)
	if k.NATSTransport() != nil {
		t.Fatal("a transport without NATS settings")
	}
}

// remoteEchoBuiltin provides "echo_remote", which answers its text and the
// principal it ran for.
func remoteEchoBuiltin() Builtin {
	text := `
[package]
name = "remote-echo"
version = "0.1.0"
[subscribe]
"tool.v1.execute.echo_remote" = { wit = "opaque", handler = "tool_execute_echo_remote" }
[publish]
"tool.v1.execute.echo_remote.result" = "opaque"
`
	type args struct {
		Text string `json:"text"`
	}
	return Builtin{Manifest: []byte(text), New: func() *sdk.Capsule {
		c := sdk.New("echoes from another host")
		sdk.Tool(c, "echo_remote", "echoes its text", func(c *sdk.Call, a args) (string, error) {
			return a.Text + " for " + c.Principal(), nil
		})
		return c
	}}
}

// TestToolOnAnotherHost: the router on host A finds the provider of a tool
// loaded only on host B (presence) and the call made on host A is served
// there, answer included.
func TestToolOnAnotherHost(t *testing.T) {
	portA, portB := freePort(t), freePort(t)
	secret := testClusterSecret(t)
	a := bootWith(t, config.NATS{HostID: "hostA", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portA), ClusterSecretFile: secret},
		[]Builtin{{Manifest: router.Manifest, New: router.New}})
	bootWith(t, config.NATS{HostID: "hostB", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portB), ClusterSecretFile: secret,
		Routes: []string{fmt.Sprintf("nats-route://127.0.0.1:%d", portA)}}, []Builtin{remoteEchoBuiltin()})
	expectRemoteEcho(t, a)
}

// bootWith boots a kernel with builtins and the test frontends on the bus
// described by n.
func bootWith(t *testing.T, n config.NATS, builtins []Builtin) *Kernel {
	t.Helper()
	cfg := config.Default()
	cfg.NATS = n
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Builtins: builtins, Frontends: testFrontends(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// expectRemoteEcho waits until host a knows another host provides
// echo_remote (remoteEchoBuiltin), then calls it from a and checks the
// answer came from there.
func expectRemoteEcho(t *testing.T, a *Kernel) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	testutil.WaitFor(t, testTimeout, "host A to learn that host B provides echo_remote", func() bool {
		return slices.Contains(a.Dispatcher.ExactInterceptors("tool.v1.execute.echo_remote"), "remote-echo")
	})
	res, err := a.CallTool(ctx, "alice", "echo_remote", json.RawMessage(`{"text":"hello"}`), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(res.Content, "hello for alice") {
		t.Fatalf("result %+v", res)
	}
}
