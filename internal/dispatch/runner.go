package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
)

// A Runner is a goroutine that is about to have nothing to do and offers to
// make, itself, the interceptor call its own publish causes, instead of a
// queue worker being woken for it. A tool call is a relay (caller → router →
// tool → router → caller) in which each step's publish is the last thing its
// handler does; with a Runner the whole relay runs on one goroutine, and the
// cost of waking a parked goroutine on another thread (tens of µs on a VM)
// is paid once per call instead of four times. See docs/rationale/kernel-bus.md.
//
// A Runner adopts at most one queue, and only a queue that has no worker:
// fan-out to several interceptors of one priority still runs concurrently,
// and a queue that is busy keeps its worker and its order. An adopted queue
// holds exactly the one job the runner's publish pushed; anything queued
// behind it while that job runs goes to a worker.
//
// The owner's duty is the invariant everything rests on: while a Runner is
// open, its owner will call Run (or Close, or HandOff) before it waits for
// anything. Queue workers are Runners between taking a job and parking;
// ToolClient-style callers are Runners between publishing and waiting for
// the reply; the host layer hands adopted work back to workers before any
// host call that waits on the world (a receive, a poll, file or network
// I/O), so a handler that publishes and then waits for the answer does not
// wait on itself.
type Runner struct {
	d       *Dispatcher
	mu      sync.Mutex
	open    bool
	c       *capsule // the adopted queue's capsule, nil when none
	q       *queue
	adopted atomic.Bool // c != nil, read without the lock by HandOff
}

// NewRunner returns a closed Runner for d.
func (d *Dispatcher) NewRunner() *Runner { return &Runner{d: d} }

// Open makes r accept a queue from publishes that name it.
func (r *Runner) Open() {
	r.mu.Lock()
	r.open = true
	r.mu.Unlock()
}

// adopt takes ownership of q, whose worker slot the caller (enqueue, under
// c.mu) has just claimed. It fails when r is closed or already holds a queue.
func (r *Runner) adopt(c *capsule, q *queue) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.open || r.c != nil {
		return false
	}
	r.c, r.q = c, q
	r.adopted.Store(true)
	return true
}

// take removes and returns the adopted queue, if any.
func (r *Runner) take() (*capsule, *queue) {
	r.mu.Lock()
	c, q := r.c, r.q
	r.c, r.q = nil, nil
	r.adopted.Store(false)
	r.mu.Unlock()
	return c, q
}

// Run makes the adopted call, then the one that call's publish handed back,
// and so on, on the calling goroutine, until no call is adopted. r stays
// open.
func (r *Runner) Run() {
	for {
		c, q := r.take()
		if c == nil {
			return
		}
		r.d.runAdopted(r, c, q)
	}
}

// HandOff gives the adopted queue, if any, to a worker goroutine; r stays
// open. The host layer calls it before a handler waits.
func (r *Runner) HandOff() {
	if r == nil || !r.adopted.Load() {
		return
	}
	if c, q := r.take(); c != nil {
		go r.d.work(c, q)
	}
}

// Close stops r accepting queues and hands what it holds to a worker.
func (r *Runner) Close() {
	r.mu.Lock()
	r.open = false
	c, q := r.c, r.q
	r.c, r.q = nil, nil
	r.adopted.Store(false)
	r.mu.Unlock()
	if c != nil {
		go r.d.work(c, q)
	}
}

// runAdopted makes the one call on q that r's publish queued, then releases
// q: to a worker when more calls arrived meanwhile, else back to idle. The
// worker slot (c.workers, q.running) claimed at adoption passes with it.
func (d *Dispatcher) runAdopted(r *Runner, c *capsule, q *queue) {
	c.mu.Lock()
	j, ok := q.pop()
	q.inCall = ok
	c.mu.Unlock()
	if ok {
		d.invoke(withRunner(c.ctx, r), c, j, r)
	}
	c.mu.Lock()
	q.inCall = false
	if q.n > 0 && !c.closed {
		c.mu.Unlock()
		go d.work(c, q)
		return
	}
	q.running = false
	if c.queues[q.principal] == q {
		delete(c.queues, q.principal)
	}
	c.mu.Unlock()
	c.workers.Done()
}

type runnerKey struct{}

// withRunner returns the capsule context cc carrying r, for an interceptor
// call made by r's goroutine: the host layer reads it (RunnerFrom) into the
// call's Caller.
func withRunner(cc context.Context, r *Runner) context.Context {
	return context.WithValue(cc, runnerKey{}, r)
}

// RunnerFrom returns the Runner an interceptor call's context carries, or
// nil.
func RunnerFrom(ctx context.Context) *Runner {
	r, _ := ctx.Value(runnerKey{}).(*Runner)
	return r
}
