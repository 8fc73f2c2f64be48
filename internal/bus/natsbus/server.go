package natsbus

import (
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultMaxPayload is the embedded server's largest message: an encoded
// envelope of the bus's largest admitted message (1 MiB of payload) plus
// its JSON framing and headers fits well inside it.
const DefaultMaxPayload = 4 << 20

// serverStartWait bounds how long StartServer waits for the embedded server
// to accept connections.
const serverStartWait = 10 * time.Second

// ServerOptions configure an embedded nats-server.
type ServerOptions struct {
	// Name is the server's name in its cluster (default: nats-server's).
	Name string
	// Listen is host:port for client connections from other processes;
	// empty serves in-process connections only.
	Listen string
	// ClusterName, ClusterListen and Routes make the server a cluster node:
	// it accepts routes on ClusterListen (host:port; port 0 picks one) and
	// connects to Routes (nats-route://host:port).
	ClusterName   string
	ClusterListen string
	Routes        []string
	// ClusterSecretFile authenticates the routes between nodes: a node
	// accepts a route only from a peer presenting the secret this file
	// holds (mode 0600, at least MinClusterSecretLen bytes), and presents
	// it on the routes it opens. Every node of a cluster reads the same.
	// Without it or ClusterTLS, a cluster node refuses to start, on
	// loopback too (routeauth.go); EnsureClusterSecret creates one for a
	// node of this machine only.
	ClusterSecretFile string
	// ClusterTLS encrypts the routes and makes both ends of each present
	// a certificate the operator's CA signed; zero: plain TCP.
	ClusterTLS ClusterTLS
	// Logger receives nats-server's own log (serverLog); nil: discarded.
	Logger *slog.Logger
	// MaxPayload is the largest message in bytes (DefaultMaxPayload if 0).
	MaxPayload int32
	// Audit records each route a peer opens, joined or refused, in the
	// system audit chain (docs/audit.md); nil records nothing.
	Audit *audit.Log
}

// A route is pinged every routePingInterval and closed after
// routeMaxPingsOut pings in a row went unanswered.
const (
	routePingInterval = time.Second
	routeMaxPingsOut  = 3
)

// StartServer starts an embedded nats-server whose clients are
// authenticated by auth, and waits until it accepts connections. Stop it
// with Shutdown and WaitForShutdown.
func StartServer(o ServerOptions, auth *Authenticator) (*server.Server, error) {
	if auth == nil {
		return nil, errors.New("natsbus: an embedded server needs an Authenticator")
	}
	opts := &server.Options{
		ServerName:                 o.Name,
		NoSigs:                     true,
		NoLog:                      true,
		CustomClientAuthentication: auth,
		MaxPayload:                 o.MaxPayload,
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = DefaultMaxPayload
	}
	clustered := o.ClusterListen != "" || len(o.Routes) > 0
	switch {
	case o.Listen == "" && clustered:
		// nats-server starts routing only once its client listener is up
		// (a server with DontListen never does): listen on a loopback
		// port no one is told about. Only this process holds credentials
		// the authenticator accepts.
		opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	case o.Listen == "":
		opts.DontListen = true
	default:
		host, port, err := splitHostPort(o.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: listen address: %w", err)
		}
		opts.Host, opts.Port = host, port
	}
	if o.ClusterListen != "" {
		host, port, err := splitHostPort(o.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: cluster listen address: %w", err)
		}
		opts.Cluster = server.ClusterOpts{Name: o.ClusterName, Host: host, Port: port}
	}
	if clustered {
		// A peer that falls silent without closing its sockets (a
		// partition, a link down) is let go within seconds, not minutes:
		// its routes close, and NATS then answers "no responders" for its
		// hosts (inflight.go).
		opts.Cluster.PingInterval, opts.Cluster.MaxPingsOut = routePingInterval, routeMaxPingsOut
	}
	if len(o.Routes) > 0 {
		routes, err := routeURLs(o.Routes)
		if err != nil {
			return nil, fmt.Errorf("natsbus: %w", err)
		}
		opts.Routes = routes
	}
	if err := secureRoutes(opts, o, auth); err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsbus: embedded server: %w", err)
	}
	// Always: serverLog also counts refusals and violations.
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ns.SetLoggerV2(serverLog{log: log, auth: auth, audit: o.Audit}, true, false, false)
	go ns.Start()
	if !ns.ReadyForConnections(serverStartWait) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("natsbus: embedded server not ready after %s", serverStartWait)
	}
	return ns, nil
}

// splitHostPort reads host:port, port 0 meaning "any free port".
func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not a port number", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}
