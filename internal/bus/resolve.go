package bus

import (
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// Resolution is the set of routes one topic matched in one snapshot of the
// bus's routing table. A publisher that sends one topic over and over (the
// dispatcher keeps one per topic a capsule publishes) resolves it once and
// hands the resolution to PublishResolved, which skips the index lookups
// while the table is unchanged. A Resolution is immutable.
type Resolution struct {
	t      *table
	topic  string
	routes []*Route
}

// Resolve matches topic against the routes the bus has now.
func (b *Bus) Resolve(topic string) *Resolution {
	t := b.table.Load()
	res := &Resolution{t: t, topic: topic}
	t.match(topic, func(r *Route) { res.routes = append(res.routes, r) })
	return res
}

// Topic is the topic res was resolved for.
func (res *Resolution) Topic() string { return res.topic }

// Routes is the routes res matched; the caller must not change the slice.
func (res *Resolution) Routes() []*Route { return res.routes }

// Current reports whether res still describes the bus's routing: no route
// has been added or removed since it was resolved.
func (b *Bus) Current(res *Resolution) bool {
	return res != nil && res.t == b.table.Load()
}

// PublishResolved is PublishAt for an envelope whose topic res was resolved
// for. A res that is nil, stale (routes changed since) or for another topic
// is ignored and the topic matched afresh, so a caller's cache can cost a
// lookup but never misdeliver.
func (b *Bus) PublishResolved(e *ipc.Envelope, now int64, res *Resolution) (int, error) {
	if b.closed.Load() {
		return 0, fmt.Errorf("bus: publish %s: %w", e.Topic, ErrClosed)
	}
	size := e.Size()
	if size > b.opts.MaxMessage {
		return 0, b.refuseTooLarge(e, size)
	}
	e.Seq = b.seq.Add(1) // also the count of envelopes published
	e.Timestamp = now
	t := b.table.Load()
	if res == nil || res.t != t || res.topic != e.Topic {
		return b.deliver(e, size), nil
	}
	n := 0
	for _, r := range res.routes {
		n += b.enqueueOn(r, e, size)
	}
	b.finishDelivery(t, e, n)
	return n, nil
}
