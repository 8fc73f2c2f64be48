package kernel

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// TestKernelsRouteWithTheClusterSecret: [nats] cluster_secret_file reaches
// the embedded node: two kernels holding it form one bus; a secret file
// others may read, or a node listening beyond loopback without one, stops
// Boot with an error naming the file or the key.
func TestKernelsRouteWithTheClusterSecret(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "cluster.secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("5e", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	portA, portB := freePort(t), freePort(t)
	a := bootHost(t, config.NATS{HostID: "hostA", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portA), ClusterSecretFile: secret})
	bootHost(t, config.NATS{HostID: "hostB", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portB), ClusterSecretFile: secret,
		Routes: []string{fmt.Sprintf("nats-route://127.0.0.1:%d", portA)}})
	testutil.WaitFor(t, testTimeout, "host A to hear of host B", func() bool {
		return slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool { return h.ID == "hostB" })
	})

	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		n          config.NATS
	}{
		{"a secret file others may read", secret, config.NATS{ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t)), ClusterSecretFile: secret}},
		{"listening beyond loopback without a secret", "cluster_secret_file", config.NATS{ClusterName: "t", Listen: "0.0.0.0:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.NATS = tc.n
			k, err := Boot(context.Background(), Options{Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Builtins: []Builtin{}})
			if err == nil {
				k.Close()
				t.Fatal("the kernel booted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Boot = %v, want it to name %s", err, tc.want)
			}
		})
	}
}

// TestKernelCreatesItsClusterSecret: a node listening on loopback with no
// cluster secret configured creates one under its home (mode 0600) and
// authenticates its routes with it; a kernel of another home joins by
// naming that file, one holding its own home's secret is refused (logged
// and counted), and the node restarted on the same home keeps the secret.
func TestKernelCreatesItsClusterSecret(t *testing.T) {
	homeA := t.TempDir()
	portA := freePort(t)
	nodeA := config.NATS{HostID: "hostA", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", portA)}
	var logA testutil.SyncBuffer
	a := bootOnHome(t, homeA, nodeA, slog.New(slog.NewTextHandler(&logA, nil)))
	path := config.Layout(homeA).ClusterSecret
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("%s: mode %04o, want 0600", path, info.Mode().Perm())
	}
	if !strings.Contains(logA.String(), "created the NATS cluster secret") || !strings.Contains(logA.String(), path) {
		t.Fatalf("the creation was not logged:\n%s", logA.String())
	}
	secret, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	seed := []string{fmt.Sprintf("nats-route://127.0.0.1:%d", portA)}
	// A kernel of another home creates a secret of its own there and is
	// refused.
	bootHost(t, config.NATS{HostID: "stranger", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Routes: seed})
	testutil.WaitFor(t, testTimeout, "host A to refuse the stranger's routes", func() bool {
		return a.NATSTransport().Stats().Node.RoutesRefused > 0
	})
	bootHost(t, config.NATS{HostID: "hostB", ClusterName: "t", Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Routes: seed, ClusterSecretFile: path})
	testutil.WaitFor(t, testTimeout, "host A to hear of host B", func() bool {
		return slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool { return h.ID == "hostB" })
	})
	if slices.ContainsFunc(a.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool { return h.ID == "stranger" }) {
		t.Fatal("host A hears the stranger")
	}
	if out := logA.String(); !strings.Contains(out, "route refused") || !strings.Contains(out, "route joined") {
		t.Fatalf("the route refusals and joins were not logged:\n%s", out)
	}

	a.Close()
	// Both decisions are in host A's system audit chain.
	kinds := map[audit.Kind]int{}
	if err := audit.Show(config.Layout(homeA).Audit, audit.Filter{Principals: []string{""}}, func(r audit.Record) error {
		kinds[r.Entry.Kind]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if kinds[audit.KindPeerJoined] == 0 || kinds[audit.KindPeerRefused] == 0 {
		t.Fatalf("audit entries of host A: %v, want peer.joined and peer.refused", kinds)
	}
	bootOnHome(t, homeA, nodeA, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if again, err := os.ReadFile(path); err != nil || string(again) != string(secret) {
		t.Fatalf("the secret changed across a restart (%v)", err)
	}
}

// bootOnHome boots a kernel on home with no capsule, on the bus n.
func bootOnHome(t *testing.T, home string, n config.NATS, log *slog.Logger) *Kernel {
	t.Helper()
	cfg := config.Default()
	cfg.NATS = n
	k, err := Boot(context.Background(), Options{Home: home, Workspace: t.TempDir(), Config: cfg, Logger: log, Builtins: []Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// An external cluster's URL is logged without its password.
func TestNATSURLIsLoggedWithoutItsPassword(t *testing.T) {
	for in, want := range map[string]string{
		"nats://alice:s3cret@nats.example:4222": "nats://alice:xxxxx@nats.example:4222",
		"tls://nats.example:4222":               "tls://nats.example:4222",
		"":                                      "",
	} {
		if got := redactedURL(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("redactedURL(%q) = %q, want %q", in, got, want)
		}
	}
}
