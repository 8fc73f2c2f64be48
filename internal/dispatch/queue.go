package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Defaults for the interceptor queues.
const (
	// DefaultQueueDepth is the capacity of one (capsule, principal) queue.
	DefaultQueueDepth = 64
	// DefaultIdleTimeout is how long (at least, and at most twice) a queue
	// worker waits for work before exiting. Short, so that thousands of principals seen once do not pin
	// a goroutine each; long enough that a busy queue keeps its worker.
	DefaultIdleTimeout = time.Second
	// ReplyHeadroom is how many times the queue depth a (capsule,
	// principal) queue may hold of calls that answer admitted work
	// (run.reply); anything else is held to the depth.
	ReplyHeadroom = 16
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
	buf       []job // ring, grown on demand up to the queue depth
	head, n   int
	running   bool          // a worker or a Runner owns this queue
	tick      bool          // holds a periodic call not yet taken (run.periodic)
	inCall    bool          // its owner is making a call
	wake      chan struct{} // capacity 1: "there may be work"; made by the first worker
}

// push appends j; the caller has checked that q holds fewer than limit jobs.
// The ring starts small because most queues never hold more than one call.
func (q *queue) push(j job, limit int) {
	if q.n == len(q.buf) {
		grown := make([]job, min(max(2*len(q.buf), 2), limit))
		for i := range q.n {
			grown[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = grown, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = j
	q.n++
}

func (q *queue) pop() (job, bool) {
	if q.n == 0 {
		return job{}, false
	}
	j := q.buf[q.head]
	if j.run != nil && j.run.periodic {
		q.tick = false
	}
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
	tickWaiting // a periodic call found one of its kind not yet taken
)

// enqueue appends j to c's queue for principal unless the queue holds limit
// jobs (limitFor; one depth more for a notice). A queue without a worker
// is given to rn when rn adopts it (see Runner), else to a new worker. It
// never blocks.
func (d *Dispatcher) enqueue(c *capsule, principal string, j job, rn *Runner, limit int) enqueueResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return capsuleGone
	}
	q := c.queues[principal]
	if q == nil {
		q = &queue{principal: principal}
		c.queues[principal] = q
	}
	if q.n >= limit {
		return queueFull
	}
	if j.run != nil && j.run.periodic {
		if q.tick {
			return tickWaiting
		}
		q.tick = true
	}
	q.push(j, limit)
	if !q.running {
		q.running = true
		c.workers.Add(1)
		if rn == nil || !rn.adopt(c, q) {
			go d.work(c, q)
		}
		return enqueued
	}
	if q.wake == nil {
		return enqueued // a Runner owns q; it passes q on if work is left
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
//
// The worker is a Runner while it makes a call: a call its handler's publish
// causes on an idle queue is made next, here, unless this queue already has
// more work waiting, in which case it goes to a worker of its own.
func (d *Dispatcher) work(c *capsule, q *queue) {
	defer c.workers.Done()
	c.mu.Lock()
	if q.wake == nil {
		q.wake = make(chan struct{}, 1)
	}
	c.mu.Unlock()
	idle := time.NewTimer(d.opts.IdleTimeout)
	defer idle.Stop()
	rn := d.NewRunner()
	ctx := withRunner(c.ctx, rn)
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
			rn.Open()
			d.invoke(ctx, c, j, rn)
			c.mu.Lock()
			// The call's publish handed this goroutine another
			// capsule's call to relay (Runner): that call, or one it
			// relays on, may run long (a tool running a program, a
			// guest in a loop), so the worker gives up its own queue
			// first: what arrives for it meanwhile (a cancel, say)
			// gets a worker, or a Runner, of its own instead of
			// waiting behind the relay. The relay may well come back
			// to this queue; it adopts it then, on this goroutine.
			relay := q.n == 0 && rn.adopted.Load()
			if relay {
				q.running, q.inCall = false, false
				if c.queues[q.principal] == q {
					delete(c.queues, q.principal)
				}
			}
			c.mu.Unlock()
			if relay {
				rn.Run()
				rn.Close()
				return
			}
			rn.Close()
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
// thrown away, and returns the calls an unload cut off (none when the
// whole kernel is stopping: nobody is left to hear an answer). The caller
// holds c.mu.
func (d *Dispatcher) discardQueued(c *capsule) []job {
	var cut []job
	stopping := d.stopping.Load()
	for _, q := range c.queues {
		if q.n > 0 {
			d.stats.discarded.Add(uint64(q.n))
			level := slog.LevelWarn
			if stopping {
				level = slog.LevelDebug
			}
			d.log.Log(context.Background(), level, "dispatch: discarding queued interceptor calls", slog.String("capsule", c.id), slog.String("principal", q.principal), slog.Int("calls", q.n))
		}
		for q.n > 0 {
			j, _ := q.pop()
			if !stopping {
				cut = append(cut, j)
			}
		}
	}
	return cut
}

// answerDiscarded tells the callers of calls an unload discarded that they
// will not run (request.go), as it tells those of calls dropped at a
// full queue. It runs without c.mu: an answer is a publish.
func (d *Dispatcher) answerDiscarded(c *capsule, cut []job) {
	for _, j := range cut {
		l := j.run.links[j.idx]
		reason := fmt.Sprintf("capsule %s was unloaded before it took the call", c.id)
		if d.dropped(c, l, j.run.env, ipc.FailUnloaded, reason) {
			d.stats.dropsAnswered.Add(1)
		}
	}
}

// limitFor is how many calls a queue may hold when r's next call joins it:
// the depth for work that starts (a prompt, a request a handler forwards,
// a kernel event), ReplyHeadroom times it for an answer to work already
// admitted (from this host or another).
// A burst of one principal's turns is then refused at its prompts, all at
// once and answered, rather than losing the stream events and answers of
// the turns it already took, which would leave them to their timeouts. The
// headroom still bounds a queue: a handler flooding another capsule cannot
// grow it past that.
func (d *Dispatcher) limitFor(r *run) int {
	if r.reply {
		return ReplyHeadroom * d.opts.QueueDepth
	}
	return d.opts.QueueDepth
}
