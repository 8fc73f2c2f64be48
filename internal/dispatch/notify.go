package dispatch

import (
	"github.com/astrid-go/astrid/ipc"
)

// Notify delivers e to one interceptor of capsule id — the one bound to
// pattern with handler — and to no other capsule or route: the kernel's
// word to a capsule that an event it was waiting for was lost at that very
// capsule's full queue (a reply lost at its requester's queue:
// request.go). A notice may go past the full queue by one more depth, and
// nothing else may: a flood still cannot grow a queue past that bound.
// e is not published (no bus route, no interceptor chain, no sequence
// number); its source is the caller's to set (the kernel's). It reports
// whether the notice was queued; one that was not is counted as a queue
// drop, never answered in turn.
func (d *Dispatcher) Notify(id, pattern, handler string, e *ipc.Envelope) bool {
	c, err := d.lookup(id)
	if err != nil {
		return false
	}
	l := &link{capsule: c, pattern: pattern, handler: handler}
	r := &run{env: e, links: []*link{l}, payload: e.Payload}
	switch d.enqueue(c, e.Principal, job{run: r}, nil, (ReplyHeadroom+1)*d.opts.QueueDepth) {
	case enqueued:
		return true
	case queueFull:
		d.stats.queueDrops.Add(1)
		d.logDrop(c, e)
	case capsuleGone:
		d.stats.orphaned.Add(1)
	}
	return false
}
