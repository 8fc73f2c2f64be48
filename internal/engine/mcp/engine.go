package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/proc"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Options tune an engine. The zero value is usable.
type Options struct {
	// Logger receives the engine's events and the server's stderr, tagged
	// with capsule and server id. Nil means slog.Default().
	Logger *slog.Logger
	// RestartBackoff is the wait before the first restart of a dead server;
	// it doubles after each failed or short-lived generation, up to
	// MaxBackoff. Zero means DefaultRestartBackoff.
	RestartBackoff time.Duration
	// MaxBackoff caps the wait between restarts. Zero means
	// MaxRestartBackoff.
	MaxBackoff time.Duration
	// MaxRestarts, when positive, is how many restarts in a row (no
	// generation living stableAfter between them) the server gets before
	// the engine gives up: it fails with an error wrapping
	// capsule.ErrGaveUp, which the runtime's health monitor shows and does
	// not retry (the kernel passes config.toml's [health], the monitor's
	// own policy). Zero restarts without end; negative never restarts.
	MaxRestarts int
	// Env holds the capsule's [env] values; they are added to the server's
	// environment (see environ for what else it gets).
	Env map[string]string
	// StartTimeout bounds starting the process and the MCP handshake. Zero
	// means DefaultStartTimeout.
	StartTimeout time.Duration
	// WireLog, when set, receives every JSON-RPC message exchanged with the
	// server, one per line ("write: …" to it, "read: …" from it), for
	// debugging and for tests that assert what went on the wire.
	WireLog io.Writer
	// MaxWorkspaces caps the servers run for request workspaces besides
	// the load-time one (workspace.go): starting one more stops the least
	// recently used idle one. Zero means DefaultMaxWorkspaces.
	MaxWorkspaces int
	// IdleTimeout stops a request workspace's server after that long
	// without a call. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Tokens holds the capsule's sealed MCP OAuth logins (a remote
	// server's token, oauth.go); nil: a server that asks for
	// authorization is told to log in.
	Tokens TokenStore
	// Sampling lets the server ask for sampling (sampling.go): the
	// operator's [mcp] sampling names the capsule. False refuses every
	// request, saying which config key allows it.
	Sampling bool
	// MaxResponseBytes caps a remote server's response bodies and events
	// (remote.go). Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int
	// Bound, when set, binds the engine to one request scope (bound.go):
	// a server a frontend's session brought, serving that session only.
	Bound *Binding
}

// Defaults for Options.
const (
	DefaultRestartBackoff = time.Second
	MaxRestartBackoff     = 5 * time.Minute
	DefaultStartTimeout   = 30 * time.Second
	// stopGrace is how long a server gets after stdin closes, and again
	// after SIGTERM, before its group is killed.
	stopGrace = 2 * time.Second
	// stableAfter is how long a generation must live for the backoff to
	// start again from RestartBackoff.
	stableAfter = time.Minute
	// DefaultMaxWorkspaces and DefaultIdleTimeout bound the servers run
	// for request workspaces (workspace.go): a daemon serving a handful of
	// projects keeps each one's server warm across a session's calls, and
	// one visited once does not keep a process for the daemon's lifetime.
	DefaultMaxWorkspaces = 8
	DefaultIdleTimeout   = 10 * time.Minute
)

// Engine runs one stdio MCP server of a capsule. It implements
// capsule.Engine and capsule.SurfaceProvider.
type Engine struct {
	srv         manifest.MCPServer
	capsuleID   string
	description string // the capsule's, for describe answers
	host        *host.Capsule
	dir         string
	command     string // resolved; what is executed
	opts        Options
	log         *slog.Logger
	hooks       map[string]bool // handlers of the manifest's interceptors
	codeServes  map[string]bool // the manifest's interceptor patterns (served_bus.go)
	remote      *remote         // a remote server's state (remote.go); nil for stdio
	progress    progressCalls   // the calls in flight that asked for progress

	mu     sync.Mutex
	health capsule.Health
	// cur is the load-time server, the one of the kernel's own workspace
	// for the default principal (home): nil while it is down or
	// restarting. Its tools are the engine's.
	cur    *server
	tools  []tool // as loaded; the bus surface is fixed at load
	served served // resources, templates and prompts, as loaded (served.go)
	// relisting says a listing of them runs (relist.go), relistAgain
	// that a change was announced during it; relistWG counts it.
	relisting, relistAgain bool
	relistWG               sync.WaitGroup
	hasHook                bool // the server offers astrid_hook_intercept
	restarts               int
	stopping               bool
	stopSup                context.CancelFunc
	supDone                chan struct{}
	// scoped are the servers of other workspaces and principals, started
	// on their first call (workspace.go); scopedCtx ends with Unload and
	// aborts their starts; scopedWG counts their goroutines, which Unload
	// waits for, so that no server outlives it.
	scoped     map[scopeKey]*scopedServer
	scopedCtx  context.Context
	stopScoped context.CancelFunc
	scopedWG   sync.WaitGroup
}

var (
	_ capsule.Engine          = (*Engine)(nil)
	_ capsule.SurfaceProvider = (*Engine)(nil)
)

// ErrNotStdio is returned by New for a server whose type is neither
// "stdio" nor a remote one ("http", "sse"): such entries get no engine
// (seed 003).
var ErrNotStdio = errors.New(`only type = "stdio", "http" or "sse" MCP servers get an engine`)

// New prepares the engine for server srv of capsule m, hosted by h. For a
// stdio server the command is checked against host_process exactly as
// declared, before anything is resolved, and then resolved inside the
// capsule directory (m.Dir); a remote one (http, sse) has its url checked
// against `net` (remote.go). Nothing is started until Load.
func New(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, opts Options) (*Engine, error) {
	id := m.ID()
	if srv.Remote() {
		return newRemote(srv, m, h, opts)
	}
	if srv.Type != "stdio" {
		return nil, fmt.Errorf("mcp: capsule %s: server %s: type %q: %w", id, srv.ID, srv.Type, ErrNotStdio)
	}
	if srv.Command == "" {
		return nil, fmt.Errorf("mcp: capsule %s: server %s: an MCP server needs a command", id, srv.ID)
	}
	if err := h.Gate().HostProcess(srv.Command); err != nil {
		return nil, fmt.Errorf("mcp: capsule %s: server %s: %w", id, srv.ID, err)
	}
	command, err := resolveCommand(srv.Command, m.Dir, targetTriple())
	if err != nil {
		return nil, fmt.Errorf("mcp: capsule %s: server %s: %w", id, srv.ID, err)
	}
	return newEngine(srv, m, h, command, opts)
}

// newEngine fills opts' defaults and builds the engine; command is what
// it runs, or (remote) the endpoint it connects to.
func newEngine(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, command string, opts Options) (*Engine, error) {
	id := m.ID()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RestartBackoff <= 0 {
		opts.RestartBackoff = DefaultRestartBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = MaxRestartBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.RestartBackoff)
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxWorkspaces <= 0 {
		opts.MaxWorkspaces = DefaultMaxWorkspaces
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	hooks, code := map[string]bool{}, map[string]bool{}
	for _, i := range m.Interceptors() {
		hooks[i.Handler] = true
		code[i.Pattern] = true
	}
	return &Engine{
		srv: srv, capsuleID: id, description: m.Package.Description, host: h, dir: m.Dir, command: command, opts: opts,
		log:   opts.Logger.With("capsule", id, "mcp_server", srv.ID),
		hooks: hooks, codeServes: code,
	}, nil
}

// Name implements capsule.Engine.
func (e *Engine) Name() string { return "mcp:" + e.srv.ID }

// Command is what the engine executes: the declared command once resolved.
func (e *Engine) Command() string { return e.command }

// PID is the process id of the running load-time server (the leader of
// its process group), or 0 while it is down.
func (e *Engine) PID() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == nil {
		return 0
	}
	return e.cur.pid
}

// Restarts reports how many times the server has been restarted.
func (e *Engine) Restarts() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restarts
}

// Load implements capsule.Engine: it starts the server in the kernel's
// workspace, runs the MCP handshake and lists its tools, which become the
// engine's Surface. Other workspaces get their servers on their first call.
func (e *Engine) Load(ctx context.Context) error {
	e.mu.Lock()
	if e.cur != nil || e.supDone != nil {
		e.mu.Unlock()
		return fmt.Errorf("mcp server %s: already loaded", e.srv.ID)
	}
	e.health = capsule.Health{State: capsule.Loading}
	e.stopping = false
	e.mu.Unlock()

	s, err := e.start(ctx, e.home())
	if err != nil {
		e.set(capsule.Failed, err)
		return err
	}
	tools, hasHook, err := e.listTools(ctx, s)
	if err != nil {
		s.stop(stopGrace)
		err = fmt.Errorf("mcp server %s: tools/list: %w", e.srv.ID, err)
		e.set(capsule.Failed, err)
		return err
	}
	srv := e.listServed(ctx, s)
	supCtx, stopSup := context.WithCancel(context.Background())
	e.mu.Lock()
	e.cur, e.tools, e.hasHook, e.served = s, tools, hasHook, srv
	supDone := make(chan struct{})
	e.stopSup, e.supDone = stopSup, supDone
	e.scoped = map[scopeKey]*scopedServer{}
	e.scopedCtx, e.stopScoped = context.WithCancel(context.Background())
	e.health = capsule.Health{State: capsule.Ready}
	e.mu.Unlock()
	join(e)
	go e.supervise(supCtx, s, supDone)
	e.log.Info("mcp server loaded", "command", e.command, "pid", s.pid, "tools", len(tools),
		"resources", len(srv.resources), "resource_templates", len(srv.templates), "prompts", len(srv.prompts))
	return nil
}

// home is the key of the load-time server: the kernel's own workspace, for
// the default principal.
func (e *Engine) home() scopeKey {
	if b := e.opts.Bound; b != nil {
		return scopeKey{principal: b.Principal, workspace: b.Workspace}
	}
	return scopeKey{principal: ipc.DefaultPrincipal, workspace: e.host.Gate().Workspace()}
}

// start starts one generation of the server of k: in k's workspace (the
// install directory when there is none), confined to the capsule's grants
// resolved for that workspace and principal, as a process a call of that
// request starts would be.
func (e *Engine) start(ctx context.Context, k scopeKey) (*server, error) {
	if e.remote != nil {
		return e.startRemote(ctx)
	}
	env, skipped := environ(e.opts.Env)
	if len(skipped) > 0 {
		e.log.Warn("capsule [env] values left out of the server's environment: their names cannot be environment variables", "keys", skipped)
	}
	s, err := startServer(ctx, spawnSpec{
		name:       e.capsuleID + "/" + e.srv.ID,
		command:    e.command,
		args:       e.srv.Args,
		dir:        cmp.Or(k.workspace, e.dir),
		env:        env,
		log:        e.log,
		wire:       e.opts.WireLog,
		progress:   e.onProgress,
		counted:    &e.progress,
		logMessage: e.onLog,
		changed:    e.listChanged,
		sample:     e.sample,
		roots:      e.grantedRoots(k),
		timeout:    e.opts.StartTimeout,
		// The server's own files (the install directory) are readable
		// to it besides the capsule's grants.
		confine: func(cmd *exec.Cmd) (*proc.Confined, error) {
			return e.host.ConfineIn(k.workspace, "mcp_server", cmd, k.principal, e.dir, cmd.Path)
		},
	})
	if err != nil {
		if k != e.home() {
			return nil, fmt.Errorf("mcp server %s in workspace %s: %w", e.srv.ID, k.workspace, err)
		}
		return nil, fmt.Errorf("mcp server %s: %w", e.srv.ID, err)
	}
	return s, nil
}

// WaitReady implements capsule.Engine: Load returns only once the server
// has answered, so a loaded engine is ready.
func (e *Engine) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine: the supervisor stops restarting, and the
// whole process group of every server (the load-time one and each
// workspace's) is stopped; it returns once they are. Calls in flight get
// their failure replies.
func (e *Engine) Unload(context.Context) error {
	e.mu.Lock()
	e.stopping = true
	s, stopSup, supDone := e.cur, e.stopSup, e.supDone
	e.cur, e.stopSup, e.supDone = nil, nil, nil
	for _, ss := range e.scoped {
		e.dropLocked(ss)
	}
	stopScoped := e.stopScoped
	e.stopScoped = nil
	e.health = capsule.Health{State: capsule.Unloading}
	e.mu.Unlock()
	leave(e)
	if stopScoped != nil {
		stopScoped() // aborts the starts still in their handshake
	}
	if stopSup != nil {
		stopSup()
		<-supDone
	}
	if s != nil {
		s.stop(stopGrace)
	}
	e.scopedWG.Wait()
	e.relistWG.Wait()
	e.set(capsule.Unloaded, nil)
	return nil
}

// Health implements capsule.Engine. A server being restarted stays Ready:
// its calls are answered with errors until it is back, and the capsule's
// other engines keep working.
func (e *Engine) Health() capsule.Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health
}

func (e *Engine) set(s capsule.State, err error) {
	e.mu.Lock()
	e.health = capsule.Health{State: s, Err: err}
	e.mu.Unlock()
}

// current returns the live generation of the load-time server, or nil
// while it is down.
func (e *Engine) current() *server {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}
