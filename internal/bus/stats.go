package bus

// Stats is a snapshot of the bus's counters. Totals are cumulative over the
// bus's life, including routes and rings already closed.
type Stats struct {
	// Published counts envelopes admitted by Publish.
	Published uint64
	// Rejected counts envelopes refused as too large.
	Rejected uint64
	// Unrouted counts admitted envelopes no route took.
	Unrouted uint64
	// Delivered counts envelopes handed to route receivers.
	Delivered uint64
	// Evicted counts envelopes dropped from routes over budget.
	Evicted uint64
	// DroppedOnClose counts envelopes still queued when their route closed.
	DroppedOnClose uint64
	// Lagged counts envelopes overwritten in observer rings before being read.
	Lagged uint64
	// Routes describes each open route, in subscription order.
	Routes []RouteStats
	// Rings is the number of open observer rings.
	Rings int
}

// RouteStats describes one open route.
type RouteStats struct {
	ID             uint64
	Owner          string
	Pattern        string
	Principal      string
	Scoped         bool
	QueuedBytes    int
	QueuedMessages int
	// Principals is the number of principals with a queue in the route.
	Principals int
	Enqueued   uint64
	Delivered  uint64
	Evicted    uint64
}

// Stats returns a consistent snapshot of every counter.
func (b *Bus) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.table.Load()
	s := Stats{
		Published:      b.seq.Load(),
		Rejected:       b.rejected.Load(),
		Unrouted:       b.unrouted.Load(),
		Delivered:      b.retired.delivered,
		Evicted:        b.retired.evicted,
		DroppedOnClose: b.retired.droppedOnClose,
		Lagged:         b.retired.lagged,
		Routes:         make([]RouteStats, 0, len(t.routes)),
		Rings:          len(t.rings),
	}
	for _, r := range t.routes {
		r.recvMu.Lock()
		r.mu.Lock()
		rs := r.statsLocked()
		r.mu.Unlock()
		r.recvMu.Unlock()
		s.Delivered += rs.Delivered
		s.Evicted += rs.Evicted
		s.Routes = append(s.Routes, rs)
	}
	for _, g := range t.rings {
		g.mu.Lock()
		s.Lagged += g.lagged
		g.mu.Unlock()
	}
	return s
}
