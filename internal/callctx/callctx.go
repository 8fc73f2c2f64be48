package callctx

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Context is a call's context. Its zero value is not usable; see New.
//
// context.Cause does not see a Context's cause (it finds an ancestor's);
// use Cause from this package.
type Context struct {
	parent      context.Context
	deadline    time.Time
	hasDeadline bool

	claimed atomic.Bool
	// ended is set once err is: Err and Cause, asked at every host call,
	// answer a live context without the lock.
	ended atomic.Bool

	mu         sync.Mutex
	done       chan struct{} // made by the first Done, closed on cancel
	err, cause error
	timer      *time.Timer
	stopParent Watch
	// dq keeps the deadline instead of timer; qprev and qnext are c's
	// place on its list (guarded by dq.mu), queued whether it is on it.
	dq           *Deadlines
	qprev, qnext *Context
	queued       bool
	// funcs are what cancellation runs: functions from AfterFunc and Watch,
	// and child Contexts. They start in inline, so that the usual one or
	// two cost no allocation.
	funcs  []afterFunc
	inline [2]afterFunc
	nextID uint64
}

// afterFunc is one registration: f to run in a goroutine, or a child
// Context to cancel with c's error and cause.
type afterFunc struct {
	id    uint64
	f     func()
	child *Context
}

// Carrier is a context that is a Context underneath, with something of its
// own on top (a value): New and AfterFunc register with the Context inside
// it instead of going through the context package, which allocates.
type Carrier interface {
	context.Context
	CallContext() *Context
}

// CallContext implements Carrier.
func (c *Context) CallContext() *Context { return c }

// Watch is a registration made by Context.Watch or AfterFunc; Stop undoes
// it. The zero Watch stops nothing.
type Watch struct {
	c    *Context
	id   uint64
	stop func() bool // for contexts that are not Contexts
}

// Stop reports whether it stopped the registration before it ran.
func (w Watch) Stop() bool {
	switch {
	case w.c != nil:
		return w.c.remove(w.id)
	case w.stop != nil:
		return w.stop()
	}
	return false
}

// closed is the done channel of a Context cancelled before anyone asked.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// New returns a Context under parent, with deadline d when d is not zero
// and earlier than parent's. It is cancelled when the deadline passes
// (context.DeadlineExceeded), when parent is (with parent's cause), or by
// Cancel.
func New(parent context.Context, d time.Time) *Context {
	return newContext(parent, d, nil)
}

// newContext is New, with a deadline of c's own kept by q when q is not nil.
func newContext(parent context.Context, d time.Time, q *Deadlines) *Context {
	c := &Context{parent: parent}
	c.funcs = c.inline[:0]
	pd, ok := parent.Deadline()
	own := false
	switch {
	case ok && (d.IsZero() || pd.Before(d)):
		c.deadline, c.hasDeadline = pd, true
	case !d.IsZero():
		c.deadline, c.hasDeadline, own = d, true, true
	}
	if err := parent.Err(); err != nil {
		c.cancel(err, Cause(parent))
		return c
	}
	if c.hasDeadline {
		wait := time.Until(c.deadline)
		if wait <= 0 {
			c.cancel(context.DeadlineExceeded, context.DeadlineExceeded)
			return c
		}
		if own && q != nil {
			// Set before joining: once on the list, c may expire at once.
			c.dq = q
			q.join(c)
		} else {
			c.mu.Lock()
			c.timer = time.AfterFunc(wait, c.expire)
			c.mu.Unlock()
		}
	}
	var w Watch
	if p, ok := parent.(Carrier); ok {
		w = p.CallContext().add(afterFunc{child: c})
	} else if parent.Done() != nil {
		w = Watch{stop: context.AfterFunc(parent, c.parentDone)}
	} else {
		return c
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		w.Stop()
	} else {
		c.stopParent = w
		c.mu.Unlock()
	}
	return c
}

func (c *Context) expire() { c.cancel(context.DeadlineExceeded, context.DeadlineExceeded) }

func (c *Context) parentDone() { c.cancel(c.parent.Err(), Cause(c.parent)) }

// Cancel cancels c with cause (context.Canceled when nil); Err then
// reports context.Canceled. Only the first cancellation counts.
func (c *Context) Cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	c.cancel(context.Canceled, cause)
}

func (c *Context) cancel(err, cause error) {
	if cause == nil {
		cause = err
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err, c.cause = err, cause
	c.ended.Store(true)
	if c.done == nil {
		c.done = closed
	} else {
		close(c.done)
	}
	timer, stopParent, funcs := c.timer, c.stopParent, c.funcs
	c.timer, c.stopParent, c.funcs = nil, Watch{}, nil
	c.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if c.dq != nil {
		c.dq.leave(c)
	}
	stopParent.Stop()
	// funcs is not changed again once err is set: nothing is added to a
	// cancelled Context, and remove finds nothing.
	for _, a := range funcs {
		if a.child != nil {
			a.child.cancel(err, cause)
		} else {
			go a.f()
		}
	}
}

// Claim reports whether the caller is the first to claim c: the host layer
// takes over the Context its engine was given for the call it opens, and
// makes a new one under it for any further call.
func (c *Context) Claim() bool { return c.claimed.CompareAndSwap(false, true) }

// Deadline implements context.Context.
func (c *Context) Deadline() (time.Time, bool) { return c.deadline, c.hasDeadline }

// Done implements context.Context.
func (c *Context) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
	}
	return c.done
}

// Err implements context.Context: context.DeadlineExceeded after the
// deadline, context.Canceled after Cancel, or the parent's error.
func (c *Context) Err() error {
	if !c.ended.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value implements context.Context.
func (c *Context) Value(key any) any { return c.parent.Value(key) }

// Cause is c's cause: nil while c is live.
func (c *Context) Cause() error {
	if !c.ended.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// AfterFunc arranges for f to run in its own goroutine once c is
// cancelled (at once if it already is), as context.AfterFunc does; stop
// reports whether it stopped f from running. The context package calls it
// too, for contexts derived from c, so that they need no goroutine.
func (c *Context) AfterFunc(f func()) (stop func() bool) {
	return c.Watch(f).Stop
}

// Watch is AfterFunc without the allocations: f runs in its own goroutine
// once c is cancelled (at once if it already is) unless the Watch is
// stopped first.
func (c *Context) Watch(f func()) Watch {
	return c.add(afterFunc{f: f})
}

// add registers a; when c is already cancelled it runs a at once and
// returns the zero Watch.
func (c *Context) add(a afterFunc) Watch {
	c.mu.Lock()
	if c.err != nil {
		err, cause := c.err, c.cause
		c.mu.Unlock()
		if a.child != nil {
			a.child.cancel(err, cause)
		} else {
			go a.f()
		}
		return Watch{}
	}
	c.nextID++
	a.id = c.nextID
	c.funcs = append(c.funcs, a)
	c.mu.Unlock()
	return Watch{c: c, id: a.id}
}

// remove takes registration id off c's list, reporting whether it was
// still there. The search is linear: a call context holds one or two
// registrations, and a capsule's context one per call in flight (at most one
// per principal with queued work).
func (c *Context) remove(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.funcs {
		if a.id == id {
			last := len(c.funcs) - 1
			copy(c.funcs[i:], c.funcs[i+1:])
			c.funcs[last] = afterFunc{} // drop the references
			c.funcs = c.funcs[:last]
			return true
		}
	}
	return false
}

// String names the context in panics and logs, as the context package's do.
func (c *Context) String() string { return "callctx.Context" }

// Cause is context.Cause that also sees a Context's own cause.
func Cause(ctx context.Context) error {
	if c, ok := ctx.(Carrier); ok {
		return c.CallContext().Cause()
	}
	return context.Cause(ctx)
}

// AfterFunc is context.AfterFunc, using a Context's own list when ctx is
// one (no registration, no done channel).
func AfterFunc(ctx context.Context, f func()) Watch {
	if c, ok := ctx.(Carrier); ok {
		return c.CallContext().Watch(f)
	}
	return Watch{stop: context.AfterFunc(ctx, f)}
}
