package main

import (
	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
)

// natsFlags are the daemon's flags for a bus across hosts (docs/nats.md);
// each one set overrides its config.toml [nats] key.
type natsFlags struct {
	hostID, listen, url, creds, credsDir, tlsCA, tlsCert, tlsKey string
	clusterSecret, clusterTLSCert, clusterTLSKey, clusterTLSCA   string
	routes                                                       []string
}

func (f *natsFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "nats-listen", "", "embed a NATS server, a cluster node taking its peers' routes on this host:port (docs/nats.md)")
	fs.StringSliceVar(&f.routes, "nats-routes", nil, "the cluster peers' route addresses (nats-route://host:port,...)")
	fs.StringVar(&f.clusterSecret, "nats-cluster-secret-file", "", "file (mode 0600) holding the secret the cluster's embedded nodes present on their routes (default on loopback: $ASTRID_HOME/nats/cluster.secret, created on first start); required beyond loopback without route TLS")
	fs.StringVar(&f.clusterTLSCert, "nats-cluster-tls-cert", "", "this node's certificate for TLS on the routes (with --nats-cluster-tls-key and --nats-cluster-tls-ca)")
	fs.StringVar(&f.clusterTLSKey, "nats-cluster-tls-key", "", "the route certificate's key")
	fs.StringVar(&f.clusterTLSCA, "nats-cluster-tls-ca", "", "CA that signed every node's route certificate")
	fs.StringVar(&f.url, "nats-url", "", "join an existing NATS cluster at this URL instead of embedding a server")
	fs.StringVar(&f.creds, "nats-creds", "", "credentials file for --nats-url")
	fs.StringVar(&f.credsDir, "nats-creds-dir", "", "directory of per-capsule credentials (<capsule id>.creds) for --nats-url, minted with astrid nats creds")
	fs.StringVar(&f.tlsCA, "nats-tls-ca", "", "CA file for --nats-url")
	fs.StringVar(&f.tlsCert, "nats-tls-cert", "", "client certificate for --nats-url (with --nats-tls-key)")
	fs.StringVar(&f.tlsKey, "nats-tls-key", "", "the client certificate's key")
	fs.StringVar(&f.hostID, "nats-host-id", "", "this host's name on the bus, unique in the cluster (default: random)")
	cmd.MarkFlagsMutuallyExclusive("nats-url", "nats-listen")
	cmd.MarkFlagsMutuallyExclusive("nats-url", "nats-routes")
	cmd.MarkFlagsRequiredTogether("nats-tls-cert", "nats-tls-key")
	for _, embedded := range []string{"nats-cluster-secret-file", "nats-cluster-tls-cert", "nats-cluster-tls-key", "nats-cluster-tls-ca"} {
		cmd.MarkFlagsMutuallyExclusive("nats-url", embedded)
	}
}

// apply overrides cfg's [nats] with the flags the command line set. Choosing
// a mode on the command line (embedded or URL) drops the other mode's
// settings from the file.
func (f *natsFlags) apply(cmd *cobra.Command, cfg *config.Config) {
	set := cmd.Flags().Changed
	n := &cfg.NATS
	if set("nats-listen") || set("nats-routes") {
		n.URL, n.CredsFile, n.CredsDir, n.TLSCA, n.TLSCert, n.TLSKey = "", "", "", "", "", ""
	}
	if set("nats-url") {
		n.Listen, n.Routes = "", nil
		n.ClusterSecretFile, n.ClusterTLSCert, n.ClusterTLSKey, n.ClusterTLSCA = "", "", "", ""
	}
	for _, o := range []struct {
		flag string
		to   *string
		v    string
	}{
		{"nats-listen", &n.Listen, f.listen}, {"nats-url", &n.URL, f.url}, {"nats-creds", &n.CredsFile, f.creds},
		{"nats-creds-dir", &n.CredsDir, f.credsDir},
		{"nats-tls-ca", &n.TLSCA, f.tlsCA}, {"nats-tls-cert", &n.TLSCert, f.tlsCert}, {"nats-tls-key", &n.TLSKey, f.tlsKey},
		{"nats-host-id", &n.HostID, f.hostID},
		{"nats-cluster-secret-file", &n.ClusterSecretFile, f.clusterSecret},
		{"nats-cluster-tls-cert", &n.ClusterTLSCert, f.clusterTLSCert}, {"nats-cluster-tls-key", &n.ClusterTLSKey, f.clusterTLSKey},
		{"nats-cluster-tls-ca", &n.ClusterTLSCA, f.clusterTLSCA},
	} {
		if set(o.flag) {
			*o.to = o.v
		}
	}
	if set("nats-routes") {
		n.Routes = f.routes
	}
}
