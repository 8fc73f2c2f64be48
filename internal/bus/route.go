package bus

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/astrid-go/astrid/ipc"
)

// RouteSpec says what a route receives.
type RouteSpec struct {
	// Owner is the subscribing capsule's id, for stats and logs.
	Owner string
	// Pattern is matched with ipc.MatchRoute; the caller has validated it
	// with ipc.ValidatePattern and Subscribe checks it again.
	Pattern string
	// Principal, with Scoped, admits only envelopes whose Principal equals
	// it (the empty principal then means system events only).
	Principal string
	Scoped    bool
	// Operator marks a kernel-side route of the operator's own views (the
	// web view's turns): it receives envelopes addressed to some capsules
	// too (PublishTo). The dispatcher never sets it for a capsule.
	Operator bool
	// Accept, when set, admits only the envelopes it returns true for. It
	// runs on the publisher's goroutine for every envelope the pattern and
	// scope admit, before any lock of the route's is taken, so a refused
	// envelope costs the route nothing and never wakes its receiver. It
	// must be quick, must not block or publish, and must not keep the
	// envelope (it is shared with every other route).
	Accept func(*ipc.Envelope) bool
}

// Delivery is one received envelope. Lost is how many envelopes this
// receiver lost (evicted, or overwritten in a ring) since its previous
// receive; they are counted in Stats as well.
type Delivery struct {
	Envelope *ipc.Envelope
	Lost     uint64
}

// maxBatch bounds what a receiver moves out of the route per lock
// acquisition: few enough messages and bytes that the batch, which is out of
// the budget's reach, stays small (128 KiB beside a 4 MiB budget), and far
// fewer than one DRR round of a crowded route, so a quiet principal's next
// message is never behind more than a batch. 256 rather than 64: the lock
// changes cores four times less often, ≈ 15 % of a publish in benchmark (a).
const (
	maxBatchMessages = 256
	maxBatchBytes    = 128 << 10
)

// Route is one subscription: its own copy of every matching envelope, held
// in per-principal queues under a byte budget.
type Route struct {
	bus      *Bus
	id       uint64
	spec     RouteSpec
	wildcard bool

	// lost is credited by publishers (evictions) and taken by receivers.
	lost atomic.Uint64

	// recvMu guards the receiver side: the batch taken out of the queue.
	// Lock order: Bus.mu, then recvMu, then mu.
	recvMu     sync.Mutex
	ready      deque[entry]
	readyBytes int
	delivered  uint64

	// The receiver updates the fields above for every message and
	// publishers lock mu for every message: on one cache line, each side
	// would keep taking the line from the other (false sharing).
	_ [128]byte

	mu      sync.Mutex
	queue   fairQueue
	waiting bool // a receiver is parked on doorbell
	closed  bool
	// evictions and enqueued are totals over the route's life.
	evictions uint64
	enqueued  uint64

	doorbell chan struct{}
	done     chan struct{}
}

// ID is the route's subscription id, unique per bus, from 1.
func (r *Route) ID() uint64 { return r.id }

// Spec returns what the route was created with.
func (r *Route) Spec() RouteSpec { return r.spec }

// accepts is the scope check and the spec's Accept, made before any lock is
// taken so that a refused envelope costs the route nothing and never wakes
// its receiver.
func (r *Route) accepts(e *ipc.Envelope) bool {
	if r.spec.Scoped && e.Principal != r.spec.Principal {
		return false
	}
	return r.spec.Accept == nil || r.spec.Accept(e)
}

// enqueue adds e and reports whether the route took it and how many older
// messages it evicted to make room.
func (r *Route) enqueue(e *ipc.Envelope, size int) (taken bool, evicted int) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false, 0
	}
	evicted = r.queue.push(e, size)
	r.enqueued++
	if evicted > 0 {
		r.evictions += uint64(evicted)
		r.lost.Add(uint64(evicted))
	}
	wake := r.waiting
	r.waiting = false
	r.mu.Unlock()
	if wake {
		select {
		case r.doorbell <- struct{}{}:
		default:
		}
	}
	return true, evicted
}

// Recv blocks until a message arrives, ctx is done (ctx.Err()) or the route
// or bus is closed (ErrClosed).
func (r *Route) Recv(ctx context.Context) (Delivery, error) {
	for {
		d, ok, err := r.take(true)
		if err != nil {
			return Delivery{}, err
		}
		if ok {
			return d, nil
		}
		select {
		case <-r.doorbell:
		case <-r.done:
			return Delivery{}, ErrClosed
		case <-ctx.Done():
			return Delivery{}, ctx.Err()
		}
	}
}

// TryRecv returns the next message if one is queued; it never blocks.
func (r *Route) TryRecv() (Delivery, bool) {
	d, ok, _ := r.take(false)
	return d, ok
}

// take serves from the receiver's batch, refilling it from the queue in DRR
// order when empty. With park set and nothing queued it marks the receiver
// as waiting, so the next enqueue rings the doorbell.
func (r *Route) take(park bool) (Delivery, bool, error) {
	r.recvMu.Lock()
	defer r.recvMu.Unlock()
	if r.ready.len() == 0 {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return Delivery{}, false, ErrClosed
		}
		r.readyBytes = r.queue.popBatch(&r.ready, maxBatchMessages, maxBatchBytes)
		if r.ready.len() == 0 && park {
			r.waiting = true
		}
		r.mu.Unlock()
		if r.ready.len() == 0 {
			return Delivery{}, false, nil
		}
	}
	e := r.ready.popFront()
	r.readyBytes -= e.size
	r.delivered++
	var lost uint64
	if r.lost.Load() != 0 { // a plain load is cheaper than a swap on the usual path
		lost = r.lost.Swap(0)
	}
	return Delivery{Envelope: e.env, Lost: lost}, true, nil
}

// Close removes the route from the bus and drops what it still holds,
// counting it as dropped on close. It is idempotent.
func (r *Route) Close() {
	r.bus.removeRoute(r)
}

// shutdown closes the route; the caller holds Bus.mu. It returns the
// route's final figures so the bus can keep them in its totals.
func (r *Route) shutdown() (final RouteStats, dropped uint64, wasOpen bool) {
	r.recvMu.Lock()
	defer r.recvMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return RouteStats{}, 0, false
	}
	final = r.statsLocked()
	dropped = uint64(r.queue.clear() + r.ready.len())
	r.ready.reset()
	r.readyBytes = 0
	r.closed = true
	close(r.done)
	return final, dropped, true
}

// statsLocked reads the route's figures; the caller holds recvMu and mu.
func (r *Route) statsLocked() RouteStats {
	return RouteStats{
		ID:             r.id,
		Owner:          r.spec.Owner,
		Pattern:        r.spec.Pattern,
		Principal:      r.spec.Principal,
		Scoped:         r.spec.Scoped,
		QueuedBytes:    r.queue.bytes + r.readyBytes,
		QueuedMessages: r.queue.msgs + r.ready.len(),
		Principals:     r.queue.principals(),
		Enqueued:       r.enqueued,
		Delivered:      r.delivered,
		Evicted:        r.evictions,
	}
}
