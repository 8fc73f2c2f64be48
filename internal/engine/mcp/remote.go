package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// A remote server ([[mcp_server]] type "http" or "sse") is reached over the
// network instead of started: the engine keeps one session with it (one
// generation, as a process is for stdio), opened at Load and opened again
// with the stdio backoff when it ends. It runs in no workspace, so every
// call, whatever its workspace and principal, uses that one session: the
// server's side is the server's, and what the engine sends it is the
// call's arguments only.
//
// All its HTTP goes through the capsule's egress client (the `net` gate on
// every request and redirect hop, the SSRF guard, loopback only when the
// operator allows it), wrapped by remoteTransport: the manifest's headers
// (secrets filled in here, never logged), redirects only within the
// server's origin, a response that is not MCP refused, and bodies capped.

// DefaultMaxResponseBytes caps one response body from a remote server
// (a JSON answer, or the event stream answering one request) and one event
// of a stream. A tool result put on the bus is at most 1 MiB anyway.
const DefaultMaxResponseBytes = 16 << 20

// remote is the engine's state for a remote server.
type remote struct {
	url     string       // the endpoint as declared
	shown   string       // the endpoint as logs and errors show it (no query)
	headers http.Header  // expanded; never logged
	client  *http.Client // MCP traffic: egress + headers + caps
	auth    *storedAuth  // OAuth state (oauth.go); nil for "sse"
	calls   calls        // tool calls in flight, for a server's questions (elicit.go)
	// changed is closed (and replaced) whenever a new session becomes
	// current, for calls waiting to retry on it; guarded by Engine.mu.
	changed chan struct{}
}

// newRemote prepares the engine of a remote server: the url checked, the
// headers' ${secret:…} and ${env:…} filled in from the capsule's [env]
// values, the capsule's egress client wrapped. Nothing connects until Load.
func newRemote(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, opts Options) (*Engine, error) {
	id := m.ID()
	fail := func(err error) (*Engine, error) {
		return nil, fmt.Errorf("mcp: capsule %s: server %s: %w", id, srv.ID, err)
	}
	u, err := manifest.CheckMCPURL(srv.URL)
	if err != nil {
		return fail(fmt.Errorf("url %w", err))
	}
	// The net gate again, so that a manifest loaded without its checks
	// (a built-in, a test) cannot reach what it was not granted.
	if err := h.Gate().Net(u.Hostname()); err != nil {
		return fail(err)
	}
	hdr := http.Header{}
	for name, tmpl := range srv.Headers {
		v, err := manifest.ExpandTemplate(tmpl, opts.Env)
		if err != nil {
			return fail(fmt.Errorf("header %s: %w", name, err))
		}
		hdr.Set(name, v)
	}
	base, err := h.SessionHTTPClient()
	if err != nil {
		return fail(err)
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	shown := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	r := &remote{url: srv.URL, shown: shown, headers: hdr, changed: make(chan struct{})}
	r.client = remoteClient(base, u, hdr, opts.MaxResponseBytes, srv.ID)
	e, err := newEngine(srv, m, h, shown, opts)
	if err != nil {
		return nil, err
	}
	e.remote = r
	if srv.Type == manifest.MCPHTTP {
		r.auth = newStoredAuth(e, base, hdr.Get("Authorization") != "")
	}
	return e, nil
}

// startRemote opens one session with the remote server: streamable HTTP,
// or the older HTTP+SSE transport when the type says so or the server
// refuses streamable HTTP and speaks that one.
func (e *Engine) startRemote(ctx context.Context) (*server, error) {
	r := e.remote
	if r.auth != nil {
		r.auth.load() // a login made since the last session counts
	}
	cctx, stop := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer stop()
	client := e.newClient()
	var session *mcp.ClientSession
	var err error
	if e.srv.Type == manifest.MCPSSE {
		session, err = client.Connect(cctx, e.wire(r.sse(e.opts.MaxResponseBytes)), nil)
	} else {
		session, err = client.Connect(cctx, e.wire(&mcp.StreamableClientTransport{
			Endpoint: r.url, HTTPClient: r.client, OAuthHandler: r.auth, MaxEventSize: e.opts.MaxResponseBytes,
		}), nil)
		if err != nil && fallbackToSSE(cctx, err) {
			s2, err2 := client.Connect(cctx, e.wire(r.sse(e.opts.MaxResponseBytes)), nil)
			if err2 == nil {
				e.log.Info("the MCP server does not speak streamable HTTP; using the older HTTP+SSE transport", "url", r.shown)
				session, err = s2, nil
			}
		}
	}
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", e.opts.StartTimeout, err)
		}
		return nil, fmt.Errorf("mcp server %s: connect to %s: %w", e.srv.ID, r.shown, err)
	}
	askForLogs(cctx, session, e.log)
	done, cancel := context.WithCancelCause(context.Background())
	s := &server{session: session, started: time.Now(), exited: make(chan struct{}), done: done, cancel: cancel}
	go func() {
		err := session.Wait()
		if err == nil {
			err = errors.New("the session was closed")
		}
		s.exitErr = fmt.Errorf("the session with %s ended: %w", r.shown, err)
		s.cancel(fmt.Errorf("%w: %v", errServerExited, s.exitErr))
		close(s.exited)
	}()
	return s, nil
}

// sse is the older HTTP+SSE transport to the server.
func (r *remote) sse(maxEvent int) mcp.Transport {
	return &detachedTransport{inner: &mcp.SSEClientTransport{Endpoint: r.url, HTTPClient: r.client, MaxEventSize: maxEvent}}
}

// detachedTransport gives a transport's long-lived request a context of
// its own. The SSE client transport opens its event stream (a GET that
// lasts as long as the session) under the context Connect is given, and
// the engine's Connect context is the handshake's, which ends once the
// session is up: the stream would die with it. The handshake's context
// still bounds the wait for the stream to open; after that only closing
// the connection ends it.
type detachedTransport struct {
	inner mcp.Transport
}

func (t *detachedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(sctx)
	if !stop() {
		// ctx ended while the stream was opening: that is the error.
		if err == nil {
			_ = conn.Close()
		}
		return nil, fmt.Errorf("opening the event stream: %w", context.Cause(ctx))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &detachedConn{Connection: conn, cancel: cancel}, nil
}

// detachedConn ends its stream's context when closed.
type detachedConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *detachedConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// fallbackToSSE says whether a failed streamable HTTP handshake may be
// retried with the older transport: not when the start was cancelled,
// timed out, or the server asked for authorization.
func fallbackToSSE(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var lr *LoginRequiredError
	return !errors.As(err, &lr) && !errors.Is(err, errTooLarge) && !errors.Is(err, errNotMCP) && !errors.Is(err, errGrant)
}

// wire adds the wire log to a transport when one is configured.
func (e *Engine) wire(t mcp.Transport) mcp.Transport {
	if e.opts.WireLog != nil {
		return &mcp.LoggingTransport{Transport: t, Writer: e.opts.WireLog}
	}
	return t
}

// closeRemote ends a remote generation: the session is closed (a
// streamable session tells the server with a DELETE) and its watcher has
// seen it end.
func (s *server) closeRemote() {
	s.closeOnce.Do(func() {
		_ = s.session.Close()
		<-s.exited
	})
}

// notifyCurLocked wakes the calls waiting for a new session. e.mu must be
// held.
func (e *Engine) notifyCurLocked() {
	if e.remote == nil {
		return
	}
	close(e.remote.changed)
	e.remote.changed = make(chan struct{})
}

// awaitNewSession waits (under ctx) until a session other than old is
// current: a call whose session expired retries on the next one.
func (e *Engine) awaitNewSession(ctx context.Context, old *server) (*server, error) {
	for {
		e.mu.Lock()
		cur, changed := e.cur, e.remote.changed
		e.mu.Unlock()
		if cur != nil && cur != old {
			return cur, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// sessionExpired says whether a call failed because the server no longer
// knows the session (HTTP 404 on its id). Only the error chain counts, not
// the words: a call's own POST answered 404 wraps ErrSessionMissing, so
// the server did not run it and it may go again on a new session; a call
// whose answer stream broke and could not be resumed fails with the
// session's end as its cause, worded only (errServerExited, %v), because
// the server may have run it.
func sessionExpired(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing)
}
