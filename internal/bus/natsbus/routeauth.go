package natsbus

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
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

// secureRoutes sets opts' route authentication and TLS from o, and refuses
// a cluster node with neither a secret nor TLS, on loopback too: any
// process of this machine, under any uid, can dial a loopback port.
// opts.Cluster and opts.Routes are already set from o. Every route a peer
// opens to this node is checked by a routeGuard counting into auth.
func secureRoutes(opts *server.Options, o ServerOptions, auth *Authenticator) error {
	clustered := o.ClusterListen != "" || len(o.Routes) > 0
	if !clustered {
		return nil
	}
	if o.ClusterSecretFile == "" && !o.ClusterTLS.enabled() {
		where := "its routes"
		if o.ClusterListen != "" {
			where = "cluster listen address " + o.ClusterListen
		}
		return fmt.Errorf("%s: a cluster node needs the cluster secret ([nats] cluster_secret_file, --nats-cluster-secret-file; docs/nats.md) or route TLS (cluster_tls_cert, _key, _ca), on loopback too: a route carries every capsule's messages and may publish as any capsule, and any local user can dial a loopback port", where)
	}
	guard := &routeGuard{auth: auth, log: o.Logger, audit: o.Audit}
	if guard.log == nil {
		guard.log = auth.log
	}
	if o.ClusterSecretFile != "" {
		secret, err := readClusterSecret(o.ClusterSecretFile)
		if err != nil {
			return err
		}
		password := routePassword(secret)
		guard.password = []byte(password)
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
		guard.tls = true
	}
	opts.CustomRouterAuthentication = guard
	return nil
}

// routeGuard decides on each route connection a peer opens to this node
// (nats-server's custom router authentication, asked once the peer's
// CONNECT arrives; a peer sending anything else first is refused by
// nats-server itself): it admits a peer presenting the cluster secret's
// password and, with route TLS, a certificate the operator's CA signed.
// Each decision is logged with the peer's address; joins are counted here,
// refusals by serverLog, which also sees those made before a CONNECT.
type routeGuard struct {
	auth *Authenticator
	log  *slog.Logger
	// password is routePassword of the secret; nil without a secret.
	password []byte
	// tls: the peer must have presented a verified certificate.
	tls bool
	// audit records each decision (nil: none).
	audit *audit.Log
}

// Check implements server.Authentication.
func (g *routeGuard) Check(c server.ClientAuthentication) bool {
	opts := c.GetOpts()
	if why := g.refusal(c, opts); why != "" {
		g.log.Warn("natsbus: route refused", "remote", c.RemoteAddress(), "reason", why)
		auditPeer(g.audit, audit.KindPeerRefused, remoteOf(c), why)
		return false
	}
	g.auth.routesJoined.Add(1)
	g.log.Info("natsbus: route joined", "remote", c.RemoteAddress(), "peer", opts.Name)
	auditPeer(g.audit, audit.KindPeerJoined, remoteOf(c), "peer "+opts.Name)
	return true
}

func remoteOf(c server.ClientAuthentication) string {
	if a := c.RemoteAddress(); a != nil {
		return a.String()
	}
	return ""
}

// auditPeer queues a route's join or refusal in the system audit chain
// (queued: the decision is nats-server's to act on at once).
func auditPeer(l *audit.Log, kind audit.Kind, remote, why string) {
	if l == nil {
		return
	}
	if len(why) > audit.MaxFieldBytes {
		why = why[:audit.MaxFieldBytes]
	}
	outcome := "joined"
	if kind == audit.KindPeerRefused {
		outcome = "refused"
	}
	_ = l.Enqueue(audit.Entry{Kind: kind, Subject: remote, Outcome: outcome, Detail: map[string]string{"reason": why}})
}

// refusal is why the route connection c is refused, or "".
func (g *routeGuard) refusal(c server.ClientAuthentication, opts *server.ClientOpts) string {
	if c.Kind() != server.ROUTER || opts == nil {
		return "not a route connection"
	}
	if g.password != nil {
		switch {
		case opts.Username == "" && opts.Password == "":
			return "no cluster secret presented"
		case subtle.ConstantTimeCompare([]byte(opts.Username), []byte(routeUser)) != 1,
			subtle.ConstantTimeCompare([]byte(opts.Password), g.password) != 1:
			return "wrong cluster secret"
		}
	}
	if g.tls {
		// The handshake already refused a certificate the CA did not
		// sign; this refuses a connection that skipped it.
		if st := c.GetTLSConnectionState(); st == nil || len(st.VerifiedChains) == 0 {
			return "no certificate of the cluster's CA"
		}
	}
	return ""
}

// LocalOnly reports whether an embedded node listening on listen (host:port,
// or "" for none) with routes to routes is reachable from this machine only
// and reaches only it: the one case where the daemon may create the cluster
// secret itself (EnsureClusterSecret), no other host needing a copy.
func LocalOnly(listen string, routes []string) bool {
	if listen != "" {
		host, _, err := net.SplitHostPort(listen)
		if err != nil || !loopbackHost(host) {
			return false
		}
	}
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil || !loopbackHost(u.Hostname()) {
			return false
		}
	}
	return listen != "" || len(routes) > 0
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
