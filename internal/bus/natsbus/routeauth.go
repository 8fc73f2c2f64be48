package natsbus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/nats-io/nats-server/v2/server"
)

// Routes between embedded nodes carry every capsule's messages, and a
// message that arrives over a route is not held to any client's
// permissions: whoever routes into the cluster reads everything and can
// publish as any capsule. A node therefore accepts a route only from a peer
// presenting the cluster's secret, and, with ClusterTLS, only over TLS from
// a peer whose certificate the operator's CA signed.

// routeUser is the user name a node presents on the routes it opens; the
// secret makes the password.
const routeUser = "astrid-route"

// MinClusterSecretLen is the shortest cluster secret accepted, in bytes
// (`openssl rand -hex 32` prints 64).
const MinClusterSecretLen = 32

// ClusterTLS names the PEM files that encrypt the routes between embedded
// nodes: this node's certificate and key, which it presents on the routes
// it accepts and on those it opens, and the CA that must have signed every
// peer's. All three or none.
type ClusterTLS struct {
	Cert, Key, CA string
}

// enabled reports whether the routes run over TLS.
func (c ClusterTLS) enabled() bool { return c.Cert != "" || c.Key != "" || c.CA != "" }

// readClusterSecret reads the cluster secret from path, which only its
// owner may read. Its surrounding white space is not part of it. Errors
// name the file, never its content.
func readClusterSecret(path string) ([]byte, error) {
	b, _, err := readPrivateFile(path, "cluster secret", "the key to the cluster")
	if err != nil {
		return nil, err
	}
	secret := bytes.TrimSpace(b)
	if len(secret) < MinClusterSecretLen {
		return nil, fmt.Errorf("cluster secret %s: %d bytes, want at least %d (`openssl rand -hex 32 > %s`)", path, len(secret), MinClusterSecretLen, path)
	}
	return secret, nil
}

// routePassword is the password a node presents for secret: a digest, in
// hex, so that no byte of the file reaches the route protocol as written
// (nats-server would take a "$2a$" prefix for a bcrypt hash, and a URL's
// user info would need some characters escaped).
func routePassword(secret []byte) string {
	h := sha256.New()
	h.Write([]byte("astrid nats route password\x00"))
	h.Write(secret)
	return hex.EncodeToString(h.Sum(nil))
}

// secureRoutes sets opts' route authorization and TLS from o, and refuses a
// node that would accept routes from beyond this machine with neither.
// opts.Cluster and opts.Routes are already set from o.
func secureRoutes(opts *server.Options, o ServerOptions) error {
	if o.ClusterSecretFile != "" {
		secret, err := readClusterSecret(o.ClusterSecretFile)
		if err != nil {
			return err
		}
		password := routePassword(secret)
		opts.Cluster.Username, opts.Cluster.Password = routeUser, password
		// The routes this node opens present the same credentials; those
		// it learns from its peers (implicit routes) get them from
		// opts.Cluster.
		for _, u := range opts.Routes {
			u.User = url.UserPassword(routeUser, password)
		}
	}
	if o.ClusterTLS.enabled() {
		t := o.ClusterTLS
		if t.Cert == "" || t.Key == "" || t.CA == "" {
			return errors.New("cluster TLS needs a certificate, its key and the CA that signs every node's certificate")
		}
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: true})
		if err != nil {
			return fmt.Errorf("cluster TLS: %w", err)
		}
		// The same config serves the routes this node opens, whose peer
		// must present a certificate of the same CA.
		tc.RootCAs = tc.ClientCAs
		opts.Cluster.TLSConfig = tc
		// nats-server defaults the handshake's timeout only for a node
		// that listens for routes; one that only opens them would time
		// out at once.
		opts.Cluster.TLSTimeout = server.TLS_TIMEOUT.Seconds()
	}
	if o.ClusterListen != "" && o.ClusterSecretFile == "" && !o.ClusterTLS.enabled() && !loopbackHost(opts.Cluster.Host) {
		return fmt.Errorf("cluster listen address %s accepts routes from other machines, and a route carries every capsule's messages and may publish as any capsule: set a cluster secret ([nats] cluster_secret_file, --nats-cluster-secret-file; docs/nats.md) or route TLS (cluster_tls_cert, _key, _ca), or listen on loopback", o.ClusterListen)
	}
	return nil
}

// routeURLs parses the peers' route addresses. An address carrying
// credentials is refused: the cluster secret supplies them, and the
// addresses are logged.
func routeURLs(routes []string) ([]*url.URL, error) {
	urls := make([]*url.URL, 0, len(routes))
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("route %d: not a URL", len(urls))
		}
		if u.User != nil {
			return nil, fmt.Errorf("route %s carries credentials: set the cluster secret instead", u.Redacted())
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// loopbackHost reports whether host names only this machine: "localhost"
// or a loopback address. An empty host (every interface) does not.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
