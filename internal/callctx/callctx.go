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

	mu         sync.Mutex
	done       chan struct{} // made by the first Done, closed on cancel
	err, cause error
	timer      *time.Timer
	stopParent func() bool
	funcs      []*afterFunc
}

type afterFunc struct{ f func() }

// closed is the done channel of a Context cancelled before anyone asked.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// New returns a Context under parent, with deadline d when d is not zero
// and earlier than parent's. It is cancelled when the deadline passes
// (context.DeadlineExceeded), when parent is (with parent's cause), or by
// Cancel.
func New(parent context.Context, d time.Time) *Context {
	c := &Context{parent: parent}
	pd, ok := parent.Deadline()
	switch {
	case ok && (d.IsZero() || pd.Before(d)):
		c.deadline, c.hasDeadline = pd, true
	case !d.IsZero():
		c.deadline, c.hasDeadline = d, true
	}
	if err := parent.Err(); err != nil {
		c.cancel(err, context.Cause(parent))
		return c
	}
	if c.hasDeadline {
		wait := time.Until(c.deadline)
		if wait <= 0 {
			c.cancel(context.DeadlineExceeded, context.DeadlineExceeded)
			return c
		}
		c.mu.Lock()
		c.timer = time.AfterFunc(wait, c.expire)
		c.mu.Unlock()
	}
	if parent.Done() != nil {
		stop := AfterFunc(parent, c.parentDone)
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			stop()
		} else {
			c.stopParent = stop
			c.mu.Unlock()
		}
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
	if c.done == nil {
		c.done = closed
	} else {
		close(c.done)
	}
	timer, stopParent, funcs := c.timer, c.stopParent, c.funcs
	c.timer, c.stopParent, c.funcs = nil, nil, nil
	c.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if stopParent != nil {
		stopParent()
	}
	for _, a := range funcs {
		go a.f()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value implements context.Context.
func (c *Context) Value(key any) any { return c.parent.Value(key) }

// Cause is c's cause: nil while c is live.
func (c *Context) Cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// AfterFunc arranges for f to run in its own goroutine once c is
// cancelled (at once if it already is), as context.AfterFunc does; stop
// reports whether it stopped f from running. The context package calls it
// too, for contexts derived from c, so that they need no goroutine.
func (c *Context) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.funcs = append(c.funcs, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.funcs {
			if x == a {
				c.funcs = append(c.funcs[:i], c.funcs[i+1:]...)
				return true
			}
		}
		return false
	}
}

// String names the context in panics and logs, as the context package's do.
func (c *Context) String() string { return "callctx.Context" }

// Cause is context.Cause that also sees a Context's own cause.
func Cause(ctx context.Context) error {
	if c, ok := ctx.(*Context); ok {
		return c.Cause()
	}
	return context.Cause(ctx)
}

// AfterFunc is context.AfterFunc, using a Context's own list when ctx is
// one (no registration, no done channel).
func AfterFunc(ctx context.Context, f func()) (stop func() bool) {
	if c, ok := ctx.(*Context); ok {
		return c.AfterFunc(f)
	}
	return context.AfterFunc(ctx, f)
}
