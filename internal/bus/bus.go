package bus

import (
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/ipc"
)

// Bus is the in-memory bus of one host. The zero value is not usable; call New.
type Bus struct {
	opts   Options
	now    func() int64 // Unix nanoseconds
	logger *slog.Logger

	// seq numbers the envelopes published here, and so counts them.
	seq   atomic.Uint64
	table atomic.Pointer[table]

	closed   atomic.Bool
	rejected atomic.Uint64
	unrouted atomic.Uint64

	// mu serialises changes to the route table and the totals of closed
	// routes and rings; Publish never takes it.
	mu      sync.Mutex
	nextID  uint64
	retired retiredTotals
}

// retiredTotals keeps the figures of closed routes and rings so that Stats
// stays cumulative after they are gone.
type retiredTotals struct {
	delivered, evicted, droppedOnClose, lagged uint64
}

// New returns an open bus.
func New(opts Options) *Bus {
	opts = opts.withDefaults()
	b := &Bus{opts: opts, logger: opts.Logger}
	if fake := opts.Now; fake != nil {
		b.now = func() int64 { return fake().UnixNano() }
	} else {
		b.now = clock.New().UnixNano
	}
	b.table.Store(emptyTable)
	return b
}

// Publish admits e, stamps its Seq (one counter for the bus, from 1) and
// Timestamp, and delivers it to every matching route and observer ring. It
// never blocks and returns the number of routes that took e. An envelope
// over MaxMessage is refused with ErrTooLarge and counted. After Publish, e is
// shared by every receiver and must not be modified.
func (b *Bus) Publish(e *ipc.Envelope) (int, error) {
	return b.PublishAt(e, b.now())
}

// Now reads the clock the bus stamps envelopes with, in Unix nanoseconds.
func (b *Bus) Now() int64 { return b.now() }

// PublishAt is Publish with the timestamp now, which the caller has just
// read from Now: the dispatcher reads the clock once per publish for both
// its rate limiter and the stamp.
func (b *Bus) PublishAt(e *ipc.Envelope, now int64) (int, error) {
	return b.PublishResolved(e, now, nil)
}

// Deliver enqueues an already stamped envelope on this host's matching routes
// and observer rings, without admitting or stamping it. It is the seam a
// transport (natsbus) uses to hand over envelopes published on another host;
// Publish uses it for local ones. It returns the number of routes that took e.
func (b *Bus) Deliver(e *ipc.Envelope) (int, error) {
	if b.closed.Load() {
		return 0, fmt.Errorf("bus: deliver %s: %w", e.Topic, ErrClosed)
	}
	size := e.Size()
	if size > b.opts.MaxMessage {
		b.rejected.Add(1)
		return 0, fmt.Errorf("bus: deliver %s from %s: %d bytes, the limit is %d: %w",
			e.Topic, e.SourceID, size, b.opts.MaxMessage, ErrTooLarge)
	}
	return b.deliver(e, size), nil
}

func (b *Bus) refuseTooLarge(e *ipc.Envelope, size int) error {
	b.rejected.Add(1)
	b.logger.Warn("bus: message refused: too large",
		"topic", e.Topic, "source_id", e.SourceID, "principal", e.Principal,
		"size", size, "limit", b.opts.MaxMessage)
	return fmt.Errorf("bus: publish %s from %s: %d bytes, the limit is %d: %w",
		e.Topic, e.SourceID, size, b.opts.MaxMessage, ErrTooLarge)
}

func (b *Bus) deliver(e *ipc.Envelope, size int) int {
	t := b.table.Load()
	n := 0
	t.match(e.Topic, func(r *Route) { n += b.enqueueOn(r, e, size) })
	b.finishDelivery(t, e, n)
	return n
}

// enqueueOn offers e to one matching route and returns 1 if it took it.
func (b *Bus) enqueueOn(r *Route, e *ipc.Envelope, size int) int {
	if !r.accepts(e) {
		return 0
	}
	taken, evicted := r.enqueue(e, size)
	if evicted > 0 {
		b.logEviction(r, e, evicted)
	}
	if taken {
		return 1
	}
	return 0
}

// finishDelivery copies e to the observer rings of t and counts it as
// unrouted if no route took it.
func (b *Bus) finishDelivery(t *table, e *ipc.Envelope, routed int) {
	for _, g := range t.rings {
		g.push(e)
	}
	if routed == 0 {
		b.unrouted.Add(1)
	}
}

// logEviction logs a route's evictions when its running total crosses a
// power of two, so a flood leaves a handful of lines, not one per message;
// Stats has the exact counts.
func (b *Bus) logEviction(r *Route, e *ipc.Envelope, evicted int) {
	r.mu.Lock()
	total := r.evictions
	r.mu.Unlock()
	before := total - uint64(evicted)
	if bits.Len64(total) == bits.Len64(before) {
		return
	}
	b.logger.Warn("bus: route over budget: evicted the oldest messages of its heaviest principal",
		"route", r.id, "owner", r.spec.Owner, "pattern", r.spec.Pattern,
		"topic", e.Topic, "publisher_principal", e.Principal,
		"evicted_total", total, "budget", b.opts.RouteBudget)
}

// Subscribe creates a route receiving every envelope published afterwards
// whose topic matches spec.Pattern (and, with spec.Scoped, whose principal is
// spec.Principal).
func (b *Bus) Subscribe(spec RouteSpec) (*Route, error) {
	if err := ipc.ValidatePattern(spec.Pattern); err != nil {
		return nil, fmt.Errorf("bus: subscribe %s for %s: %w", spec.Pattern, spec.Owner, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, fmt.Errorf("bus: subscribe %s for %s: %w", spec.Pattern, spec.Owner, ErrClosed)
	}
	b.nextID++
	r := &Route{
		bus:      b,
		id:       b.nextID,
		spec:     spec,
		wildcard: strings.Contains("."+spec.Pattern+".", ".*."),
		queue:    newFairQueue(b.opts.RouteBudget, b.opts.Quantum),
		doorbell: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	old := b.table.Load()
	b.table.Store(buildTable(append(slices.Clip(old.routes), r), old.rings))
	return r, nil
}

// Observe returns a new all-topics ring for a kernel observer.
func (b *Bus) Observe() *Ring {
	g := &Ring{
		bus:      b,
		size:     b.opts.RingSize,
		doorbell: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		g.closed = true
		close(g.done)
		return g
	}
	old := b.table.Load()
	b.table.Store(&table{
		routes: old.routes, exact: old.exact, byPosition: old.byPosition,
		positions: old.positions, anyLiteral: old.anyLiteral,
		rings: append(slices.Clip(old.rings), g),
	})
	return g
}

func (b *Bus) removeRoute(r *Route) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.table.Load()
	if i := slices.Index(old.routes, r); i >= 0 {
		routes := slices.Delete(slices.Clone(old.routes), i, i+1)
		b.table.Store(buildTable(routes, old.rings))
	}
	b.retireRoute(r)
}

func (b *Bus) retireRoute(r *Route) {
	final, dropped, wasOpen := r.shutdown()
	if !wasOpen {
		return
	}
	b.retired.delivered += final.Delivered
	b.retired.evicted += final.Evicted
	b.retired.droppedOnClose += dropped
	if dropped > 0 {
		b.logger.Info("bus: route closed with messages pending: dropped",
			"route", r.id, "owner", r.spec.Owner, "pattern", r.spec.Pattern, "dropped", dropped)
	}
}

func (b *Bus) removeRing(g *Ring) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.table.Load()
	if i := slices.Index(old.rings, g); i >= 0 {
		b.table.Store(&table{
			routes: old.routes, exact: old.exact, byPosition: old.byPosition,
			positions: old.positions, anyLiteral: old.anyLiteral,
			rings: slices.Delete(slices.Clone(old.rings), i, i+1),
		})
	}
	if lagged, wasOpen := g.shutdown(); wasOpen {
		b.retired.lagged += lagged
	}
}

// Close closes every route and ring; receivers get ErrClosed and Publish
// returns ErrClosed from then on. It is idempotent.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed.Store(true)
	old := b.table.Swap(emptyTable)
	for _, r := range old.routes {
		b.retireRoute(r)
	}
	for _, g := range old.rings {
		if lagged, wasOpen := g.shutdown(); wasOpen {
			b.retired.lagged += lagged
		}
	}
}
