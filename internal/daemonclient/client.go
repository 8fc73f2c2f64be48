package daemonclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// SocketName is the daemon's socket in $ASTRID_HOME/run.
const SocketName = "astrid.sock"

// SocketPath is the daemon's socket for home.
func SocketPath(home string) string { return filepath.Join(config.Layout(home).Run, SocketName) }

// ErrNoDaemon is returned by Dial when no daemon listens on the socket.
var ErrNoDaemon = errors.New("no astrid daemon is running")

// ErrDisconnected ends every wait once the connection is gone.
var ErrDisconnected = errors.New("the daemon connection closed")

// Error is the daemon's refusal of a request (an error frame).
type Error struct {
	Code    string // uplinkwire.Code*
	Message string
}

func (e *Error) Error() string { return "daemon: " + e.Code + ": " + e.Message }

// Is makes a publish the daemon did not admit now (uplinkwire.CodeBusy)
// read as the kernel's own refusals of it, as in-process: the principal's
// CPU budget (dispatch.ErrNotAdmitted) or publish rate
// (dispatch.ErrRateLimited). Nothing was published; it may pass later.
func (e *Error) Is(target error) bool {
	return e.Code == uplinkwire.CodeBusy && (target == dispatch.ErrNotAdmitted || target == dispatch.ErrRateLimited)
}

// Options tune a connection; the zero value is fine.
type Options struct {
	// Client names the frontend in the daemon's log ("astrid").
	Client string
	// Workspace is the directory the connection's requests work on
	// (absolute; DESIGN §4a); empty: the daemon's own.
	Workspace string
	// Env is the caller's provider settings (uplinkwire.ReadEnv), applied
	// to the connection's requests only; never logged.
	Env map[string]string
	// Principal, when set, asks to act as that principal: the daemon
	// allows it only if config.toml maps this user's uid to it
	// ([uplink] principals); empty acts as the uid's default.
	Principal string
	// Logger receives what the client refuses or drops.
	Logger *slog.Logger
	// Timeout bounds the dial, the handshake and each request's answer
	// (0: 30 s).
	Timeout time.Duration
	// SubscriptionBuffer bounds the events one subscription holds for
	// its reader (0: 4096); past it the oldest are dropped and counted in
	// the next delivery's Lost, as a bus route does.
	SubscriptionBuffer int
}

// Client is one connection to the daemon. It is safe for concurrent use.
type Client struct {
	conn      net.Conn
	principal string
	workspace string // as the daemon took it; "" when none was named
	log       *slog.Logger
	timeout   time.Duration
	subBuf    int

	wmu sync.Mutex // one frame written at a time

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]*pending
	subs    map[uint64]*subscription
	err     error // why the connection ended, once it has
	// middleware is whether each event source held tool_middleware, as
	// the daemon said on the latest event from it (read before the event
	// is handed on, so a consumer asking about an event it holds gets an
	// answer at least as fresh as that event).
	middleware map[string]bool

	// The read side (readrole.go): whoever waits reads.
	rd          frameReader   // used by the holder of the read role only
	reading     bool          // someone holds the read role
	idleReading bool          // the idle reader holds it
	kicked      bool          // the holder was asked to look again
	waiters     int           // goroutines parked for a frame someone else reads
	turn        chan struct{} // buffered 1: the read role is free, a waiter may take it
	idle        *time.Timer   // starts the idle reader
	ended       bool          // the connection is over (err says why)
	closing     bool          // Close was called

	done chan struct{} // closed when the connection has ended
}

type pending struct {
	got       bool // answer has come (under Client.mu)
	answer    uplinkwire.Frame
	signal    chan struct{} // buffered 1: answer has come
	subscribe bool          // an OK opens a subscription
	sub       *subscription
}

// Dial connects to the daemon of home and shakes hands. ErrNoDaemon (wrapped)
// means nothing listens there; any other error means something does but
// the connection failed (refused, another version).
func Dial(ctx context.Context, home string, opts Options) (*Client, error) {
	return DialSocket(ctx, SocketPath(home), opts)
}

// DialSocket is Dial on an explicit socket path.
func DialSocket(ctx context.Context, path string, opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.SubscriptionBuffer <= 0 {
		opts.SubscriptionBuffer = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Client == "" {
		opts.Client = "astrid"
	}
	conn, err := dialUnix(ctx, path, opts.Timeout)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (%s: %v)", ErrNoDaemon, path, err)
		}
		return nil, fmt.Errorf("daemon: dial %s: %w", path, err)
	}
	c := &Client{conn: conn, log: opts.Logger, timeout: opts.Timeout, subBuf: opts.SubscriptionBuffer,
		pending: map[uint64]*pending{}, subs: map[uint64]*subscription{}, middleware: map[string]bool{},
		rd: frameReader{conn: conn}, turn: make(chan struct{}, 1), done: make(chan struct{})}
	if err := c.handshake(opts); err != nil {
		_ = conn.Close()
		return nil, err
	}
	c.idle = time.AfterFunc(idleWait, c.readIdle)
	return c, nil
}

// handshake sends the hello and reads the welcome.
func (c *Client) handshake(opts Options) error {
	_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
	defer func() { _ = c.conn.SetDeadline(time.Time{}) }()
	// A daemon that refuses the peer answers and closes before reading
	// the hello: a failed write still leaves its answer to read.
	werr := c.write(uplinkwire.Frame{Op: uplinkwire.OpHello, Version: uplinkwire.Version, Client: opts.Client, Workspace: opts.Workspace, Env: opts.Env, Principal: opts.Principal})
	body, err := uplinkwire.Read(c.conn)
	if err != nil {
		return fmt.Errorf("daemon: handshake: %w", errors.Join(werr, err))
	}
	f, err := uplinkwire.Decode(body)
	if err != nil {
		return fmt.Errorf("daemon: handshake: %w", err)
	}
	switch {
	case f.Op == uplinkwire.OpError:
		return &Error{Code: f.Code, Message: f.Error}
	case f.Op != uplinkwire.OpWelcome:
		return fmt.Errorf("daemon: handshake: the daemon answered %q, not a welcome", f.Op)
	case f.Version != uplinkwire.Version:
		return fmt.Errorf("daemon: handshake: the daemon speaks version %d, this client %d", f.Version, uplinkwire.Version)
	}
	c.principal = f.Principal
	c.workspace = f.Workspace
	if opts.Workspace != "" && f.Workspace == "" {
		// A daemon older than workspaces ignored it: its requests would
		// land in the daemon's own directory.
		return fmt.Errorf("daemon: this daemon does not take a client's workspace (restart it: astrid stop)")
	}
	return nil
}

// Workspace is the directory the daemon took as this connection's
// workspace; "" when it named none.
func (c *Client) Workspace() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workspace
}

// SetWorkspace makes ws the workspace of the connection's later requests
// (a session continued from another directory works on its own); work
// already started keeps its own. It returns the directory as the daemon
// took it.
func (c *Client) SetWorkspace(ws string) (string, error) {
	r, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpWorkspace, Workspace: ws}, nil)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.workspace = r.Workspace
	c.mu.Unlock()
	return r.Workspace, nil
}

// Principal is who the daemon lets this connection act as.
func (c *Client) Principal() string { return c.principal }

// Logger implements the client packages' Kernel.
func (c *Client) Logger() *slog.Logger { return c.log }

// Done is closed when the connection has ended (seen by a call reading
// the socket, or by the idle reader within idleWait); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (nil while it lasts).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection and every wait on it.
func (c *Client) Close() error {
	err := c.conn.Close()
	c.mu.Lock()
	c.closing = true
	unread := !c.reading
	c.reading = true // no one reads from here on: the end is said here
	c.mu.Unlock()
	if unread {
		c.end(net.ErrClosed)
	}
	<-c.done
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// write sends one frame.
func (c *Client) write(f uplinkwire.Frame) error {
	b, err := uplinkwire.Encode(f)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
	return uplinkwire.Write(c.conn, b)
}

// request sends f with a fresh id and waits for its answer.
func (c *Client) request(f uplinkwire.Frame, p *pending) (uplinkwire.Frame, error) {
	return c.requestWithin(f, p, c.timeout)
}

// requestWithin is request waiting up to wait for the answer.
func (c *Client) requestWithin(f uplinkwire.Frame, p *pending, wait time.Duration) (uplinkwire.Frame, error) {
	if p == nil {
		p = &pending{}
	}
	p.signal = make(chan struct{}, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return uplinkwire.Frame{}, err
	}
	c.nextID++
	f.ID = c.nextID
	c.pending[f.ID] = p
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, f.ID)
		c.mu.Unlock()
	}
	if err := c.write(f); err != nil {
		forget()
		return uplinkwire.Frame{}, fmt.Errorf("daemon: %s: %w", f.Op, err)
	}
	answered := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return p.got
	}
	if err := c.waitFor(context.Background(), time.Now().Add(wait), answered, p.signal); err != nil {
		forget()
		if errors.Is(err, errNoAnswer) {
			return uplinkwire.Frame{}, fmt.Errorf("daemon: %s: no answer within %s", f.Op, wait)
		}
		return uplinkwire.Frame{}, err
	}
	r := p.answer
	if r.Op == uplinkwire.OpError {
		return r, &Error{Code: r.Code, Message: r.Error}
	}
	return r, nil
}

// handOn acts on one frame the read role holder read: an answer to its
// request, an event to its subscription. It never waits for either.
func (c *Client) handOn(body []byte) {
	f, err := uplinkwire.Decode(body)
	if err != nil {
		// Skip what does not parse (docs/uplink.md: clients tolerate
		// frames they do not understand).
		c.log.Warn("daemon: a frame that does not parse was skipped", "err", err)
		return
	}
	switch f.Op {
	case uplinkwire.OpEvent:
		c.mu.Lock()
		s := c.subs[f.Sub]
		if f.ToolMiddleware != nil && f.Source != "" {
			if len(c.middleware) >= maxSources {
				clear(c.middleware) // only a cache: a miss asks the daemon
			}
			c.middleware[f.Source] = *f.ToolMiddleware
		}
		c.mu.Unlock()
		if s != nil {
			s.push(f)
		}
	case uplinkwire.OpOK, uplinkwire.OpError:
		c.mu.Lock()
		if f.ID == 0 {
			// About the connection, not a request: the daemon closes
			// it next (too large, slow, ...).
			c.err = fmt.Errorf("%w: %w", ErrDisconnected, &Error{Code: f.Code, Message: f.Error})
			c.mu.Unlock()
			return
		}
		p := c.pending[f.ID]
		delete(c.pending, f.ID)
		if p != nil {
			if p.subscribe && f.Op == uplinkwire.OpOK {
				// Registered here, before the next frame is read: the
				// subscription's first event may be that frame.
				p.sub = newSubscription(c, f.Sub)
				c.subs[f.Sub] = p.sub
			}
			p.answer, p.got = f, true
		}
		c.mu.Unlock()
		if p != nil {
			p.signal <- struct{}{}
		}
	default:
		c.log.Warn("daemon: a frame of an unknown op was skipped", "op", f.Op)
	}
}

// Publish implements the client packages' Kernel: it publishes on topic
// for the connection's principal (from is not sent: the daemon decides who
// the peer is). The Result is empty: the daemon does not say who heard.
func (c *Client) Publish(_ dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	_, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpPublish, Topic: topic, Payload: payload}, nil)
	return dispatch.Result{}, err
}

// PublishRequest implements the client packages' Kernel: Publish as a
// request (DESIGN §4b), whose answer, or the kernel's failure, comes on
// req.ReplyTo for the connection's principal.
func (c *Client) PublishRequest(_ dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	_, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpPublish, Topic: topic, Payload: payload,
		ReplyTo: req.ReplyTo, CorrelationID: req.CorrelationID, TimeoutMS: req.Timeout.Milliseconds()}, nil)
	return dispatch.Result{}, err
}

// Subscribe implements the client packages' Kernel: a subscription to
// pattern, always scoped to the connection's principal.
func (c *Client) Subscribe(_ dispatch.Caller, pattern string, _ bool) (bus.Subscription, error) {
	p := &pending{subscribe: true}
	if _, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, Pattern: pattern}, p); err != nil {
		return nil, err
	}
	return p.sub, nil
}

// SubscribeMatching is Subscribe relaying only the events whose payload
// has each top-level string member of match (agentclient.MatchingSubscriber):
// the daemon filters them, so another turn's events never cross the socket.
func (c *Client) SubscribeMatching(_ dispatch.Caller, pattern string, _ bool, match map[string]string) (bus.Subscription, error) {
	p := &pending{subscribe: true}
	if _, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, Pattern: pattern, Match: match}, p); err != nil {
		return nil, err
	}
	return p.sub, nil
}

// Interceptors implements the client packages' Kernel; a failed request
// answers none (and is logged).
func (c *Client) Interceptors(topic string) []string {
	r, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpInterceptors, Topic: topic}, nil)
	if err != nil {
		c.log.Warn("daemon: interceptors", "topic", topic, "err", err)
		return nil
	}
	return r.IDs
}

// maxSources bounds the middleware answers a connection keeps.
const maxSources = 1024

// HoldsToolMiddleware implements toolclient.Kernel. For a source the
// daemon has relayed an event from, the answer is the one that event
// carried (its source's grant when relayed), without a round trip: a tool
// client asks about the source of the result it just received.
func (c *Client) HoldsToolMiddleware(capsuleID string) bool {
	c.mu.Lock()
	held, known := c.middleware[capsuleID]
	c.mu.Unlock()
	if known {
		return held
	}
	r, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpHoldsGrant, Capsule: capsuleID, Grant: hostapi.GrantToolMiddleware}, nil)
	if err != nil {
		c.log.Warn("daemon: holds_grant", "capsule", capsuleID, "err", err)
		return false
	}
	return r.Held
}

// unsubscribe tells the daemon, without waiting for its answer.
func (c *Client) unsubscribe(id uint64) {
	c.mu.Lock()
	delete(c.subs, id)
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.nextID++
	f := uplinkwire.Frame{Op: uplinkwire.OpUnsubscribe, ID: c.nextID, Sub: id}
	c.mu.Unlock()
	if err := c.write(f); err != nil {
		c.log.Debug("daemon: unsubscribe", "sub", id, "err", err)
	}
}

// dialUnix connects to path. A full listen backlog (EAGAIN: many clients
// connecting at once) is retried, with a growing pause, until timeout.
func dialUnix(ctx context.Context, path string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	pause := time.Millisecond
	for {
		conn, err := d.DialContext(ctx, "unix", path)
		if err == nil || !errors.Is(err, syscall.EAGAIN) {
			return conn, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}
