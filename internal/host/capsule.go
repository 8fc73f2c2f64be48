package host

import (
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/internal/host/netio"
	"github.com/astrid-go/astrid/internal/host/proc"
	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/internal/principals"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// Deps are the kernel services every capsule's host shares.
type Deps struct {
	Dispatcher *dispatch.Dispatcher
	Store      *store.Store
	Cancels    *Cancels
	Logger     *slog.Logger
	// Workspace is the directory `*` grants; HomesDir holds principals'
	// homes ($ASTRID_HOME/home).
	Workspace string
	HomesDir  string
	// RunDir is $ASTRID_HOME/run, where run:// socket grants resolve.
	RunDir string
	// Home is $ASTRID_HOME, which no fs grant reaches (gate.Env.Home);
	// empty only in tests that do not model it.
	Home string
	// Egress carries the operator allowlist and, in tests, an injected
	// resolver and dialer. CheckHost/CheckConn are filled in per capsule.
	Egress egress.Options
	// Ledger is the kernel's CPU ledger; nil means no CPU accounting.
	Ledger *ledger.Ledger
	// Grants answers which [capabilities] a loaded capsule holds (the
	// kernel's registry), for hostapi.Sys.HoldsGrant; nil makes that
	// call answer not supported.
	Grants func(capsuleID string) (caps manifest.Capabilities, loaded bool)
	// Scopes are the open request scopes (scope.go): the workspace and
	// settings of each client's requests. Nil: every call is unscoped.
	Scopes *Scopes
	// ConfigFallback are the [env] values the daemon took from its own
	// environment (capsule id → key → value): a client's own settings
	// come before them (scope.go).
	ConfigFallback map[string]map[string]string
	// Bus is where the approval call hears its answers; Approvals holds
	// who may give them, how long a question waits and the session
	// allowances. Without both the approval call is unavailable.
	Bus       *bus.Bus
	Approvals *ask.Approvals
	// Background holds the background processes of every capsule, so
	// that a persistent one outlives a reload of its capsule; the
	// kernel closes it when it stops. Nil gives each capsule a registry
	// of its own that ends with it (tests).
	Background *proc.Background
	// Sandbox confines the processes capsules start (internal/host/proc);
	// the zero value enforces.
	Sandbox proc.Sandbox
	// Elicits holds who may answer the elicit call and how long a question
	// waits; without it (and Bus) the elicit call is unavailable.
	Elicits *ask.Elicits
	// UplinkActsFor answers whether an installed uplink capsule may act
	// for principal (config [uplink] acts_for); a built-in uplink acts for
	// anyone (Capsule.ActForAnyone). Nil: an installed uplink acts for no
	// one.
	UplinkActsFor func(capsule, principal string) bool
	// Audit is the host's signed audit chain (internal/audit): the
	// AuditRecord call appends to it, and the approval call records its
	// questions and answers. Nil records nothing.
	Audit *audit.Log
	// Caps keeps the capability tokens (internal/caps); nil makes the
	// capability calls unavailable.
	Caps *caps.Book
	// Agents are the operator's agents (internal/principals), for
	// AgentPolicy; nil: no principal has limits.
	Agents *principals.Cache
}

// Capsule is the host side of one loaded capsule.
type Capsule struct {
	deps   Deps
	id     string
	gate   *gate.Gate
	http   *http.Client
	config map[string]string
	log    *slog.Logger
	roots  roots
	// manifest is what the operator reviewed: every publish passes
	// through its StampPublish (the [[tool]] entries' word over the
	// code's, seed 003).
	manifest *manifest.Manifest

	// stream is the streaming HTTP client of HTTPClient, built once.
	streamOnce sync.Once
	stream     *http.Client
	streamErr  error

	kvMu sync.Mutex
	kvs  map[string]*store.KV // by principal, see kvOf

	// procs are the processes the capsule's calls started: the process
	// calls' children and the background processes of this instance.
	procs *proc.Instance

	// nets are the capsule's open streams and listeners
	// (internal/host/netio); dialer, built once, is how its streams
	// reach the network (net.go).
	nets     *netio.Table
	dialOnce sync.Once
	dialer   *egress.Dialer
	dialErr  error
	// uplink is [capabilities] uplink: the capsule may act for other
	// principals (uplink.go) and hold more sockets. actsForAnyone is set
	// for a built-in uplink, which maps its clients to principals itself;
	// an installed one acts only for those Deps.UplinkActsFor names.
	uplink        bool
	actsForAnyone bool
	// consent coalesces the questions about local addresses (consent.go).
	consent consents
	// toolMiddleware is [capabilities] tool_middleware: the capsule may
	// record tool calls in the audit chain (audit.go).
	toolMiddleware bool
	// quotaAudited is the Unix second of the last quota.refused entry it
	// recorded (auditQuota).
	quotaAudited atomic.Int64
	// secrets are the [env] keys of type secret: a stored one is not
	// handed to a call whose scope chose an endpoint (Config).
	secrets map[string]bool
	// env are the manifest's [env] keys (env.go: each principal's own
	// values, the onboarding question for a required one).
	env        map[string]manifest.EnvVar
	onboarding onboarding
}

// NewCapsule binds the host to capsule m installed in installDir; config
// holds the capsule's operator-set [env] values.
func NewCapsule(deps Deps, m *manifest.Manifest, installDir string, config map[string]string) (*Capsule, error) {
	id := m.ID()
	g, err := gate.New(m.Capabilities, gate.Env{InstallDir: installDir, Workspace: deps.Workspace, HomesDir: deps.HomesDir, RunDir: deps.RunDir, Home: deps.Home})
	if err != nil {
		return nil, fmt.Errorf("host: capsule %s: %w", id, err)
	}
	eo := deps.Egress
	eo.CheckHost = g.Net
	eo.CheckConn = g.NetConnect
	if eo.Logger == nil {
		eo.Logger = deps.Logger
	}
	client, err := egress.NewClient(eo)
	if err != nil {
		return nil, fmt.Errorf("host: capsule %s: %w", id, err)
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	if deps.Cancels == nil {
		deps.Cancels = NewCancels()
	}
	c := &Capsule{deps: deps, id: id, gate: g, http: client, config: config, log: log.With("capsule", id)}
	// Without the kernel's Background the instance keeps a registry of
	// its own that ends with it (tests).
	c.procs = proc.NewInstance(id, c.log, deps.Background)
	c.env = make(map[string]manifest.EnvVar, len(m.Env))
	for _, e := range m.Env {
		c.env[e.Key] = e
		if e.Type == manifest.EnvSecret {
			if c.secrets == nil {
				c.secrets = map[string]bool{}
			}
			c.secrets[e.Key] = true
		}
	}
	netLimit := 0 // hostapi.MaxNetHandles
	if m.Capabilities.Uplink {
		c.uplink = true
		netLimit = hostapi.MaxUplinkNetHandles
	}
	c.nets = netio.NewTable(netLimit, c.log)
	c.toolMiddleware = m.Capabilities.ToolMiddleware
	c.manifest = m
	return c, nil
}

// ID is the capsule id.
func (c *Capsule) ID() string { return c.id }

// Gate is the capsule's capability gate (engines that spawn processes ask it).
func (c *Capsule) Gate() *gate.Gate { return c.gate }

// Close releases what the capsule holds across calls (the open directories
// of its file grants, its sockets). The runtime calls it once the capsule is unloaded; a
// call made after Close still works, opening what it needs for itself.
func (c *Capsule) Close() {
	c.roots.close()
	c.nets.CloseAll()
	c.procs.Close()
}

// Discard ends what the capsule leaves behind when it is unloaded for good
// rather than reloaded: its persistent background processes. Call it
// after Close.
func (c *Capsule) Discard() {
	c.procs.Discard()
}

// Ledger is the kernel's CPU ledger, which engines charge a call's guest time
// to (nil when CPU is not accounted).
func (c *Capsule) Ledger() *ledger.Ledger { return c.deps.Ledger }
