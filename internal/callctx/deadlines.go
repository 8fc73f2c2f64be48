package callctx

import (
	"context"
	"sync"
	"time"
)

// Deadlines expires call contexts with one timer among them all, instead of
// a timer per context: a timer costs ≈ 350 ns to start and stop (the
// runtime's timer heap, its lock and an allocation), about as much as the
// rest of a call context, and a tool call makes three.
//
// Its contexts wait on a list sorted by deadline. Contexts that share a
// timeout (a capsule's calls: now + its call deadline) join in deadline
// order, so joining is an append; the timer is armed for the head only,
// and a context that ends early leaves the list without touching it (the
// timer then fires for nothing, re-arms for the new head, and is done).
// The zero Deadlines is ready to use; it must not be copied.
type Deadlines struct {
	mu         sync.Mutex
	head, tail *Context
	timer      *time.Timer
	armedFor   time.Time // the deadline the timer fires for; zero when idle
}

// New is the package's New, with c's deadline kept by q when it is c's own
// (not inherited from parent).
func (q *Deadlines) New(parent context.Context, d time.Time) *Context {
	return newContext(parent, d, q)
}

// join puts c on the list, behind the last context whose deadline is not
// later than c's.
func (q *Deadlines) join(c *Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.tail
	for at != nil && at.deadline.After(c.deadline) {
		at = at.qprev
	}
	c.qprev = at
	if at == nil {
		c.qnext, q.head = q.head, c
	} else {
		c.qnext, at.qnext = at.qnext, c
	}
	if c.qnext == nil {
		q.tail = c
	} else {
		c.qnext.qprev = c
	}
	c.queued = true
	if q.head == c && (q.armedFor.IsZero() || c.deadline.Before(q.armedFor)) {
		q.arm(c.deadline)
	}
}

// leave takes c off the list if it is still there.
func (q *Deadlines) leave(c *Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !c.queued {
		return
	}
	q.unlink(c)
}

func (q *Deadlines) unlink(c *Context) {
	if c.qprev == nil {
		q.head = c.qnext
	} else {
		c.qprev.qnext = c.qnext
	}
	if c.qnext == nil {
		q.tail = c.qprev
	} else {
		c.qnext.qprev = c.qprev
	}
	c.qprev, c.qnext, c.queued = nil, nil, false
}

// arm sets the timer for deadline d. The caller holds q.mu.
func (q *Deadlines) arm(d time.Time) {
	q.armedFor = d
	wait := time.Until(d)
	if q.timer == nil {
		q.timer = time.AfterFunc(wait, q.fire)
		return
	}
	q.timer.Reset(wait)
}

// fire expires every context whose deadline has passed and re-arms the
// timer for the first one that remains.
func (q *Deadlines) fire() {
	q.mu.Lock()
	now := time.Now()
	var expired *Context
	for c := q.head; c != nil && !c.deadline.After(now); c = q.head {
		q.unlink(c)
		c.qnext, expired = expired, c // reuse the link: expired is private now
	}
	q.armedFor = time.Time{}
	if q.head != nil {
		q.arm(q.head.deadline)
	}
	q.mu.Unlock()
	for c := expired; c != nil; {
		next := c.qnext
		c.qnext = nil
		c.expire()
		c = next
	}
}
