package bus

import (
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/ipc"
)

// PublishTo is PublishAt for an envelope addressed to some capsules only:
// it is stamped and counted as any publish, and enqueued only on the
// matching routes whose Owner is among owners (none: no capsule's route)
// and on the operator's routes (RouteSpec.Operator). The observer rings
// still see it. The dispatcher uses it for a reply, which
// only the capsules that asked may read (DESIGN §4c).
func (b *Bus) PublishTo(e *ipc.Envelope, now int64, owners []string) (int, error) {
	if b.closed.Load() {
		return 0, fmt.Errorf("bus: publish %s: %w", e.Topic, ErrClosed)
	}
	size := e.Size()
	if size > b.opts.MaxMessage {
		return 0, b.refuseTooLarge(e, size)
	}
	e.Seq = b.seq.Add(1)
	e.Timestamp = now
	return b.deliverTo(e, size, owners), nil
}

// DeliverTo is Deliver for an envelope addressed to owners only, as
// PublishTo: a reply from another host.
func (b *Bus) DeliverTo(e *ipc.Envelope, owners []string) (int, error) {
	if b.closed.Load() {
		return 0, fmt.Errorf("bus: deliver %s: %w", e.Topic, ErrClosed)
	}
	size := e.Size()
	if size > b.opts.MaxMessage {
		b.rejected.Add(1)
		return 0, fmt.Errorf("bus: deliver %s from %s: %d bytes, the limit is %d: %w",
			e.Topic, e.SourceID, size, b.opts.MaxMessage, ErrTooLarge)
	}
	return b.deliverTo(e, size, owners), nil
}

func (b *Bus) deliverTo(e *ipc.Envelope, size int, owners []string) int {
	t := b.table.Load()
	n := 0
	t.match(e.Topic, func(r *Route) {
		if r.spec.Operator || slices.Contains(owners, r.spec.Owner) {
			n += b.enqueueOn(r, e, size)
		}
	})
	b.finishDelivery(t, e, n)
	return n
}
