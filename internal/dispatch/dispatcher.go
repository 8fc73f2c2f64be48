package dispatch

import (
	"context"
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// Options configures a Dispatcher. The zero value gives DESIGN §4b's
// defaults.
type Options struct {
	// Audit records the first refusal of each (capsule, publish or
	// subscribe, topic) by the ACL in the audit chain (audit.go); nil
	// records none.
	Audit *audit.Log
	// RateBytesPerSec and RateBurst size each (capsule, principal) token
	// bucket, counted in envelope bytes ((*ipc.Envelope).Size).
	RateBytesPerSec int64
	RateBurst       int64
	// QueueDepth is the capacity of each (capsule, principal) interceptor
	// queue; a call arriving at a full queue is dropped and counted. A
	// reply a handler publishes (ReplyOf) may go past it, up to
	// ReplyHeadroom times it.
	QueueDepth int
	// IdleTimeout is how long a queue worker lingers without work.
	IdleTimeout time.Duration
	// UnregisterGrace bounds how long Unregister and Close wait for a
	// capsule's calls in flight once their contexts are cancelled. Native
	// code stuck in a blocking system call cannot be interrupted; it is
	// abandoned (and logged) rather than allowed to hang a shutdown.
	UnregisterGrace time.Duration
	Logger          *slog.Logger
	// Admit, when set, decides whether principal may start work: it is
	// asked for every publish whose Caller does not continue work already
	// admitted (Caller.Continues), and its error refuses the publish at
	// once, so the publisher hears why (the kernel passes its CPU ledger's
	// Admit). Work once started is never refused by it: an answer, a
	// failure reply or a result must reach its caller.
	Admit func(principal string) error
	// Now drives the rate limiter; tests inject a fake clock. By default
	// the limiter reads the bus's clock, once per publish for both the
	// limiter and the envelope's stamp.
	Now func() time.Time
	// Transport, when set, carries this host's capsule publishes to other
	// hosts and theirs to this one (DESIGN §9); nil keeps the bus on this
	// host.
	Transport Transport
}

// maxRateBurst keeps a bucket's scaled token count inside an int64.
const maxRateBurst = 1 << 32

func (o Options) withDefaults() Options {
	if o.RateBytesPerSec <= 0 {
		o.RateBytesPerSec = DefaultRateBytesPerSec
	}
	if o.RateBurst <= 0 {
		o.RateBurst = DefaultRateBurst
	}
	o.RateBurst = min(o.RateBurst, maxRateBurst)
	if o.QueueDepth <= 0 {
		o.QueueDepth = DefaultQueueDepth
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.UnregisterGrace <= 0 {
		o.UnregisterGrace = DefaultUnregisterGrace
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Caller is who is publishing or subscribing, as the host layer knows it: the
// capsule's registered id and the principal it is acting for (empty for a
// system event). A capsule cannot choose either.
type Caller struct {
	Capsule   string
	Principal string
	// Runner, if set, is the publishing goroutine offering to make the
	// interceptor call its publish causes (see Runner). Set it only for a
	// publish made on the Runner's own goroutine, never for one made from
	// a timer or another goroutine (a failure reply, a cancel).
	Runner *Runner
	// Continues says the publish continues work already admitted: it is
	// made by a handler call (the host layer sets it for every publish of a
	// call, failure replies included) or it stops work (a cancel). Such a
	// publish is never refused by Options.Admit; any other publish starts
	// work and is.
	Continues bool
	// Trace is the trace context of the span making the publish (the
	// host layer sets it from the call's context, TraceFrom); the
	// envelope carries it. Zero when tracing is off.
	Trace ipc.TraceContext
	// Scope is the request context the publish belongs to, stamped on the
	// envelope (ipc.Envelope.Scope): the host layer sets it from the
	// invoking event (ScopeFrom), an uplink from its client. Zero: none.
	Scope uint64
}

// CapsuleACL is what a capsule's manifest grants it on the bus.
type CapsuleACL struct {
	ID string
	// Publish and Subscribe are the keys of the manifest's [publish] and
	// [subscribe] tables. Empty denies everything.
	Publish, Subscribe []string
	// Interceptors are the [subscribe] entries that name a handler. Each
	// pattern must be one the capsule may subscribe to.
	Interceptors []Interceptor
	// ReadsReplies lets a kernel frontend that tracks every principal's
	// turns (the daemon's turn tracker) receive the replies on what it
	// subscribes to, though it did not ask them; any other capsule
	// receives only the replies to its own requests (DESIGN §4c). The
	// runtime never sets it from a manifest.
	ReadsReplies bool
}

// Result says how far a publish reached.
type Result struct {
	Routes       int // bus routes the envelope was delivered to
	Interceptors int // interceptor links matched (queued, or counted as dropped)
}

// Dispatcher is the publish/subscribe entry for every capsule. It is safe for
// concurrent use.
type Dispatcher struct {
	bus   busPort
	opts  Options
	log   *slog.Logger
	stats counters
	// policy records ACL refusals in the audit chain.
	policy *policyAudit
	// now is the rate limiter's clock: Options.Now, or the bus's, in
	// which case (stampsShared) one reading also stamps the envelope.
	now          func() int64 // Unix nanoseconds
	stampsShared bool

	// interceptors is the copy-on-write interceptor table read by every
	// publish without locking.
	interceptors atomic.Pointer[table]
	// replyReaders are the registered capsules with ReadsReplies.
	replyReaders atomic.Pointer[[]string]

	mu       sync.Mutex // serialises registry changes and Close
	capsules atomic.Pointer[map[string]*capsule]
	closed   atomic.Bool
	// stopping is set when the whole kernel is shutting down: calls still
	// queued then are counted as discarded but logged at debug level only,
	// since every command's exit would otherwise warn about them.
	stopping atomic.Bool
	// observers are told of every publish and call (observer.go); nil
	// until AddObserver, so that an unobserved dispatcher pays one load.
	observers atomic.Pointer[[]Observer]
	// departing holds the capsules Unregister is shutting down (id →
	// *capsule): a call they had running, cancelled by the unload, still
	// owes its caller the failure reply it registered, published under
	// the departing capsule's ACL.
	departing sync.Map
	// requests is the requests waiting for an answer (request.go).
	requests requests
}

// busPort is what the dispatcher needs of the bus.
type busPort interface {
	PublishResolved(e *ipc.Envelope, now int64, res *bus.Resolution) (int, error)
	Deliver(e *ipc.Envelope) (int, error)
	PublishTo(e *ipc.Envelope, now int64, owners []string) (int, error)
	DeliverTo(e *ipc.Envelope, owners []string) (int, error)
	Resolve(topic string) *bus.Resolution
	Current(res *bus.Resolution) bool
	Now() int64
	Subscribe(spec bus.RouteSpec) (*bus.Route, error)
	Stats() bus.Stats
}

// capsule is one registered capsule: its ACLs, rate limiter, interceptor
// queues and the routes it holds.
type capsule struct {
	id           string
	target       Target
	publish      acl
	subscribe    acl
	interceptors []Interceptor
	readsReplies bool
	limiter      *limiter
	// published remembers the topics this capsule published last, all
	// valid and allowed by its [publish] ACL, with their routes and
	// interceptors (topiccache.go).
	published topicCache

	// ctx is cancelled (by cancel) when the capsule is unregistered.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	queues map[string]*queue
	routes map[*bus.Route]struct{}
	// prunedAt is len(routes) after the last pruneRoutes.
	prunedAt int
	workers  sync.WaitGroup
	lastDrop int64 // when a queue drop was last logged, Unix nanoseconds
	drops    int   // drops since then
}

// New returns a Dispatcher publishing to b.
func New(b *bus.Bus, opts Options) *Dispatcher {
	return newDispatcher(b, opts)
}

func newDispatcher(b busPort, opts Options) *Dispatcher {
	opts = opts.withDefaults()
	d := &Dispatcher{bus: b, opts: opts, log: opts.Logger, policy: &policyAudit{log: opts.Audit}}
	if fake := opts.Now; fake != nil {
		d.now = func() int64 { return fake().UnixNano() }
	} else {
		d.now, d.stampsShared = b.Now, true
	}
	d.interceptors.Store(&table{})
	d.capsules.Store(&map[string]*capsule{})
	return d
}

// Register admits a capsule with its ACL and the Target its interceptors are
// delivered to. It refuses the kernel's reserved id, an id already
// registered, an id that is not a single topic segment, and invalid patterns.
func (d *Dispatcher) Register(a CapsuleACL, t Target) error {
	c, err := d.newCapsule(a, t)
	if err != nil {
		return fmt.Errorf("dispatch: register capsule %q: %w", a.ID, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		c.cancel()
		return fmt.Errorf("dispatch: register capsule %q: %w", a.ID, ErrClosed)
	}
	current := *d.capsules.Load()
	if _, dup := current[a.ID]; dup {
		c.cancel()
		return fmt.Errorf("dispatch: register capsule %q: %w: already registered", a.ID, ErrRegistration)
	}
	if err := d.attach(a); err != nil {
		c.cancel()
		return fmt.Errorf("dispatch: register capsule %q: %w", a.ID, err)
	}
	next := maps.Clone(current)
	next[a.ID] = c
	d.publishRegistry(next)
	return nil
}

func (d *Dispatcher) newCapsule(a CapsuleACL, t Target) (*capsule, error) {
	switch {
	case a.ID == ipc.KernelSourceID:
		return nil, fmt.Errorf("%w: the id %q is reserved for the kernel", ErrRegistration, a.ID)
	case t == nil:
		return nil, fmt.Errorf("%w: no target", ErrRegistration)
	}
	if err := ipc.ValidateTopic(a.ID); err != nil || shapeOf(a.ID).segments != 1 {
		return nil, fmt.Errorf("%w: a capsule id must be one topic segment (it becomes source_id and appears in topics)", ErrRegistration)
	}
	pub, err := newACL("[publish]", a.Publish)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	sub, err := newACL("[subscribe]", a.Subscribe)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	for _, ic := range a.Interceptors {
		if err := ipc.ValidatePattern(ic.Pattern); err != nil {
			return nil, fmt.Errorf("%w: interceptor %q: %w", ErrRegistration, ic.Handler, err)
		}
		// An interceptor receives events just as a subscription does, so
		// its pattern must pass the same [subscribe] check.
		if !sub.allows(ic.Pattern) {
			return nil, fmt.Errorf("%w: interceptor pattern %q (handler %q) is not covered by [subscribe] (%s)", ErrRegistration, ic.Pattern, ic.Handler, sub.listing)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &capsule{
		id:           a.ID,
		target:       t,
		publish:      pub,
		subscribe:    sub,
		interceptors: append([]Interceptor(nil), a.Interceptors...),
		readsReplies: a.ReadsReplies,
		limiter:      newLimiter(d.opts.RateBytesPerSec, d.opts.RateBurst),
		ctx:          ctx,
		cancel:       cancel,
		queues:       make(map[string]*queue),
		routes:       make(map[*bus.Route]struct{}),
	}, nil
}

// publishRegistry installs a new capsule set and its interceptor table. The
// caller holds d.mu.
func (d *Dispatcher) publishRegistry(next map[string]*capsule) {
	d.capsules.Store(&next)
	d.interceptors.Store(buildTable(next))
	var readers []string
	for id, c := range next {
		if c.readsReplies {
			readers = append(readers, id)
		}
	}
	d.replyReaders.Store(&readers)
}

// Stopping tells the dispatcher that the kernel is shutting down: the
// capsules unregistered from now on are going away with it, and their
// queued calls are discarded without a warning (still counted in Stats).
func (d *Dispatcher) Stopping() { d.stopping.Store(true) }

// Unregister removes a capsule: its interceptors stop matching, its queued
// calls are discarded (counted), its routes are closed, and Unregister waits
// for its in-flight calls, whose context is cancelled, to return. It must not
// be called from inside that capsule's own Intercept. Unknown ids are ignored.
func (d *Dispatcher) Unregister(id string) {
	d.mu.Lock()
	current := *d.capsules.Load()
	c, ok := current[id]
	if ok {
		next := maps.Clone(current)
		delete(next, id)
		d.publishRegistry(next)
	}
	d.mu.Unlock()
	if ok {
		d.departing.Store(id, c)
		d.shutdown(c)
		d.departing.CompareAndDelete(id, c)
		d.detach(id)
	}
}

func (d *Dispatcher) shutdown(c *capsule) {
	c.mu.Lock()
	c.closed = true
	discarded := d.discardQueued(c)
	routes := c.routes
	c.routes = nil
	c.mu.Unlock()
	d.answerDiscarded(c, discarded)
	c.cancel()
	for r := range routes {
		r.Close()
	}
	done := make(chan struct{})
	go func() {
		c.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d.opts.UnregisterGrace):
		d.log.Error("dispatch: capsule still has calls running after unregister; they are abandoned",
			slog.String("capsule", c.id), slog.Duration("waited", d.opts.UnregisterGrace))
	}
}

// Close unregisters every capsule and stops every queue worker. Publishing
// afterwards fails with ErrClosed. It does not close the bus.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	if d.closed.Swap(true) {
		d.mu.Unlock()
		return
	}
	current := *d.capsules.Load()
	d.publishRegistry(map[string]*capsule{})
	d.mu.Unlock()
	for _, c := range current {
		d.shutdown(c)
		d.detach(c.id)
	}
	d.requests.close()
}

// Stats returns a snapshot of the counters.
func (d *Dispatcher) Stats() Stats {
	s := d.stats.snapshot()
	// Every publish goes through the bus, which counts it; per-route
	// deliveries are in the bus's route stats.
	s.Published = d.bus.Stats().Published
	return s
}

// Interceptors answers "who intercepts topic T": the ids of the capsules
// with an interceptor matching topic, ordered by (priority, id), each once.
// With a transport that knows other hosts' capsules (RemoteProviders), the
// other hosts' exact interceptors of topic follow this host's (DESIGN §9:
// one bus): a router on another host routes this host's tool calls, and a
// tool on another host is described from there. The answer is the same
// for every topic; what an interceptor of one means is its asker's
// business.
func (d *Dispatcher) Interceptors(topic string) []string {
	t := d.interceptors.Load()
	ids, ok := t.owners.get(topic)
	if !ok {
		ids = owners(t.match(topic))
		t.owners.put(topic, ids)
	}
	// The caller may change its copy; other hosts' interceptors change
	// with their presence, so they are added after the cache.
	return d.withRemoteProviders(topic, slices.Clone(ids))
}

// exactOwnersKey prefixes ExactInterceptors' entries in the owners cache;
// no topic contains '=', so they never meet Interceptors' entries.
const exactOwnersKey = "="

// ExactInterceptors answers "who intercepts exactly topic T": the ids of the
// capsules with an interceptor whose pattern is topic itself, ordered by
// (priority, id), each once: a wildcard interceptor is left out (the tool
// convention calls these a tool's providers, DESIGN §4c). With a transport
// that knows other hosts' capsules (RemoteProviders), theirs follow this
// host's.
func (d *Dispatcher) ExactInterceptors(topic string) []string {
	t := d.interceptors.Load()
	ids, ok := t.owners.get(exactOwnersKey + topic)
	if !ok {
		var exact []*link
		for _, l := range t.match(topic) {
			if l.pattern == topic {
				exact = append(exact, l)
			}
		}
		ids = owners(exact)
		t.owners.put(exactOwnersKey+topic, ids)
	}
	// The caller may change its copy; other hosts' providers change with
	// their presence, so they are added after the cache.
	return d.withRemoteProviders(topic, slices.Clone(ids))
}

// owners is the ids of the capsules behind links, in order, each once.
func owners(links []*link) []string {
	ids := make([]string, 0, len(links))
	seen := make(map[string]bool, len(links))
	for _, l := range links {
		if !seen[l.capsule.id] {
			seen[l.capsule.id] = true
			ids = append(ids, l.capsule.id)
		}
	}
	return ids
}

// lookupOwed is lookup for a failure reply: a capsule being unregistered
// still answers the calls its unload cut short.
func (d *Dispatcher) lookupOwed(id string) (*capsule, error) {
	c, err := d.lookup(id)
	if err != nil && errors.Is(err, ErrUnknownCapsule) {
		if v, ok := d.departing.Load(id); ok {
			return v.(*capsule), nil
		}
	}
	return c, err
}

func (d *Dispatcher) lookup(id string) (*capsule, error) {
	c := (*d.capsules.Load())[id]
	if c == nil {
		if d.closed.Load() {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("%w: %q", ErrUnknownCapsule, id)
	}
	return c, nil
}

// minRoutePrune is the tracked-route count below which closed routes are not
// looked for.
const minRoutePrune = 64

// track records a route so Unregister can close it. Routes the host closed
// itself (a handler's subscriptions end with the call) are forgotten
// whenever the tracked set has doubled since the last look, which keeps the
// cost amortised and the set bounded by twice the open routes.
func (d *Dispatcher) track(c *capsule, r *bus.Route) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.routes[r] = struct{}{}
	prune := len(c.routes) >= minRoutePrune && len(c.routes) >= 2*c.prunedAt
	c.mu.Unlock()
	if prune {
		d.pruneRoutes(c)
	}
	return true
}

func (d *Dispatcher) pruneRoutes(c *capsule) {
	// Only routes tracked before the bus snapshot are candidates: each of
	// them existed when the snapshot was taken, so if it is missing from
	// it, it is closed.
	c.mu.Lock()
	candidates := slices.Collect(maps.Keys(c.routes))
	c.mu.Unlock()
	open := make(map[uint64]bool)
	for _, rs := range d.bus.Stats().Routes {
		if rs.Owner == c.id {
			open[rs.ID] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range candidates {
		if !open[r.ID()] {
			delete(c.routes, r)
		}
	}
	c.prunedAt = len(c.routes)
}
