package kernel

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/internal/host/proc"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/internal/principals"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/telemetry"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Options configure a kernel.
type Options struct {
	// Home is $ASTRID_HOME (state, homes, capsules). Required.
	Home string
	// Workspace is the directory the agent works on. Required.
	Workspace string
	Config    config.Config
	Logger    *slog.Logger
	// Builtins are the capsules linked into the binary, loaded natively
	// in this order before the installed ones (cmd/astrid passes the
	// product's; the kernel imports none).
	Builtins []Builtin
	// Frontends are the identities frontends (the CLI's tool client, later
	// the uplink) publish and subscribe under: registered with the
	// dispatcher at boot, before any capsule, and reserved against capsule
	// ids.
	Frontends []dispatch.CapsuleACL
	// Egress overrides the egress options (tests inject resolver/dialer).
	Egress *egress.Options
	// Ledger overrides the CPU ledger built from Config (tests inject a
	// clock).
	Ledger *ledger.Ledger
	// WasmCache is where compiled wasm code is kept; empty: the home's
	// cache/wasm. Compiled code is keyed by the module's digest and the
	// wazero version, so several homes may share one directory.
	WasmCache string
	// WatchCapsules reloads installed capsules whose files change while the
	// kernel runs (a long-lived kernel wants it; a one-shot command not).
	WatchCapsules bool
	// ConfigFallback holds, per capsule id, [env] values to use where the
	// operator stored none (cmd/astrid fills it from the environment
	// variables people already set for a provider: OPENAI_API_KEY, ...).
	ConfigFallback map[string]map[string]string
	// LoadInBackground makes Boot return once the built-ins are loaded,
	// the installed capsules loading on (runtime.Start): a one-shot command
	// then waits only for what it needs (Runtime.WaitForTool), so a capsule
	// slow to get ready does not delay it. Close cancels what is still
	// loading.
	LoadInBackground bool
	// AskEnv, set when a person is present (a command in a terminal), is
	// asked for the required [env] values a capsule has none of; what it
	// returns is stored as `astrid capsule env set` stores it and the load
	// goes on. Nil: such a capsule fails to load, its error naming the
	// command that sets each value.
	AskEnv EnvAsker
	// OnboardMissingEnv (the daemon) loads a capsule whose required [env]
	// values are unset and asks each principal for them on first use
	// (runtime.Options.OnboardMissingEnv).
	OnboardMissingEnv bool
	// Tracer overrides the tracer built from Config.Telemetry (tests and
	// benchmarks inject one with their own exporter). The kernel shuts it
	// down at Close.
	Tracer *telemetry.Tracer
	// AuditOff boots without the audit chain (benchmarks comparing its
	// cost); every other kernel records (DESIGN §13).
	AuditOff bool
}

// Kernel is one running kernel.
type Kernel struct {
	opts       Options
	log        *slog.Logger
	Bus        *bus.Bus
	Dispatcher *dispatch.Dispatcher
	Store      *store.Store
	Registry   *capsule.Registry
	// Runtime loads, unloads and reloads capsules; it is the only writer
	// of Registry.
	Runtime *runtime.Runtime
	Ledger  *ledger.Ledger
	Cancels *host.Cancels
	// nats is the bus's reach beyond this host; nil when it stays here.
	nats *natsLink
	// Tracer makes the spans of agent turns; nil when tracing is off
	// (config [telemetry] tracing), and then nothing observes the
	// dispatcher for it.
	Tracer *telemetry.Tracer
	// Audit is the signed audit chain (internal/audit), signed with the
	// host key; nil with Options.AuditOff.
	Audit *audit.Log
	// Caps keeps the capability tokens (standing approvals), signed with
	// the host key.
	Caps     *caps.Book
	hostDeps host.Deps

	wasmMu sync.Mutex
	wasm   *wasm.Runtime // built when the first wasm capsule loads

	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// Boot starts a kernel and loads the built-in capsules. It constructs
// every piece first, each from the options and the pieces before it, then
// wires them in order (construct, then wire): no piece is handed a
// reference to one that does not exist yet, so nothing is bound late.
func Boot(ctx context.Context, opts Options) (*Kernel, error) {
	k, err := construct(opts)
	if err != nil {
		return nil, err
	}
	if err := k.wire(ctx); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// construct builds the kernel's pieces in dependency order: the store, the
// ledger, the bus, the NATS link (an embedded server, no transport yet), the
// dispatcher over them, the host services, the tracer, the registry and the
// runtime. Nothing runs yet: no goroutine, no subscription, no capsule.
func construct(opts Options) (*Kernel, error) {
	if opts.Home == "" || opts.Workspace == "" {
		return nil, errors.New("kernel: Home and Workspace are required")
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("kernel: workspace: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("kernel: workspace %s is not a directory", ws)
	}
	opts.Workspace = ws
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg := opts.Config
	st, err := store.Open(filepath.Join(opts.Home, "state.db"), store.Options{Timeout: cfg.StoreLockWait.Duration})
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	led := opts.Ledger
	if led == nil {
		led = ledger.New(time.Duration(cfg.Limits.CPUBudgetMsPerSec) * time.Millisecond)
	}
	// The agents (astrid agent create), re-read at most once a second:
	// the ledger and every tool call consult them.
	agents := principals.NewRegistry(st).Cache(time.Second, nil)
	led.SetOwnBudgets(agents.CPUBudget)
	warnSandbox(cfg.Sandbox, log)
	var alog *audit.Log
	if !opts.AuditOff {
		if alog, err = openAudit(st, opts.Home); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	link, err := startNATS(cfg.NATS, opts.Home, log, alog)
	if err != nil {
		_ = alog.Close()
		_ = st.Close()
		return nil, err
	}
	b := bus.New(bus.Options{RouteBudget: cfg.Limits.RouteBudgetBytes, MaxMessage: cfg.Limits.MaxMessageBytes, Logger: log})
	d := dispatch.New(b, dispatch.Options{
		RateBytesPerSec: int64(cfg.Limits.RateBytesPerSec),
		RateBurst:       int64(cfg.Limits.RateBurstBytes),
		QueueDepth:      cfg.Limits.QueueDepth,
		Logger:          log,
		// The CPU budget refuses work when it starts (a frontend's
		// publish), at once and with its reason; never a call continuing it.
		Admit: led.Admit,
		// The link reaches the other hosts once wire has connected it.
		Transport: link.transport(),
		Audit:     alog,
	})
	eg := egress.Options{AllowLocal: cfg.Egress.Allow, Logger: log}
	if opts.Egress != nil {
		eg = *opts.Egress
	}
	k := &Kernel{
		opts: opts, log: log, Bus: b, Dispatcher: d, Store: st, nats: link, Ledger: led,
		Registry: capsule.NewRegistry(), Cancels: host.NewCancels(), Audit: alog,
		// Loaded on first use: a home whose secrets cannot be unsealed
		// still boots, and asks every question.
		Caps: caps.NewLazyBook(st, func() (ed25519.PrivateKey, error) { return hostkey.Load(st) }, nil, log),
	}
	recordTokenEvents(k.Caps, alog, log)
	k.hostDeps = host.Deps{
		Dispatcher: d, Store: st, Cancels: k.Cancels, Logger: log, Ledger: led,
		Workspace: ws, HomesDir: filepath.Join(opts.Home, "home"), RunDir: config.Layout(opts.Home).Run, Egress: eg,
		Home:   opts.Home, // never inside an fs grant (DESIGN §4a)
		Grants: k.grantsOf,
		// Each client's requests work in their own workspace, with
		// their own provider settings (DESIGN §4a, §8).
		Scopes: host.NewScopes(), ConfigFallback: opts.ConfigFallback,
		// The host approval call counts answers from frontends only.
		// $ASTRID_HOME is out of every confined process's reach,
		// whatever its grants say (DESIGN §11).
		Sandbox: proc.Sandbox{Off: cfg.Sandbox.Off(), SystemRead: cfg.Sandbox.Read, Devices: cfg.Sandbox.Devices, Protected: []string{opts.Home},
			ConfinedAuto: cfg.Approval.Auto()},
		Bus: b, Approvals: ask.NewApprovals(frontendIDs(opts.Frontends), 0),
		// Background processes outlive capsule instances (a persistent
		// one survives a reload), never the kernel (Close).
		Background: proc.NewBackground(log),
		Elicits:    ask.NewElicits(frontendIDs(opts.Frontends), 0),
		// An installed uplink acts only for the principals the operator
		// lets it (a built-in, for anyone).
		UplinkActsFor: cfg.Uplink.UplinkActsFor(),
		Audit:         k.Audit,
		Caps:          k.Caps,
		Agents:        agents,
	}
	// The host approval call's standing allowances are tokens too.
	k.hostDeps.Approvals.UseTokens(k.Caps)
	k.Tracer = opts.Tracer
	if k.Tracer == nil {
		if k.Tracer, err = telemetry.New(cfg.Telemetry, opts.Home, log); err != nil {
			k.Close()
			return nil, fmt.Errorf("kernel: %w", err)
		}
	}
	// No capsule takes the kernel's id or a frontend's.
	reserved := []string{ipc.KernelSourceID}
	for _, acl := range opts.Frontends {
		reserved = append(reserved, acl.ID)
	}
	rb := make([]runtime.Builtin, len(opts.Builtins))
	for i, b := range opts.Builtins {
		rb[i] = runtime.Builtin(b)
	}
	k.Runtime = runtime.New(runtime.Options{
		Dispatcher:        d,
		Registry:          k.Registry,
		Host:              k.hostDeps,
		BuiltinDir:        filepath.Join(opts.Home, "builtin"),
		CapsulesDir:       config.Layout(opts.Home).Capsules,
		SkillsDir:         config.Layout(opts.Home).Skills,
		Builtins:          rb,
		Engines:           runtime.Engines{Wasm: k.wasmEngine, MCP: k.mcpEngine},
		Config:            k.capsuleConfig,
		AskEnv:            k.askEnv(opts.AskEnv),
		OnboardMissingEnv: opts.OnboardMissingEnv,
		Reserved:          reserved,
		Approvals:         grants.NewBook(st), // what the operator approved at install: every load of an installed capsule is held to it
		CallDeadline:      cfg.CallDeadline.Duration,
		// Who provides each tool, kept across restarts (issue 15.7).
		ProvidersFile: filepath.Join(opts.Home, "tool-providers.json"),
		Logger:        log,
		Principals:    k.tickPrincipals,
		Forgotten:     k.Caps.ForgetSession,
	})
	return k, nil
}

// wire connects the constructed pieces and starts them, in order: the
// dispatcher to the other hosts (the NATS transport opens, delivering to
// it), the tracer to the dispatcher, the frontends to the dispatcher
// (before any capsule, whose ids they reserve), the cancel listener to the
// bus, then the runtime loads the capsules, and the watchdog, the health
// monitor (restarts of failed capsules) and the capsules-directory watcher
// start.
func (k *Kernel) wire(ctx context.Context) error {
	if err := k.nats.connect(k.Dispatcher, k.Cancels); err != nil {
		return err
	}
	if k.Tracer != nil {
		k.Dispatcher.AddObserver(k.Tracer)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	k.stop = stop
	for _, acl := range k.opts.Frontends {
		if err := k.Dispatcher.Register(acl, frontendTarget{}); err != nil {
			return fmt.Errorf("kernel: register frontend %s: %w", acl.ID, err)
		}
	}
	if err := k.startCancelListener(runCtx); err != nil {
		return err
	}
	boot := k.Runtime.Boot
	if k.opts.LoadInBackground {
		boot = k.Runtime.Start
	}
	if err := boot(ctx); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	k.startWatchdog(runCtx, k.opts.Config.WatchdogInterval.Duration)
	h := k.opts.Config.Health
	k.Runtime.WatchHealth(runtime.HealthPolicy{MaxRestarts: h.MaxRestarts, Backoff: h.RestartBackoff.Duration, MaxBackoff: h.MaxRestartBackoff.Duration})
	if k.opts.WatchCapsules {
		if err := k.Runtime.Watch(runtime.WatchOptions{}); err != nil {
			return fmt.Errorf("kernel: %w", err)
		}
	}
	return nil
}

// frontendIDs lists the frontends' ids.
func frontendIDs(acls []dispatch.CapsuleACL) []string {
	ids := make([]string, len(acls))
	for i, a := range acls {
		ids[i] = a.ID
	}
	return ids
}

// wasmEngine builds a wasm capsule's engine on the kernel's one wasm
// runtime, created on first use so that kernels without wasm capsules pay
// nothing for it.
func (k *Kernel) wasmEngine(m *manifest.Manifest, h *host.Capsule) (capsule.Engine, error) {
	k.wasmMu.Lock()
	defer k.wasmMu.Unlock()
	if k.wasm == nil {
		cfg := k.opts.Config
		rt, err := wasm.NewRuntime(context.Background(), wasm.Options{
			CacheDir:          cmp.Or(k.opts.WasmCache, config.Layout(k.opts.Home).WasmCache),
			MemoryLimitMiB:    cfg.Limits.WasmMemoryMiB,
			MaxComponentBytes: cfg.Limits.MaxComponentBytes,
			PoolSize:          cfg.Limits.WasmPoolSize,
			CallDeadline:      cfg.CallDeadline.Duration,
			Ledger:            k.Ledger,
			Logger:            k.log,
		})
		if err != nil {
			return nil, err
		}
		k.wasm = rt
	}
	return k.wasm.Engine(m, h)
}

// mcpEngine builds the engine of one MCP server (stdio or remote); a
// remote one reads its OAuth login from the store.
func (k *Kernel) mcpEngine(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, env map[string]string) (capsule.Engine, error) {
	// A dead server's process is restarted by its engine (the capsule's
	// other engines keep serving) under the health monitor's own policy:
	// the same backoff, the same cap, then the capsule fails for good.
	hp := k.opts.Config.Health
	maxRestarts := hp.MaxRestarts
	if maxRestarts == 0 {
		maxRestarts = -1 // [health] max_restarts = 0: never restart
	}
	return mcp.New(srv, m, h, mcp.Options{Logger: k.log, Env: env, StartTimeout: k.opts.Config.MCPHandshakeTimeout.Duration, Tokens: k.Store.MCPTokens(m.ID()),
		Sampling:       k.opts.Config.MCP.SamplingAllowed(m.ID()),
		RestartBackoff: hp.RestartBackoff.Duration, MaxBackoff: hp.MaxRestartBackoff.Duration, MaxRestarts: maxRestarts})
}

// LoadNative loads one sdk capsule in-process under its manifest.
func (k *Kernel) LoadNative(ctx context.Context, bi Builtin) error {
	if err := k.Runtime.LoadBuiltin(ctx, runtime.Builtin(bi)); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}

// EngineFactory builds a capsule's engines once its host exists.
type EngineFactory = runtime.EngineFactory

// Load loads capsule m, installed in installDir ("" for a built-in), with
// the engines newEngines builds, and a static engine after them: the host
// is bound, the engines loaded in order (rolled back on failure), the ACL
// and interceptors registered with the dispatcher, and the capsule added to
// the registry.
func (k *Kernel) Load(ctx context.Context, m *manifest.Manifest, installDir string, newEngines EngineFactory) error {
	if err := k.Runtime.LoadWith(ctx, m, installDir, newEngines); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}

// Unload unregisters and unloads capsule id.
func (k *Kernel) Unload(ctx context.Context, id string) error {
	if err := k.Runtime.Unload(ctx, id); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}

// capsuleConfig returns the operator-set [env] values of capsule id, plain
// values and unsealed secrets alike.
func (k *Kernel) capsuleConfig(id string) map[string]string {
	out := map[string]string{}
	plain := k.Store.Config(id)
	keys, err := plain.List("")
	if err != nil {
		k.log.Warn("capsule config unreadable", "capsule", id, "err", err)
	}
	for _, key := range keys {
		if v, ok, err := plain.Get(key); err == nil && ok {
			out[key] = string(v)
		}
	}
	secrets := k.Store.Secrets(id)
	keys, err = secrets.List()
	if err != nil {
		k.log.Warn("capsule secrets unreadable", "capsule", id, "err", err)
	}
	for _, key := range keys {
		if v, ok, err := secrets.Get(key); err == nil && ok {
			out[key] = string(v)
		} else if err != nil {
			k.log.Warn("capsule secret not unsealed", "capsule", id, "key", key, "err", err)
		}
	}
	for key, v := range k.opts.ConfigFallback[id] {
		if _, set := out[key]; !set && v != "" {
			out[key] = v
		}
	}
	return out
}

// startCancelListener runs the kernel's one listener on
// ipc.CancelRequestTopic: every call of the request's principal holding a
// named key (the correlation id of the request it serves) is interrupted.
// Which convention's cancel led to it is the capsule's business that
// published it (the router turns the tool convention's into it).
func (k *Kernel) startCancelListener(ctx context.Context) error {
	r, err := k.Bus.Subscribe(bus.RouteSpec{Owner: ipc.KernelSourceID, Pattern: ipc.CancelRequestTopic})
	if err != nil {
		return fmt.Errorf("kernel: cancel listener: %w", err)
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer r.Close()
		for {
			d, err := r.Recv(ctx)
			if err != nil {
				return
			}
			req, err := ipc.ParseCancelRequest(d.Envelope.Payload)
			if err != nil {
				k.log.Warn("malformed cancel request", "source", d.Envelope.SourceID, "err", err)
				continue
			}
			// Only the requester's own calls: correlation ids are not
			// secrets.
			n := k.Cancels.CancelFor(d.Envelope.Principal, fmt.Errorf("cancelled by a cancel request from %s", d.Envelope.SourceID), req.CorrelationIDs...)
			k.log.Info("cancel request", "source", d.Envelope.SourceID, "correlation_ids", req.CorrelationIDs, "interrupted", n)
		}
	}()
	return nil
}

// Close unloads every capsule and stops the kernel. It is idempotent.
func (k *Kernel) Close() {
	k.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if k.Dispatcher != nil {
			k.Dispatcher.Stopping()
		}
		if k.Runtime != nil {
			k.Runtime.Close(ctx)
		}
		if k.hostDeps.Background != nil {
			k.hostDeps.Background.Close()
		}
		if k.wasm != nil {
			if err := k.wasm.Close(ctx); err != nil {
				k.log.Warn("wasm runtime close", "err", err)
			}
		}
		if k.stop != nil {
			k.stop()
		}
		k.wg.Wait()
		if k.Dispatcher != nil {
			k.Dispatcher.Close()
		}
		k.nats.close()
		if k.Bus != nil {
			k.Bus.Close()
		}
		if k.Tracer != nil {
			if err := k.Tracer.Shutdown(ctx); err != nil {
				k.log.Warn("tracer shutdown", "err", err)
			}
		}
		if err := k.Audit.Close(); err != nil {
			k.log.Warn("audit close", "err", err)
		}
		if k.Store != nil {
			if err := k.Store.Close(); err != nil {
				k.log.Warn("store close", "err", err)
			}
		}
	})
}

// grantsOf answers host.Deps.Grants from the registry: the capabilities of
// a loaded capsule.
func (k *Kernel) grantsOf(id string) (manifest.Capabilities, bool) {
	c, ok := k.Registry.Get(id)
	if !ok {
		return manifest.Capabilities{}, false
	}
	return c.Manifest().Capabilities, true
}

// Frontend is the kernel as a frontend (the CLI, later the uplink) reaches
// it: the dispatcher's publish and subscribe, and the registry's answer to
// "may this capsule publish consolidated tool results". It satisfies
// toolclient.Kernel without the kernel importing the tool client.
type Frontend struct {
	*dispatch.Dispatcher
	registry *capsule.Registry
	log      *slog.Logger
}

// Frontend returns k as its frontends reach it.
func (k *Kernel) Frontend() Frontend {
	return Frontend{Dispatcher: k.Dispatcher, registry: k.Registry, log: k.log}
}

// Publish is a frontend's event (dispatch.Event). A frontend publishes
// events and requests only; the frontends' API, which the daemon's client
// serves over its socket too, has a method for each.
func (f Frontend) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload)
}

// PublishRequest is a frontend's request (dispatch.RequestOf).
func (f Frontend) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	return f.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(req))
}

// HoldsToolMiddleware reports whether capsule id is loaded and holds the
// tool_middleware grant.
func (f Frontend) HoldsToolMiddleware(id string) bool { return f.registry.HoldsToolMiddleware(id) }

// Logger is the kernel's logger, for what a frontend's client refuses.
func (f Frontend) Logger() *slog.Logger { return f.log }

// Subscribe is the dispatcher's Subscribe as a frontend's clients take it:
// a bus.Subscription (which a remote kernel, the daemon's socket, offers
// too).
func (f Frontend) Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error) {
	r, err := f.Dispatcher.Subscribe(from, pattern, scoped)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}
