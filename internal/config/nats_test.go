package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNATSSettingsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, body, key string
	}{
		{"host id with a dot", `host_id = "a.b"`, "nats.host_id"},
		{"host id with a space", `host_id = "a b"`, "nats.host_id"},
		{"url and an embedded server", "url = \"nats://x:4222\"\nlisten = \"127.0.0.1:6222\"", "nats.url"},
		{"listen without a port", `listen = "127.0.0.1"`, "nats.listen"},
		{"route without its scheme", `routes = ["10.0.0.2:6222"]`, "nats.routes[0]"},
		{"credentials with an embedded server", "listen = \"127.0.0.1:6222\"\ncreds_file = \"/x.creds\"", "nats.creds_file"},
		{"a credentials directory with an embedded server", "listen = \"127.0.0.1:6222\"\ncreds_dir = \"/creds\"", "nats.creds_dir"},
		{"a credentials directory without the host it was minted for", "url = \"nats://x:4222\"\ncreds_dir = \"/creds\"", "nats.creds_dir"},
		{"a certificate without its key", "url = \"tls://x:4222\"\ntls_cert = \"/c.pem\"", "nats.tls_cert"},
		{"a cluster secret with an external cluster", "url = \"nats://x:4222\"\ncluster_secret_file = \"/s\"", "nats.cluster_secret_file"},
		{"cluster TLS with an external cluster", "url = \"nats://x:4222\"\ncluster_tls_ca = \"/ca.pem\"", "nats.cluster_tls_ca"},
		{"a route certificate without its CA", "listen = \"127.0.0.1:6222\"\ncluster_tls_cert = \"/c.pem\"\ncluster_tls_key = \"/k.pem\"", "nats.cluster_tls_cert"},
		{"a route CA alone", "listen = \"127.0.0.1:6222\"\ncluster_tls_ca = \"/ca.pem\"", "nats.cluster_tls_cert"},
		{"credentials in a route address", `routes = ["nats-route://astrid-route:hunter2@10.0.0.2:6222"]`, "nats.routes[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte("[nats]\n"+tc.body+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("Load = %v, want a problem naming %s", err, tc.key)
			}
		})
	}
}

// A route address carrying credentials is refused without repeating them:
// the routes are logged at start.
func TestNATSRouteCredentialsAreNotRepeated(t *testing.T) {
	err := NATS{Routes: []string{"nats-route://astrid-route:hunter2@10.0.0.2:6222"}}.Check()
	if err == nil || !strings.Contains(err.Error(), "cluster_secret_file") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Check = %v", err)
	}
	if err := (NATS{Listen: "0.0.0.0:6222", ClusterSecretFile: "/s", ClusterTLSCert: "/c", ClusterTLSKey: "/k", ClusterTLSCA: "/ca"}).Check(); err != nil {
		t.Fatalf("a node with a secret and route TLS: %v", err)
	}
}

func TestNATSModes(t *testing.T) {
	for _, tc := range []struct {
		n                 NATS
		enabled, embedded bool
	}{
		{NATS{}, false, false},
		{NATS{ClusterName: "astrid", HostID: "a"}, false, false},
		{NATS{Listen: "127.0.0.1:6222"}, true, true},
		{NATS{Routes: []string{"nats-route://h:1"}}, true, true},
		{NATS{URL: "nats://h:4222"}, true, false},
	} {
		if tc.n.Enabled() != tc.enabled || tc.n.Embedded() != tc.embedded {
			t.Errorf("%+v: enabled %v embedded %v", tc.n, tc.n.Enabled(), tc.n.Embedded())
		}
	}
}

func TestNATSCheck(t *testing.T) {
	if err := (NATS{Listen: "127.0.0.1:6222", Routes: []string{"nats-route://h:6222"}}).Check(); err != nil {
		t.Fatalf("a valid embedded node: %v", err)
	}
	err := NATS{URL: "nats://h:4222", Listen: "x"}.Check()
	if err == nil || !strings.Contains(err.Error(), "nats.url") || !strings.Contains(err.Error(), "nats.listen") {
		t.Fatalf("Check = %v, want both problems", err)
	}
}
