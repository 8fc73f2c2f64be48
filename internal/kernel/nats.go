package kernel

import (
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"net/url"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
)

// natsLink is the bus's reach beyond this host (DESIGN §9): the transport
// and, when this host embeds it, the NATS server.
type natsLink struct {
	Transport *natsbus.Transport
	server    *server.Server
	// cfg and opts are what startNATS made of the configuration;
	// connect opens the transport with them.
	cfg  config.NATS
	opts natsbus.Options
	// d receives the other hosts' envelopes: the dispatcher, wired in by
	// connect before the transport starts, so never absent.
	d *dispatch.Dispatcher
	// cancels interrupts the calls of requests their requester abandoned
	// (requestsAbandoned); wired in by connect.
	cancels *host.Cancels
	log     *slog.Logger
}

// startNATS starts what cfg asks for: an embedded server (a cluster node
// when it listens for routes or has some) or the options of a connection
// to an existing cluster; the transport opens once the dispatcher exists
// (connect). It returns nil when the bus stays on this host. An embedded
// node of this machine only with neither a cluster secret nor route TLS
// configured uses the one under home, created on first start.
func startNATS(cfg config.NATS, home string, log *slog.Logger, alog *audit.Log) (*natsLink, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	l := &natsLink{log: log, cfg: cfg}
	opts := natsbus.Options{HostID: cfg.HostID, Logger: log, Deliver: l.deliver, Intercept: l.intercept, RequestLost: l.requestLost,
		// A cancel reaches the host running the call (DESIGN §9).
		KernelSubscribe: []string{ipc.CancelRequestTopic}}
	if cfg.Embedded() {
		if err := defaultClusterSecret(&cfg, home, log); err != nil {
			return nil, err
		}
		auth := natsbus.NewAuthenticator(log)
		ns, err := natsbus.StartServer(natsbus.ServerOptions{
			Name: cfg.HostID, ClusterName: cfg.ClusterName, ClusterListen: cfg.Listen, Routes: cfg.Routes,
			ClusterSecretFile: cfg.ClusterSecretFile, Logger: log, Audit: alog,
			ClusterTLS: natsbus.ClusterTLS{Cert: cfg.ClusterTLSCert, Key: cfg.ClusterTLSKey, CA: cfg.ClusterTLSCA},
		}, auth)
		if err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
		l.server = ns
		opts.Server, opts.Auth = ns, auth
	} else {
		opts.URL = cfg.URL
		opts.Connect = externalOptions(cfg)
		opts.CredsDir = cfg.CredsDir
		opts.HostCredsFile = cfg.CredsFile
		if cfg.CredsDir == "" {
			log.Warn("kernel: on an external NATS cluster without [nats] creds_dir the broker enforces the credentials file's permissions, shared by every capsule of this host; set creds_dir to per-capsule credentials (docs/nats.md)")
		}
	}
	l.cfg, l.opts = cfg, opts
	return l, nil
}

// connect opens the transport, delivering the other hosts' envelopes to
// d from then on. Boot wires it once d exists and before any frontend or
// capsule is registered: nothing is attached, forwarded or received
// earlier. Nil l (no NATS) does nothing.
func (l *natsLink) connect(d *dispatch.Dispatcher, cancels *host.Cancels) error {
	if l == nil {
		return nil
	}
	l.d, l.cancels = d, cancels
	l.opts.RequestsAbandoned = l.requestsAbandoned
	tr, err := natsbus.New(l.opts)
	if err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	l.Transport = tr
	cfg := l.cfg
	l.log.Info("bus spans hosts over NATS", "host", tr.HostID(), "embedded", cfg.Embedded(), "listen", cfg.Listen, "routes", cfg.Routes, "url", redactedURL(cfg.URL),
		"route_secret", cfg.ClusterSecretFile != "", "route_tls", cfg.ClusterTLSCA != "")
	return nil
}

// defaultClusterSecret points cfg at $ASTRID_HOME/nats/cluster.secret,
// creating it, when cfg is an embedded node that authenticates its routes
// with neither a secret nor TLS and listens on, and routes to, loopback
// only: no route is ever unauthenticated (DESIGN §9), and on one machine
// every daemon of one home shares the file. Elsewhere the operator must
// share a secret among the hosts: StartServer refuses to start without.
func defaultClusterSecret(cfg *config.NATS, home string, log *slog.Logger) error {
	if cfg.ClusterSecretFile != "" || cfg.ClusterTLSCA != "" || !natsbus.LocalOnly(cfg.Listen, cfg.Routes) {
		return nil
	}
	path := config.Layout(home).ClusterSecret
	created, err := natsbus.EnsureClusterSecret(path)
	if err != nil {
		return fmt.Errorf("kernel: [nats] names no cluster_secret_file, and this home's: %w", err)
	}
	if created {
		log.Info("created the NATS cluster secret: a daemon of another home joins this cluster with --nats-cluster-secret-file naming this file",
			"file", path)
	}
	cfg.ClusterSecretFile = path
	return nil
}

// redactedURL is u with any password in it replaced, for the log.
func redactedURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "(not a URL)"
	}
	return parsed.Redacted()
}

// externalOptions are the client options of an external cluster.
func externalOptions(cfg config.NATS) []nats.Option {
	var opts []nats.Option
	if cfg.CredsFile != "" {
		opts = append(opts, natsbus.PrivateCredentials(cfg.CredsFile))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	return opts
}

func (l *natsLink) deliver(e *ipc.Envelope, runs func(capsule string) bool) error {
	return l.d.DeliverRemote(e, runs)
}

func (l *natsLink) intercept(e *ipc.Envelope, runs func(capsule string) bool) error {
	return l.d.InterceptRemote(e, runs)
}

// transport is the dispatcher's Transport: the link, which exists before
// the dispatcher and reaches the other hosts once connect has run; nil
// without NATS (an interface holding a nil *natsLink would not be nil).
func (l *natsLink) transport() dispatch.Transport {
	if l == nil {
		return nil
	}
	return l
}

// Attach, Detach and Forward make the link the dispatcher's Transport,
// and ExactInterceptors its RemoteProviders: each is the transport's. The
// dispatcher calls them for registered frontends and capsules only, all
// registered after connect.
func (l *natsLink) Attach(id string, publish, subscribe, intercepts []string) error {
	return l.Transport.Attach(id, publish, subscribe, intercepts)
}

func (l *natsLink) Detach(id string) { l.Transport.Detach(id) }

func (l *natsLink) Forward(e *ipc.Envelope) { l.Transport.Forward(e) }

func (l *natsLink) ExactInterceptors(topic string) []string {
	return l.Transport.ExactInterceptors(topic)
}

// close stops the transport, then the embedded server.
func (l *natsLink) close() {
	if l == nil {
		return
	}
	if l.Transport != nil {
		l.Transport.Close()
	}
	if l.server != nil {
		l.server.Shutdown()
		l.server.WaitForShutdown()
	}
}

// NATSTransport is the transport to the other hosts, nil when the bus stays
// on this host.
func (k *Kernel) NATSTransport() *natsbus.Transport {
	if k.nats == nil {
		return nil
	}
	return k.nats.Transport
}
