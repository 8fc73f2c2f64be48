package acp

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/sessionmcp"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// A Backend gives each ACP session the kernel its turns go through,
// working on the editor's cwd: in-process a request scope of the one
// kernel, through the daemon a connection whose hello names the directory
// (cmd/astrid/acp.go). One behaviour, with or without the daemon.
type Backend interface {
	// Open checks dir (absolute, an existing directory outside
	// $ASTRID_HOME) and returns the kernel to use for work in it. The
	// error says what is wrong with dir, for the editor.
	Open(ctx context.Context, dir string) (Workspace, error)
}

// Workspace is one directory's way to the kernel.
type Workspace struct {
	// Kernel is the kernel as the client packages reach it, every
	// publish of it working in Dir.
	Kernel toolclient.Kernel
	// Dir is the directory as the kernel took it (absolute, symlinks
	// resolved).
	Dir string
	// Close releases it; nil when there is nothing to release.
	Close func()
	// Lost is closed when the way to the kernel is gone for good (the
	// daemon stopped or restarted); nil when it cannot be lost (the
	// in-process kernel lives as long as Serve). A session whose
	// workspace is lost opens it again on its next use (reconnect.go).
	Lost <-chan struct{}
	// Attach loads a session's own MCP servers bound to this workspace's
	// scope, which only that session uses (mcp.go); they stop when Close
	// releases it. It returns their tools; nil when the backend cannot.
	Attach func(ctx context.Context, servers []sessionmcp.Server) ([]string, error)
}

// lost says whether w's way to the kernel is gone.
func (w Workspace) lost() bool {
	if w.Lost == nil {
		return false
	}
	select {
	case <-w.Lost:
		return true
	default:
		return false
	}
}

// Options configure Serve.
type Options struct {
	Backend Backend
	// Principal the turns act for; "" is ipc.DefaultPrincipal.
	Principal string
	// Logger takes what the editor should not see on its channel (it
	// usually shows an agent's standard error in its logs).
	Logger *slog.Logger
	// Version is astrid's, for agentInfo.
	Version string
}

// shutdownGrace bounds how long Serve waits, once the editor is gone, for
// the running turns to end after their cancel.
const shutdownGrace = 5 * time.Second

// Serve speaks ACP on in and out until in ends (the editor closed it) or
// ctx ends. Turns still running then are cancelled, and Serve returns once
// they ended (within shutdownGrace), so a caller that closes its kernel
// next does not cut a cancel short. It returns nil: nothing the editor
// sends ends it otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Principal == "" {
		opts.Principal = ipc.DefaultPrincipal
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &lockedWriter{w: out}
	a := newAgent(opts)
	g := newGuard(in, w, opts.Logger)
	conn := acpsdk.NewAgentSideConnection(a, w, g)
	conn.SetLogger(opts.Logger)
	a.conn = conn
	close(g.open)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	a.shutdown()
	return nil
}

// agent is the ACP agent of one connection.
type agent struct {
	opts Options
	log  *slog.Logger
	conn *acpsdk.AgentSideConnection

	// hard ends every turn still running when the connection goes.
	hard     context.Context
	hardStop context.CancelFunc

	mu         sync.Mutex
	fs         fsOffer // the editor's file system, as initialize declared it (buffers.go)
	sessions   map[string]*session
	workspaces map[string]Workspace // by the directory as the editor named it
	closing    bool
	running    sync.WaitGroup // handlers in flight (entered)
}

func newAgent(opts Options) *agent {
	hard, stop := context.WithCancel(context.Background())
	return &agent{
		opts: opts, log: opts.Logger, hard: hard, hardStop: stop,
		sessions: map[string]*session{}, workspaces: map[string]Workspace{},
	}
}

// enter counts a handler in; false once the agent is shutting down.
func (a *agent) enter() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.running.Add(1)
	return true
}

func (a *agent) leave() { a.running.Done() }

// shutdown cancels every running turn, waits for them to end (at most
// shutdownGrace), and releases the workspaces.
func (a *agent) shutdown() {
	a.mu.Lock()
	a.closing = true
	sessions := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	for _, s := range sessions {
		s.cancelTurn()
	}
	defer func() {
		for _, s := range sessions {
			s.releaseOwn()
		}
	}()
	done := make(chan struct{})
	go func() { a.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		a.log.Warn("acp: turns still running when the editor left; they were cancelled", "waited", shutdownGrace)
		a.hardStop()
		<-done
	}
	a.hardStop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.workspaces {
		if w.Close != nil {
			w.Close()
		}
	}
	a.workspaces = map[string]Workspace{}
}

// workspace is the Backend's workspace for dir, opened once per
// directory and shared by its sessions; one whose way to the kernel was
// lost is released and opened again.
func (a *agent) workspace(ctx context.Context, dir string) (Workspace, error) {
	a.mu.Lock()
	w, ok := a.workspaces[dir]
	if ok && w.lost() {
		delete(a.workspaces, dir)
		if w.Close != nil {
			w.Close()
		}
		ok = false
	}
	a.mu.Unlock()
	if ok {
		return w, nil
	}
	w, err := a.opts.Backend.Open(ctx, dir)
	if err != nil {
		return Workspace{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.workspaces[dir]; ok { // opened meanwhile
		if w.Close != nil {
			w.Close()
		}
		return have, nil
	}
	if a.closing {
		if w.Close != nil {
			w.Close()
		}
		return Workspace{}, errShuttingDown
	}
	a.workspaces[dir] = w
	return w, nil
}
