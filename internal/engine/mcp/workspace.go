package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
)

// A daemon serves many workspaces at once, and a call works in its
// request's (DESIGN §4a, host.Scope): the server a call reaches must run
// in that workspace, confined to the grants resolved for it, or a client
// in one project would read and write the daemon's. So a server runs per
// workspace and principal: the load-time one serves the kernel's own
// workspace for the default principal (its tools are the engine's), and
// any other pair gets its own process, started on its first call, reused
// by the later ones, and stopped when the capsule unloads, after
// Options.IdleTimeout without a call, or when Options.MaxWorkspaces others
// run and a new one is needed (the least recently used idle one goes).
// Such a server is not restarted when it dies: the next call starts it.

// scopeKey names the server a call needs: who it runs for (home:// grants
// resolve to that principal's home) and where (`*`, its working
// directory).
type scopeKey struct {
	principal string
	workspace string
}

// scopedServer is the server of one scopeKey other than the load-time one.
type scopedServer struct {
	key scopeKey
	// ready is closed when the start ended; s or err is set before.
	ready chan struct{}
	s     *server
	err   error
	// drop is closed when the engine lets the server go (dropLocked);
	// its goroutine (runScoped) then stops it.
	drop chan struct{}

	// Guarded by Engine.mu:
	calls   int         // calls using the server or waiting for its start
	used    time.Time   // when the last call let it go
	idle    *time.Timer // stops it after IdleTimeout without a call
	dropped bool
}

// serverFor is the server call works with for principal, waiting (under
// ctx) for a start it caused or joined, and the release to run once the
// call is done with it. A failed start is the call's error, naming the
// workspace; the call never falls back to another workspace's server.
func (e *Engine) serverFor(ctx context.Context, call *host.Call, principal string) (*server, func(), error) {
	k, err := e.keyOf(call, principal)
	if err != nil {
		return nil, nil, err
	}
	if k == e.home() {
		s := e.current()
		if s == nil {
			return nil, nil, fmt.Errorf("MCP server %s is down and being restarted; try again shortly", e.srv.ID)
		}
		return s, func() {}, nil
	}
	return e.serverOf(ctx, k)
}

// serverOf is serverFor for a key other than the load-time server's: the
// calls that ask for k while its server starts wait for that one start.
func (e *Engine) serverOf(ctx context.Context, k scopeKey) (*server, func(), error) {
	ss, err := e.acquire(k)
	if err != nil {
		return nil, nil, err
	}
	release := func() { e.release(ss) }
	select {
	case <-ss.ready:
	case <-ctx.Done():
		release()
		return nil, nil, context.Cause(ctx)
	}
	if ss.err != nil {
		release()
		return nil, nil, ss.err
	}
	return ss.s, release, nil
}

// keyOf is the server call needs: its request's workspace and principal.
func (e *Engine) keyOf(call *host.Call, principal string) (scopeKey, error) {
	if e.remote != nil {
		// A remote server runs in no workspace: every call shares the
		// engine's one session (remote.go).
		return e.home(), nil
	}
	if principal == "" {
		principal = ipc.DefaultPrincipal
	}
	ws := call.Workspace()
	if ws == "" && e.host.Gate().Workspace() != "" {
		// The request's scope closed (its client left): there is no
		// workspace to start a server in, and the kernel's is not the
		// request's.
		return scopeKey{}, fmt.Errorf("MCP server %s: the request's workspace is no longer open (its client has gone), and the server runs only in a request's own workspace", e.srv.ID)
	}
	return scopeKey{principal: principal, workspace: ws}, nil
}

// errUnloading answers calls that arrive while the capsule unloads.
var errUnloading = errors.New("the capsule is unloading")

// acquire returns k's server, starting it when there is none, and counts
// the call on it.
func (e *Engine) acquire(k scopeKey) (*scopedServer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping || e.scoped == nil {
		return nil, fmt.Errorf("MCP server %s: %w", e.srv.ID, errUnloading)
	}
	if ss := e.scoped[k]; ss != nil {
		ss.calls++
		if ss.idle != nil {
			ss.idle.Stop()
			ss.idle = nil
		}
		return ss, nil
	}
	if len(e.scoped) >= e.opts.MaxWorkspaces {
		victim := e.lruIdleLocked()
		if victim == nil {
			return nil, fmt.Errorf("MCP server %s already runs for %d other workspaces, each busy with a call; try again when one is done", e.srv.ID, len(e.scoped))
		}
		e.log.Info("mcp server stopped for a newer workspace", "workspace", victim.key.workspace, "principal", victim.key.principal, "max_workspaces", e.opts.MaxWorkspaces)
		e.dropLocked(victim)
	}
	ss := &scopedServer{key: k, ready: make(chan struct{}), drop: make(chan struct{}), calls: 1}
	e.scoped[k] = ss
	e.scopedWG.Add(1)
	go e.runScoped(e.scopedCtx, ss)
	return ss, nil
}

// release ends a call's use of ss; the last one arms its idle timer.
func (e *Engine) release(ss *scopedServer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ss.calls--
	if ss.calls > 0 || ss.dropped {
		return
	}
	ss.used = time.Now()
	ss.idle = time.AfterFunc(e.opts.IdleTimeout, func() { e.expire(ss) })
}

// expire stops ss when it is still idle: a call that came as the timer
// fired keeps it.
func (e *Engine) expire(ss *scopedServer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ss.dropped || ss.calls > 0 {
		return
	}
	e.log.Info("mcp server stopped after its idle time", "workspace", ss.key.workspace, "principal", ss.key.principal, "idle", e.opts.IdleTimeout)
	e.dropLocked(ss)
}

// lruIdleLocked is the idle server (no call using or waiting for it) that
// was let go longest ago, nil when every one is busy. e.mu must be held.
func (e *Engine) lruIdleLocked() *scopedServer {
	var lru *scopedServer
	for _, ss := range e.scoped {
		if ss.calls == 0 && (lru == nil || ss.used.Before(lru.used)) {
			lru = ss
		}
	}
	return lru
}

// dropLocked lets ss go: no call finds it any more, and its goroutine
// stops it (or, still starting, stops what it starts). e.mu must be held.
func (e *Engine) dropLocked(ss *scopedServer) {
	if ss.dropped {
		return
	}
	ss.dropped = true
	if e.scoped[ss.key] == ss {
		delete(e.scoped, ss.key)
	}
	if ss.idle != nil {
		ss.idle.Stop()
		ss.idle = nil
	}
	close(ss.drop)
}

// runScoped starts ss's server and owns it until it is dropped (then it
// stops it) or dies (then the next call starts another). ctx ends with
// Unload.
func (e *Engine) runScoped(ctx context.Context, ss *scopedServer) {
	defer e.scopedWG.Done()
	// The start belongs to every call waiting for it, not to the first
	// one, so it runs under the engine's context: a cancelled first call
	// does not fail the others.
	s, err := e.start(ctx, ss.key)
	e.mu.Lock()
	switch {
	case err != nil:
		e.dropLocked(ss) // the next call tries again
	case ss.dropped:
		// Unloaded while starting: nothing may keep it.
		err = fmt.Errorf("MCP server %s: %w", e.srv.ID, errUnloading)
	}
	if err != nil {
		ss.err = err
	} else {
		s.scoped = true
		ss.s = s
	}
	close(ss.ready)
	e.mu.Unlock()
	if err != nil {
		if s != nil {
			s.stop(stopGrace)
		} else {
			e.log.Warn("mcp server did not start in a request's workspace", "workspace", ss.key.workspace, "principal", ss.key.principal, "err", err)
		}
		return
	}
	e.log.Info("mcp server started for a request's workspace", "workspace", ss.key.workspace, "principal", ss.key.principal, "pid", s.pid)
	select {
	case <-ss.drop:
		s.stop(stopGrace)
	case <-s.exited:
		e.mu.Lock()
		e.dropLocked(ss)
		e.mu.Unlock()
		s.kill()
		e.log.Warn("mcp server of a request's workspace exited; the next call starts it again", "workspace", ss.key.workspace, "principal", ss.key.principal, "exit", s.exitErr)
	}
}

// Workspaces lists the workspaces whose servers run or are starting
// besides the load-time one, for status and tests.
func (e *Engine) Workspaces() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.scoped))
	for k := range e.scoped {
		out = append(out, k.workspace)
	}
	return out
}
