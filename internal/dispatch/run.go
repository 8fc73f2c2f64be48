package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/ipc"
)

// run is one event's trip through its matching interceptors: either a
// fan-out (every link queued at once, answers only counted) or a chain (one
// link at a time, in order, each queued when the previous one continues).
type run struct {
	env     *ipc.Envelope
	links   []*link
	chained bool
	// reply says the event answers work already admitted: a handler
	// published it (Caller.Continues) as a reply (ipc.Envelope.IsReply) —
	// a provider's stream event, a tool's result, the prompt builder's
	// answer. Its calls may use the queues' headroom (limitFor).
	reply bool
	// periodic marks a KernelTick's calls: at most one waits in a queue,
	// and one that finds no room is skipped quietly.
	periodic bool
	// payload is what the next link sees. Only the link currently running
	// writes it, and the queue hand-off to the next link orders that write
	// before the next read.
	payload json.RawMessage
}

// dispatch starts the interceptors for an event the bus has accepted;
// reply says it answers admitted work (run.reply).
func (d *Dispatcher) dispatch(e *ipc.Envelope, links []*link, rn *Runner, reply bool) {
	d.start(&run{env: e, links: links, payload: e.Payload, chained: !samePriority(links), reply: reply}, rn)
}

// start queues r's first link (a chain) or every link (a fan-out).
func (d *Dispatcher) start(r *run, rn *Runner) {
	links := r.links
	if r.chained {
		d.advance(r, 0, rn)
		return
	}
	for i := range links {
		d.send(r, i, rn)
	}
}

// advance queues link i of a chain. A link that cannot be queued ends the
// chain: skipping it could let an event past a guard (fail closed).
func (d *Dispatcher) advance(r *run, i int, rn *Runner) {
	if i >= len(r.links) {
		return
	}
	if !d.send(r, i, rn) {
		d.stats.chainsCut.Add(1)
		d.log.Warn("dispatch: interceptor chain cut short", slog.String("topic", r.env.Topic), slog.String("principal", r.env.Principal), slog.String("at_capsule", r.links[i].capsule.id), slog.Int("links_not_run", len(r.links)-i))
	}
}

// send queues link i on its capsule's queue for the event's principal; rn,
// if not nil, may adopt the queue (see Runner).
func (d *Dispatcher) send(r *run, i int, rn *Runner) bool {
	c := r.links[i].capsule
	switch d.enqueue(c, r.env.Principal, job{run: r, idx: i}, rn, d.limitFor(r)) {
	case enqueued:
		return true
	case tickWaiting:
		d.stats.ticksSkipped.Add(1)
		return true // the tick already queued runs the rest of the chain
	case queueFull:
		if r.periodic {
			d.stats.ticksSkipped.Add(1)
			return true
		}
		d.stats.queueDrops.Add(1)
		d.logDrop(c, r.env)
		l := r.links[i]
		reason := fmt.Sprintf("capsule %s already has %d calls of principal %q waiting (its queue is full)", c.id, d.limitFor(r), r.env.Principal)
		if d.dropped(c, l, r.env, ipc.FailQueueFull, reason) {
			d.stats.dropsAnswered.Add(1)
		}
	case capsuleGone:
		d.stats.orphaned.Add(1)
	}
	return false
}

// dropLogInterval limits queue-full warnings to one per capsule per
// interval, carrying the count, so overload does not also flood the log.
const dropLogInterval = time.Second

func (d *Dispatcher) logDrop(c *capsule, e *ipc.Envelope) {
	now := d.now()
	c.mu.Lock()
	c.drops++
	if since := now - c.lastDrop; since >= 0 && since < int64(dropLogInterval) {
		c.mu.Unlock()
		return
	}
	drops := c.drops
	c.drops, c.lastDrop = 0, now
	c.mu.Unlock()
	d.log.Warn("dispatch: interceptor queue full, call dropped", slog.String("capsule", c.id), slog.String("principal", e.Principal), slog.String("topic", e.Topic), slog.Int("queue_depth", d.opts.QueueDepth), slog.Int("dropped", drops))
}

// invoke makes one interceptor call on the goroutine that owns c's queue (a
// worker or a Runner, rn) and applies the answer. ctx is c's context carrying
// rn.
func (d *Dispatcher) invoke(ctx context.Context, c *capsule, j job, rn *Runner) {
	r, l := j.run, j.run.links[j.idx]
	d.stats.invocations.Add(1)
	inv := Invocation{
		Capsule:   c.id,
		Pattern:   l.pattern,
		Handler:   l.handler,
		Principal: r.env.Principal,
		Envelope:  r.env,
		Payload:   r.payload,
	}
	ctx = withRequest(withScope(ctx, r.env.Scope), r.env)
	if dl := r.env.Deadline(); dl != 0 && time.Now().UnixNano() > dl {
		// Nobody waits for this answer any more: the call is not made.
		d.stats.expired.Add(1)
		d.failRequest(r.env, ipc.FailTimeout, fmt.Sprintf("its deadline passed before capsule %s took it", c.id))
		return
	}
	obs := d.observers.Load()
	var start time.Time
	if obs != nil {
		for _, o := range *obs {
			ctx = o.Invoking(ctx, inv)
		}
		start = clock.Process.Now()
	}
	v, err := intercept(ctx, c.target, inv)
	if obs != nil {
		took := clock.Process.Now().Sub(start)
		for _, o := range *obs {
			o.Invoked(ctx, inv, took, v, err)
		}
	}
	attrs := func(extra ...any) []any {
		return append([]any{slog.String("capsule", c.id), slog.String("handler", l.handler), slog.String("topic", r.env.Topic), slog.String("principal", r.env.Principal)}, extra...)
	}
	proceed := false
	switch {
	case errors.Is(err, ErrNotSupported):
		d.stats.skipped.Add(1)
		proceed = true
	case err != nil:
		d.stats.errors.Add(1)
		d.stats.deny(errorDenyReason)
		level := slog.LevelWarn
		if d.stopping.Load() {
			level = slog.LevelDebug // the kernel is shutting down: calls end
		}
		d.log.Log(ctx, level, "dispatch: interceptor failed; counted as deny", attrs(slog.Any("error", err))...)
		if r.answeredBy(j.idx) {
			d.failRequest(r.env, ipc.FailHandler, fmt.Sprintf("capsule %s failed: %v", c.id, err))
		}
	case v.Action == Continue:
		if r.chained && len(v.Payload) > 0 {
			if !ipc.ValidJSON(v.Payload) {
				d.stats.errors.Add(1)
				d.stats.deny(errorDenyReason)
				d.log.Warn("dispatch: interceptor replaced the payload with invalid JSON; counted as deny", attrs()...)
				break
			}
			r.payload = v.Payload
		}
		d.stats.continued.Add(1)
		proceed = true
	case v.Action == Final:
		d.stats.finals.Add(1)
		d.log.Debug("dispatch: interceptor answered final", attrs()...)
	case v.Action == Deny:
		reason := v.Reason
		if reason == "" {
			reason = "denied by interceptor"
		}
		d.stats.deny(reason)
		d.log.Warn("dispatch: interceptor denied", attrs(slog.String("reason", reason))...)
		if r.answeredBy(j.idx) {
			d.failRequest(r.env, ipc.FailRefused, fmt.Sprintf("capsule %s refused it: %s", c.id, reason))
		}
	default:
		d.stats.errors.Add(1)
		d.stats.deny(errorDenyReason)
		d.log.Warn("dispatch: interceptor answered an unknown action; counted as deny", attrs(slog.Int("action", int(v.Action)))...)
	}
	if proceed && r.chained {
		d.advance(r, j.idx+1, rn)
	}
}

// answeredBy reports whether the request r carries can no longer be
// answered once link i failed or refused it: in a chain nothing after
// the link runs; alone, the link was the only one that could answer. In a
// fan-out the other links may still answer, so one failing is no answer.
func (r *run) answeredBy(i int) bool {
	return r.env.IsRequest() && (r.chained || len(r.links) == 1)
}

// intercept calls t, turning a panic into an error so that a broken capsule
// counts as a Deny instead of taking the worker down.
func intercept(ctx context.Context, t Target, inv Invocation) (v Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("interceptor panicked: %v", p)
		}
	}()
	return t.Intercept(ctx, inv)
}
