package dispatch

import (
	"log/slog"
	"time"
)

// Defaults for the interceptor queues.
const (
	// DefaultQueueDepth is the capacity of one (capsule, principal) queue.
	DefaultQueueDepth = 64
	// DefaultIdleTimeout is how long (at least, and at most twice) a queue
	// worker waits for work before exiting. Short, so that thousands of principals seen once do not pin
	// a goroutine each; long enough that a busy queue keeps its worker.
	DefaultIdleTimeout = time.Second
	// DefaultUnregisterGrace is how long unregistering a capsule waits for
	// its cancelled calls to return.
	DefaultUnregisterGrace = 5 * time.Second
)

// job is one pending interceptor call: link idx of run.
type job struct {
	run *run
	idx int
}

// queue is the FIFO of pending calls for one (capsule, principal). Its fields
// are guarded by the owning capsule's mutex. At most one worker drains it, so
// a capsule handles one principal's events one at a time, in order.
type queue struct {
	principal string
	buf       []job // ring
	head, n   int
	running   bool          // a worker owns this queue
	inCall    bool          // the worker is making a call
	wake      chan struct{} // capacity 1: "there may be work"
}

func (q *queue) push(j job) {
	q.buf[(q.head+q.n)%len(q.buf)] = j
	q.n++
}

func (q *queue) pop() (job, bool) {
	if q.n == 0 {
		return job{}, false
	}
	j := q.buf[q.head]
	q.buf[q.head] = job{} // let the run be collected
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return j, true
}

// enqueueResult says what happened to a job handed to a capsule.
type enqueueResult uint8

const (
	enqueued enqueueResult = iota
	queueFull
	capsuleGone
)

// enqueue appends j to c's queue for principal, starting that queue's worker
// if it has none. It never blocks.
func (d *Dispatcher) enqueue(c *capsule, principal string, j job) enqueueResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return capsuleGone
	}
	q := c.queues[principal]
	if q == nil {
		q = &queue{principal: principal, buf: make([]job, d.opts.QueueDepth), wake: make(chan struct{}, 1)}
		c.queues[principal] = q
	}
	if q.n == len(q.buf) {
		return queueFull
	}
	q.push(j)
	if !q.running {
		q.running = true
		c.workers.Add(1)
		go d.work(c, q)
		return enqueued
	}
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return enqueued
}

// work drains q until it has been idle for the idle timeout or c closes,
// then forgets the queue so an idle principal costs nothing. The idle timer
// is armed once and re-armed only when it fires after a busy period, rather
// than reset on every park, so a worker exits after one to two idle
// timeouts without work.
func (d *Dispatcher) work(c *capsule, q *queue) {
	defer c.workers.Done()
	idle := time.NewTimer(d.opts.IdleTimeout)
	defer idle.Stop()
	busy, expired := false, false
	for {
		c.mu.Lock()
		j, ok := q.pop()
		q.inCall = ok
		if !ok && (expired || c.closed) {
			q.running = false
			if c.queues[q.principal] == q {
				delete(c.queues, q.principal)
			}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if ok {
			busy, expired = true, false
			d.invoke(c, j)
			continue
		}
		select {
		case <-q.wake:
		case <-idle.C:
			if busy {
				busy = false
				idle.Reset(d.opts.IdleTimeout)
			} else {
				expired = true
			}
		case <-c.ctx.Done():
		}
	}
}

// discardQueued empties every queue of a closing capsule, counting what was
// thrown away. The caller holds c.mu.
func (d *Dispatcher) discardQueued(c *capsule) {
	for _, q := range c.queues {
		if q.n > 0 {
			d.stats.discarded.Add(uint64(q.n))
			d.log.Warn("dispatch: discarding queued interceptor calls", slog.String("capsule", c.id), slog.String("principal", q.principal), slog.Int("calls", q.n))
		}
		for q.n > 0 {
			q.pop()
		}
	}
}
