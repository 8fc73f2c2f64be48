package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// NATS configures the bus across hosts (DESIGN §9, docs/nats.md). With none
// of Listen, Routes and URL set, the bus stays in memory on this host.
type NATS struct {
	// HostID names this host on the bus; unique in the cluster. Empty: a
	// random id at each start.
	HostID string `toml:"host_id"`
	// Listen is the host:port this host's embedded NATS server accepts
	// its cluster peers' routes on; Routes are the peers'
	// (nats-route://host:port). The embedded server takes no client
	// connections from outside the process.
	Listen      string   `toml:"listen"`
	Routes      []string `toml:"routes"`
	ClusterName string   `toml:"cluster_name"`
	// ClusterSecretFile authenticates the routes between embedded nodes:
	// a file (mode 0600) holding the secret every node of the cluster
	// shares. Without it or cluster TLS, a node listening on (and routing
	// to) loopback only uses $ASTRID_HOME/nats/cluster.secret, created on
	// first start (Paths.ClusterSecret), and any other node refuses to
	// start (natsbus.StartServer).
	ClusterSecretFile string `toml:"cluster_secret_file"`
	// ClusterTLSCert, ClusterTLSKey and ClusterTLSCA encrypt the routes:
	// this node's certificate and key, and the CA that signed every
	// node's. All three or none.
	ClusterTLSCert string `toml:"cluster_tls_cert"`
	ClusterTLSKey  string `toml:"cluster_tls_key"`
	ClusterTLSCA   string `toml:"cluster_tls_ca"`
	// URL is an existing cluster to connect to instead of embedding one,
	// with a credentials file and TLS files if it needs them.
	URL       string `toml:"url"`
	CredsFile string `toml:"creds_file"`
	// CredsDir holds one credentials file per capsule, <capsule id>.creds,
	// minted by the operator for this host (astrid nats creds): each
	// capsule connects with its own, so the cluster enforces each
	// capsule's grants; CredsFile then serves the host's own connections.
	CredsDir string `toml:"creds_dir"`
	TLSCA    string `toml:"tls_ca"`
	TLSCert  string `toml:"tls_cert"`
	TLSKey   string `toml:"tls_key"`
}

// Enabled reports whether the bus spans hosts.
func (n NATS) Enabled() bool { return n.Listen != "" || len(n.Routes) > 0 || n.URL != "" }

// Embedded reports whether this host runs its own NATS server.
func (n NATS) Embedded() bool { return n.Enabled() && n.URL == "" }

// Check reports n's problems, for settings that did not come from a file
// (the daemon's flags); Load checks the file's.
func (n NATS) Check() error {
	var errs []error
	n.validate(func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	})
	return errors.Join(errs...)
}

// validate reports the NATS settings' problems through bad.
func (n NATS) validate(bad func(key, format string, args ...any)) {
	if n.HostID != "" && (ipc.ValidateTopic(n.HostID) != nil || strings.Contains(n.HostID, ".")) {
		bad("nats.host_id", "%q must be one topic segment: ASCII letters, digits, '-', '_' or ':'", n.HostID)
	}
	if n.URL != "" {
		if n.Listen != "" || len(n.Routes) > 0 {
			bad("nats.url", "connect to a cluster (url) or embed a server (listen, routes), not both")
		}
		if _, err := url.Parse(n.URL); err != nil {
			bad("nats.url", "%v", err)
		}
		if n.CredsDir != "" && n.HostID == "" {
			// Each file was minted for one host; a random id would
			// announce a host the operator never named.
			bad("nats.creds_dir", "needs host_id: the host the operator minted the credentials for")
		}
		for _, key := range []struct{ name, v string }{{"nats.cluster_secret_file", n.ClusterSecretFile}, {"nats.cluster_tls_cert", n.ClusterTLSCert}, {"nats.cluster_tls_key", n.ClusterTLSKey}, {"nats.cluster_tls_ca", n.ClusterTLSCA}} {
			if key.v != "" {
				bad(key.name, "applies to an embedded server (listen, routes) only")
			}
		}
	} else {
		for _, key := range []struct{ name, v string }{{"nats.creds_file", n.CredsFile}, {"nats.creds_dir", n.CredsDir}, {"nats.tls_ca", n.TLSCA}, {"nats.tls_cert", n.TLSCert}, {"nats.tls_key", n.TLSKey}} {
			if key.v != "" {
				bad(key.name, "applies to a cluster reached by url only")
			}
		}
	}
	if (n.TLSCert == "") != (n.TLSKey == "") {
		bad("nats.tls_cert", "tls_cert and tls_key go together")
	}
	if tls := []string{n.ClusterTLSCert, n.ClusterTLSKey, n.ClusterTLSCA}; slices.Contains(tls, "") && slices.ContainsFunc(tls, func(f string) bool { return f != "" }) {
		bad("nats.cluster_tls_cert", "cluster_tls_cert, cluster_tls_key and cluster_tls_ca go together")
	}
	if n.Listen != "" {
		if _, _, err := net.SplitHostPort(n.Listen); err != nil {
			bad("nats.listen", "%q is not host:port: %v", n.Listen, err)
		}
	}
	for i, r := range n.Routes {
		u, err := url.Parse(r)
		switch {
		case err != nil || u.Scheme != "nats-route" || u.Host == "":
			bad(fmt.Sprintf("nats.routes[%d]", i), "%q is not nats-route://host:port", r)
		case u.User != nil:
			// Routes are logged; the secret belongs in its file.
			bad(fmt.Sprintf("nats.routes[%d]", i), "%q carries credentials: put the cluster's secret in cluster_secret_file", u.Redacted())
		}
	}
}
