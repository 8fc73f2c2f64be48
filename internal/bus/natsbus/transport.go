package natsbus

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/ipc"
)

// DefaultReceiveQueue is the capacity of a host's receive queue, in
// messages; beyond it the client library drops and reports a slow consumer.
const DefaultReceiveQueue = 8192

// Options configure a Transport.
type Options struct {
	// HostID names this host on the bus; it must be unique in the cluster.
	// Empty: a random id.
	HostID string
	// Server is the embedded server, if the host runs one: connections are
	// made in-process and authenticated by Auth, which must be the
	// server's CustomClientAuthentication.
	Server *server.Server
	Auth   *Authenticator
	// URL is an external cluster's address, used when Server is nil.
	URL string
	// Connect is added to every connection's options (TLS, credentials).
	Connect []nats.Option
	// HostCredsFile, on an external cluster, is the credentials file
	// Connect authenticates the host's own connections with: when it is
	// replaced, they reconnect with the new one (creds_renew.go).
	HostCredsFile string
	// CredsDir, on an external cluster, holds one credentials file per
	// capsule, <id>.creds, minted by the operator for this host (astrid
	// nats creds): each capsule's connection authenticates with its own,
	// overriding Connect's credentials, so that the broker enforces each
	// capsule's grants (creds_dir.go). Connect's credentials still serve
	// the host's receiver and presence connections.
	CredsDir string
	// Deliver hands an envelope published on another host to this host's
	// routes (dispatch.Dispatcher.DeliverRemote), with runs, which says
	// which of this host's capsules intercept it there: none, but every
	// one for a reply to a request published here. It must not block.
	Deliver func(e *ipc.Envelope, runs func(capsule string) bool) error
	// Intercept runs, for an envelope published on another host, the
	// interceptors of the capsules runs admits and delivers it to no route
	// (dispatch.Dispatcher.InterceptRemote): NATS handed it to this host
	// in a capsule's queue group. It must not block. Nil: Deliver.
	Intercept func(e *ipc.Envelope, runs func(capsule string) bool) error
	// ReceiveQueue is the capacity of the host's receive queue.
	ReceiveQueue int
	// PresenceInterval is how often the host announces the capsules it
	// serves to the others (Hosts); DefaultPresenceInterval if zero.
	PresenceInterval time.Duration
	// RequestLost, if set, answers a request published on this host whose
	// handlers were all on other hosts, lost before it was answered
	// (inflight.go): the kernel fails the request. It must not block.
	RequestLost func(LostRequest)
	// RequestsAbandoned, if set, cancels on this host the requests another
	// host (asker) answered as lost while this host held them (abandon.go):
	// the kernel interrupts the calls bound to their correlation ids. It
	// must not block.
	RequestsAbandoned func(asker string, reqs []AbandonedRequest)
	// KernelSubscribe are topics this host's kernel itself listens to from
	// every host (its tool-call cancel listener): the host receives them
	// whatever its capsules subscribe to.
	KernelSubscribe []string
	Logger          *slog.Logger
}

// Transport carries one host's envelopes to and from a NATS cluster. Each
// capsule has its own connection, with the broker permissions its manifest
// grants; the host receives through one more connection (see receiver).
// It is safe for concurrent use.
type Transport struct {
	opts Options
	log  *slog.Logger
	// conns maps capsule id → connection for Forward, copy-on-write.
	conns atomic.Pointer[map[string]*nats.Conn]
	stats counters

	mu       sync.Mutex // serialises Attach, Detach, Close and the receiver
	closed   bool
	capsules map[string]*attachment
	// wanted counts, per receive subscription, the attached capsules
	// whose keys map to it.
	wanted map[subKey]int
	recv   *receiver
	// retiredDropped is the slow-consumer drops of closed subscriptions.
	retiredDropped uint64

	in   chan *nats.Msg
	done chan struct{}
	wg   sync.WaitGroup

	presenceConn *nats.Conn
	presence     presence
	// presenceDue asks the announcing goroutine for an announcement now.
	presenceDue chan struct{}
	// locals is what this host's capsules intercept (intercepts.go).
	locals atomic.Pointer[localIntercepts]
	// requests are the requests handled on other hosts (inflight.go).
	requests inflight
	// closing is set when Close starts: losing the connections then is
	// no host's loss.
	closing atomic.Bool
	// hostCreds is the host's credentials file, watched for renewal;
	// retiredPresence the presence connection a renewal replaced, whose
	// closing is no loss either (creds_renew.go).
	hostCreds       *credsFile
	retiredPresence atomic.Pointer[nats.Conn]
}

type attachment struct {
	conn *nats.Conn
	user string
	// receives are the host's subscriptions for the capsule's routes: its
	// [subscribe] grants in the host's group (interceptors: intercepts.go).
	receives   []subKey
	intercepts []string
	// creds is the capsule's own credentials file, if it has one.
	creds *credsFile
}

// New returns a transport with no capsule attached. It starts the goroutine
// that hands received envelopes to Options.Deliver.
func New(opts Options) (*Transport, error) {
	switch {
	case opts.Deliver == nil:
		return nil, errors.New("natsbus: Options.Deliver is required")
	case opts.Server != nil && opts.Auth == nil:
		return nil, errors.New("natsbus: an embedded server needs its Authenticator")
	case opts.Server == nil && opts.URL == "":
		return nil, errors.New("natsbus: either an embedded server or a URL is required")
	}
	if opts.HostID == "" {
		opts.HostID = randomID()
	}
	if err := checkCapsuleID(opts.HostID); err != nil {
		return nil, fmt.Errorf("natsbus: host id: %w", err)
	}
	if opts.ReceiveQueue <= 0 {
		opts.ReceiveQueue = DefaultReceiveQueue
	}
	if opts.PresenceInterval <= 0 {
		opts.PresenceInterval = DefaultPresenceInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	t := &Transport{
		opts:        opts,
		log:         opts.Logger.With("host", opts.HostID),
		capsules:    make(map[string]*attachment),
		wanted:      make(map[subKey]int),
		in:          make(chan *nats.Msg, opts.ReceiveQueue),
		presenceDue: make(chan struct{}, 1),
		done:        make(chan struct{}),
		hostCreds:   hostCredsFile(opts),
	}
	t.conns.Store(&map[string]*nats.Conn{})
	t.wg.Add(1)
	go t.consume()
	if err := t.startPresence(); err != nil {
		t.Close()
		return nil, err
	}
	if err := t.receiveForKernel(opts.KernelSubscribe); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// HostID is this host's id on the bus.
func (t *Transport) HostID() string { return t.opts.HostID }

func randomID() string {
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	return "h" + hex.EncodeToString(raw)
}

// Attach opens capsule id's connection, with broker permissions derived from
// its [publish] and [subscribe] keys, and has the host receive what those
// keys match. A key NATS cannot carry refuses the capsule, naming the key.
// Attaching an id again replaces its connection (a reload). intercepts,
// the patterns the capsule intercepts, are announced to the other hosts
// (ExactInterceptors).
func (t *Transport) Attach(id string, publish, subscribe, intercepts []string) error {
	pubGrants, subGrants, err := grants(id, publish, subscribe)
	if err != nil {
		return fmt.Errorf("natsbus: capsule %s: %w", id, err)
	}
	receives, err := t.receives(subGrants, intercepts)
	if err != nil {
		return fmt.Errorf("natsbus: capsule %s: %w", id, err)
	}
	user := "capsule:" + t.opts.HostID + ":" + id
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("natsbus: attach capsule %s: transport closed", id)
	}
	var extra []nats.Option
	creds, cf, err := t.capsuleCredsOption(id)
	if err != nil {
		return fmt.Errorf("natsbus: attach capsule %s: %w", id, err)
	}
	if creds != nil {
		extra = append(extra, creds)
	}
	conn, err := t.dial(user, capsulePermissions(pubGrants, subGrants), "capsule "+id, extra...)
	if err != nil {
		return fmt.Errorf("natsbus: attach capsule %s: %w", id, err)
	}
	old := t.capsules[id]
	t.capsules[id] = &attachment{conn: conn, user: user, receives: receives, intercepts: slices.Clone(intercepts), creds: cf}
	t.storeConnsLocked()
	t.want(receives, 1)
	if old != nil {
		t.want(old.receives, -1)
	}
	if err := t.resubscribeLocked(); err != nil {
		// The capsule could publish but the host would not receive what
		// it subscribes to: refuse it rather than run it half-connected,
		// and keep the registration it replaced, if any.
		t.want(receives, -1)
		closeConn(conn)
		if old != nil {
			t.want(old.receives, 1)
			t.capsules[id] = old
		} else {
			delete(t.capsules, id)
			if t.opts.Auth != nil {
				t.opts.Auth.Revoke(user)
			}
		}
		t.storeConnsLocked()
		return fmt.Errorf("natsbus: attach capsule %s: %w", id, err)
	}
	if old != nil {
		closeConn(old.conn)
	}
	t.kickPresence()
	return nil
}

// grants maps a capsule's keys to its broker permissions.
func grants(id string, publish, subscribe []string) (pub, sub []string, err error) {
	if err := checkCapsuleID(id); err != nil {
		return nil, nil, err
	}
	for _, k := range publish {
		g, err := PublishGrant(id, k)
		if err != nil {
			return nil, nil, fmt.Errorf("[publish] key: %w", err)
		}
		pub = append(pub, g)
	}
	for _, k := range subscribe {
		g, err := SubscribeGrant(k)
		if err != nil {
			return nil, nil, fmt.Errorf("[subscribe] key: %w", err)
		}
		sub = append(sub, g)
	}
	return pub, sub, nil
}

// receives is the host's subscriptions for capsule id's routes: its
// [subscribe] grants in the host's queue group. Its interceptor patterns
// are checked here and subscribed with those of the host's other capsules
// (interceptKeysLocked).
func (t *Transport) receives(subGrants, intercepts []string) ([]subKey, error) {
	keys := make([]subKey, 0, len(subGrants))
	for _, g := range subGrants {
		keys = append(keys, subKey{subject: g, queue: t.opts.HostID})
	}
	for _, p := range intercepts {
		if _, err := SubscribeGrant(p); err != nil {
			return nil, fmt.Errorf("interceptor: %w", err)
		}
	}
	return keys, nil
}

// Detach closes capsule id's connection and stops receiving for its keys.
// Unknown ids are ignored.
func (t *Transport) Detach(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if a := t.detachLocked(id); a != nil {
		if err := t.resubscribeLocked(); err != nil {
			t.log.Warn("natsbus: receive subscriptions not updated after a capsule left", "capsule", id, "error", err)
		}
		t.kickPresence()
	}
}

// detachLocked forgets capsule id and closes its connection. t.mu must be
// held.
func (t *Transport) detachLocked(id string) *attachment {
	a := t.capsules[id]
	if a == nil {
		return nil
	}
	delete(t.capsules, id)
	t.storeConnsLocked()
	t.want(a.receives, -1)
	closeConn(a.conn)
	if t.opts.Auth != nil {
		t.opts.Auth.Revoke(a.user)
	}
	return a
}

// storeConnsLocked publishes the capsule → connection map Forward reads,
// and what this host's capsules intercept (intercepts.go). t.mu must be
// held.
func (t *Transport) storeConnsLocked() {
	m := make(map[string]*nats.Conn, len(t.capsules))
	for id, a := range t.capsules {
		m[id] = a.conn
	}
	t.conns.Store(&m)
	t.locals.Store(newLocalIntercepts(t.capsules))
}

// want adds delta to the count of each subscription. t.mu must be held.
func (t *Transport) want(keys []subKey, delta int) {
	for _, s := range keys {
		if n := t.wanted[s] + delta; n > 0 {
			t.wanted[s] = n
		} else {
			delete(t.wanted, s)
		}
	}
}

// Forward publishes e, admitted and stamped by this host's bus, on its
// publisher's connection. It never blocks on a receiver; what it cannot
// send is counted as a drop. It trusts its caller (dispatch) to have
// validated the topic and checked the publisher's ACL; the broker checks
// the grant again.
func (t *Transport) Forward(e *ipc.Envelope) {
	nc := (*t.conns.Load())[e.SourceID]
	if nc == nil {
		t.dropped(DropNotAttached, 1, "natsbus: publish from a capsule with no connection not forwarded", "capsule", e.SourceID, "topic", e.Topic)
		return
	}
	ran := t.locals.Load().ran(e.Topic)
	reply := t.track(e, ran)
	buf := framePool.Get().(*[]byte)
	defer putFrame(buf)
	data, err := appendFrame((*buf)[:0], t.opts.HostID, ran, e)
	*buf = data
	if err != nil {
		t.dropped(DropEncode, 1, "natsbus: envelope not forwarded", "error", err)
		return
	}
	// Publish copies data into the connection's buffer before it returns,
	// so the frame's buffer goes back to the pool. A request tracked here
	// names where the host that takes it says so (inflight.go).
	// PublishRequest refuses an empty reply subject.
	subject := SubjectPrefix + "." + e.SourceID + "." + e.Topic
	if reply == "" {
		err = nc.Publish(subject, data)
	} else {
		err = nc.PublishRequest(subject, reply, data)
	}
	if err != nil {
		t.dropped(DropPublish, 1, "natsbus: envelope not forwarded", "capsule", e.SourceID, "topic", e.Topic, "error", err)
		return
	}
	t.stats.forwarded.Add(1)
}

// dropped counts n losses under reason and logs when the count crosses a
// power of two.
func (t *Transport) dropped(reason string, n uint64, msg string, args ...any) {
	if t.stats.drop(reason, n) {
		t.log.Warn(msg, append(args, "reason", reason)...)
	}
}

// framePool holds the buffers Forward encodes frames into.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledFrame keeps a rare huge payload's buffer out of the pool.
const maxPooledFrame = 64 << 10

func putFrame(b *[]byte) {
	if cap(*b) <= maxPooledFrame {
		framePool.Put(b)
	}
}

// consume hands received envelopes to the local dispatcher, in the order
// the receiver's connection read them, or, across a receiver's replacement,
// in their publishers' order (handover.go).
func (t *Transport) consume() {
	defer t.wg.Done()
	var held []*nats.Msg // non-nil during a handover
	for {
		select {
		case <-t.done:
			return
		case m := <-t.in:
			switch {
			case m == handoverStart:
				held = make([]*nats.Msg, 0, 64)
			case m == handoverEnd:
				for _, m := range inPublishOrder(held) {
					t.receive(m)
				}
				held = nil
			case held != nil:
				held = append(held, m)
			default:
				t.receive(m)
			}
		}
	}
}

func runNone(string) bool { return false }

// receive decodes and delivers one message. A message of the host's queue
// group goes to its routes; one of a capsule's group runs that capsule's
// interceptors, unless it ran on the publishing host already. A reply runs
// no interceptor from a capsule's group: it runs every interceptor of the
// host that published its request, where the requester waits (a router
// loaded on several hosts holds each call on one), from the routes' copy.
func (t *Transport) receive(m *nats.Msg) {
	host, ran, body, err := splitFrame(m.Subject, m.Data)
	if err != nil {
		t.dropped(DropDecode, 1, "natsbus: received message refused", "subject", m.Subject, "error", err)
		return
	}
	if string(host) == t.opts.HostID {
		t.stats.echoes.Add(1)
		return
	}
	// Every envelope from another host says which: a reader tells this
	// host's capsules from the others' (`tool list`'s HOST column,
	// docs/nats.md "Tools on another host").
	e, err := decodeEnvelope(m.Subject, body, t.hostName(host))
	if err != nil {
		t.dropped(DropDecode, 1, "natsbus: received message refused", "subject", m.Subject, "error", err)
		return
	}
	var group []string
	if m.Sub != nil {
		group = interceptGroup(m.Sub.Queue)
	}
	if group == nil {
		runs := runNone
		if e.IsReply() && t.endRequest(e) {
			runs = nil // every interceptor here
		}
		if err := t.opts.Deliver(e, runs); err != nil {
			t.dropped(DropDeliver, 1, "natsbus: received envelope not delivered", "topic", e.Topic, "source_id", e.SourceID, "error", err)
			return
		}
		t.stats.received.Add(1)
		return
	}
	// The chain of the group's capsules that did not run on the
	// publishing host.
	runs := func(id string) bool { return slices.Contains(group, id) && !listed(ran, id) }
	if e.IsReply() || !slices.ContainsFunc(group, runs) {
		return
	}
	intercept := t.opts.Intercept
	if intercept == nil {
		intercept = t.opts.Deliver
	}
	if e.IsRequest() {
		// Before the handler starts: the requester learns which host to
		// ask after as early as it can (inflight.go).
		t.took(m)
	}
	if err := intercept(e, runs); err != nil {
		t.dropped(DropDeliver, 1, "natsbus: received envelope not intercepted", "topic", e.Topic, "source_id", e.SourceID, "group", m.Sub.Queue, "error", err)
		return
	}
	t.stats.intercepted.Add(1)
}

// hostName is host as a string, the one presence holds when the host is
// known, so that naming each received envelope's host allocates nothing.
func (t *Transport) hostName(host []byte) string {
	if h, ok := t.peers()[string(host)]; ok {
		return h.ID
	}
	return string(host)
}

// asyncError counts what the server or the client library reports about a
// connection after the fact: a permissions violation is a denied publish or
// subscription, a slow consumer a lost message.
func (t *Transport) asyncError(nc *nats.Conn, sub *nats.Subscription, err error) {
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		t.stats.drop(DropPermission, 1)
		t.log.Warn("natsbus: the broker refused a publish or subscription (permissions violation)",
			"connection", nc.Opts.Name, "error", err)
	case errors.Is(err, nats.ErrAuthExpired):
		t.stats.credsExpired.Add(1)
		t.log.Error("natsbus: the broker dropped a connection whose credentials expired; it reconnects when fresh ones are in its file",
			"connection", nc.Opts.Name)
	case errors.Is(err, nats.ErrSlowConsumer):
		// Counted exactly from the subscription's drop count (Stats).
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		t.log.Warn("natsbus: receive queue full: messages dropped (slow consumer)",
			"connection", nc.Opts.Name, "subject", subject)
	default:
		t.log.Warn("natsbus: connection error", "connection", nc.Opts.Name, "error", err)
	}
}

// dial opens one connection as user with perms (on the embedded server) or
// with Options.Connect's credentials (on an external cluster).
func (t *Transport) dial(user string, perms *server.Permissions, role string, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("astrid " + t.opts.HostID + " " + role),
		nats.ErrorHandler(t.asyncError),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				t.log.Warn("natsbus: disconnected", "connection", nc.Opts.Name, "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			t.log.Info("natsbus: reconnected", "connection", nc.Opts.Name, "server", nc.ConnectedUrlRedacted())
		}),
	}
	url := t.opts.URL
	if t.opts.Server != nil {
		secret := t.opts.Auth.Issue(user, perms)
		opts = append(opts, nats.InProcessServer(t.opts.Server), nats.UserInfo(user, secret))
		url = ""
	}
	opts = append(opts, t.opts.Connect...)
	opts = append(opts, extra...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect as %s: %w", user, err)
	}
	return nc, nil
}

func closeConn(nc *nats.Conn) {
	_ = flushIfConnected(nc) // what was published before a detach still leaves
	nc.Close()
}

// flushIfConnected flushes nc unless it has lost its server: a flush while
// reconnecting would wait out its whole timeout (a host whose node is gone
// would take 10 s per capsule to unload), and what it holds is sent on
// reconnection anyway, subscriptions included.
func flushIfConnected(nc *nats.Conn) error {
	if !nc.IsConnected() {
		return nil
	}
	return nc.Flush()
}

// Stats returns a snapshot of the counters, with the exact number of
// messages the receive queue dropped.
func (t *Transport) Stats() Stats {
	s := t.stats.snapshot()
	if t.opts.Auth != nil {
		node := t.opts.Auth.NodeStats()
		s.Node = &node
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s.Capsules = len(t.capsules)
	slow := t.retiredDropped
	if t.recv != nil {
		slow += t.recv.dropped()
	}
	if slow > 0 {
		s.Drops[DropSlowConsumer] += slow
	}
	return s
}

// Flush waits until the server has processed everything every capsule's
// connection published so far: a message published on any connection after
// Flush returns reaches each receiver after them.
func (t *Transport) Flush() error {
	var errs []error
	for id, nc := range *t.conns.Load() {
		if err := nc.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("natsbus: flush capsule %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Capsules lists the ids of the attached capsules.
func (t *Transport) Capsules() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return sortedKeys(t.capsules)
}

// Close closes every connection and stops handing over envelopes. It is
// idempotent.
func (t *Transport) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.closing.Store(true)
	if t.presenceConn != nil {
		t.publishPresence(nil, nil, true)
		closeConn(t.presenceConn)
		if t.opts.Auth != nil {
			t.opts.Auth.Revoke("host:" + t.opts.HostID + ":presence")
		}
	}
	for id := range maps.Clone(t.capsules) {
		t.detachLocked(id)
	}
	if t.recv != nil {
		t.retireLocked(t.recv)
		if t.opts.Auth != nil {
			t.opts.Auth.Revoke(t.recv.user)
		}
		t.recv = nil
	}
	t.mu.Unlock()
	close(t.done)
	t.wg.Wait()
}
