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
