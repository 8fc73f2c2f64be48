package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// Publish sends payload on topic, as its kind says: Event when none is
// given, else the one given (RequestOf, ReplyOf, FailureOf, KernelEvent).
// It is the one way anything is published. A capsule's publish goes, in
// this order, through topic and principal validity, the [publish] ACL,
// admission (Options.Admit), the (capsule, principal) rate limit (charged
// only once the ACL has passed), payload JSON validity, delivery to every
// matching bus route, then the interceptors. It never blocks: an
// interceptor whose queue is full is dropped and counted.
//
// The envelope's source_id is from.Capsule and its principal
// from.Principal; the bus stamps seq and timestamp.
func (d *Dispatcher) Publish(from Caller, topic string, payload json.RawMessage, kind ...Kind) (Result, error) {
	// Small enough to be inlined (BENCHMARKS.md, dispatch).
	return d.publish(from, &ipc.Envelope{Topic: topic, Payload: payload}, kind)
}

// publish publishes e, whose Topic and Payload are set, as kind says.
func (d *Dispatcher) publish(from Caller, e *ipc.Envelope, kind []Kind) (Result, error) {
	var k Kind
	switch len(kind) {
	case 0:
	case 1:
		k = kind[0]
	default:
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %d kinds given, at most one", e.Topic, from.Capsule, len(kind))
	}
	switch k.of {
	case kindEvent:
		return d.publishChecked(from, e, false)
	case kindRequest:
		return d.publishRequest(from, e, Request{ReplyTo: k.replyTo, CorrelationID: k.correlation, Timeout: k.timeout})
	case kindReply:
		return d.publishReply(from, e, k.correlation)
	case kindFailure:
		if k.correlation != "" {
			e.SetReply(k.correlation)
		}
		return d.publishChecked(from, e, true)
	case kindKernel:
		return d.publishKernel(from.Principal, from.Trace, e, k.periodic)
	}
	return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: unknown kind %d", e.Topic, from.Capsule, k.of)
}

// publishChecked checks and delivers a capsule's e, whose Topic and
// Payload (and request or reply fields) the caller set; the rest is
// stamped here. owed marks a failure reply, which the rate limit never
// refuses.
func (d *Dispatcher) publishChecked(from Caller, e *ipc.Envelope, owed bool) (Result, error) {
	topic, payload := e.Topic, e.Payload
	lookup := d.lookup
	if owed {
		lookup = d.lookupOwed
	}
	c, err := lookup(from.Capsule)
	if err != nil {
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %w", topic, from.Capsule, err)
	}
	// A topic this capsule published lately was valid and allowed then, and
	// its ACL has not changed since (a capsule's ACL is fixed while it is
	// registered): the check is a string comparison.
	known := c.published.find(topic)
	if known == nil {
		if err := ipc.ValidateTopic(topic); err != nil {
			d.stats.invalid.Add(1)
			return Result{}, fmt.Errorf("dispatch: publish from capsule %s: %w", c.id, err)
		}
		if !c.publish.allows(topic) {
			d.stats.publishDenied.Add(1)
			err := c.publish.deny("publish", topic, c.id)
			d.policy.refused(c.id, from.Principal, "publish", topic, err)
			d.log.Warn("dispatch: publish refused", slog.String("capsule", c.id), slog.String("topic", topic), slog.String("principal", from.Principal), slog.Any("error", err))
			return Result{}, err
		}
	}
	if err := ValidatePrincipal(from.Principal); err != nil {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %w", topic, c.id, err)
	}
	if !owed && !from.Continues && d.opts.Admit != nil {
		if err := d.opts.Admit(from.Principal); err != nil {
			d.stats.notAdmitted.Add(1)
			d.policy.quotaRefused(c.id, from.Principal, topic, err, time.Now())
			return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s for principal %s: %w: %w", topic, c.id, from.Principal, ErrNotAdmitted, err)
		}
	}
	e.SourceID, e.Principal, e.Scope = c.id, from.Principal, from.Scope
	if from.Trace.Valid() {
		e.SetTrace(from.Trace)
	}
	size := int64(e.Size())
	if size > d.opts.RateBurst {
		d.stats.tooLarge.Add(1)
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %w: %d bytes exceed the rate burst of %d", topic, c.id, bus.ErrTooLarge, size, d.opts.RateBurst)
	}
	now := d.now()
	if owed {
		c.limiter.borrow(from.Principal, size, now)
	} else if !c.limiter.take(from.Principal, size, now) {
		d.stats.rateLimited.Add(1)
		d.log.Debug("dispatch: publish rate limited", slog.String("capsule", c.id), slog.String("principal", from.Principal), slog.String("topic", topic))
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s for principal %q: %w (%d bytes/s, burst %d)", topic, c.id, from.Principal, ErrRateLimited, d.opts.RateBytesPerSec, d.opts.RateBurst)
	}
	// Checked after the charge, so that validating a large payload is paid
	// for out of the publisher's quota.
	if !ipc.ValidJSON(payload) {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %w", topic, c.id, ErrInvalidPayload)
	}
	if !d.stampsShared {
		now = 0
	}
	res, err := d.deliver(c, known, e, from.Runner, now, from.Continues || owed)
	if err != nil {
		c.limiter.refund(from.Principal, size)
		return Result{}, fmt.Errorf("dispatch: publish %s from capsule %s: %w", topic, c.id, err)
	}
	return res, nil
}

// publishKernel sends one of the kernel's own events (KernelEvent).
func (d *Dispatcher) publishKernel(principal string, trace ipc.TraceContext, e *ipc.Envelope, periodic bool) (Result, error) {
	topic, payload := e.Topic, e.Payload
	if principal != "" {
		if err := ValidatePrincipal(principal); err != nil {
			return Result{}, fmt.Errorf("dispatch: kernel publish %s: %w", topic, err)
		}
	}
	if d.closed.Load() {
		return Result{}, fmt.Errorf("dispatch: kernel publish %s: %w", topic, ErrClosed)
	}
	if err := ipc.ValidateTopic(topic); err != nil {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: kernel publish: %w", err)
	}
	if !ipc.ValidJSON(payload) {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: kernel publish %s: %w", topic, ErrInvalidPayload)
	}
	e.SourceID, e.Principal = ipc.KernelSourceID, principal
	if trace.Valid() {
		e.SetTrace(trace)
	}
	deliver := d.deliver
	if periodic {
		deliver = d.deliverTick
	}
	res, err := deliver(nil, nil, e, nil, 0, false)
	if err != nil {
		return Result{}, fmt.Errorf("dispatch: kernel publish %s: %w", topic, err)
	}
	return res, nil
}

// deliverTick is deliver for a KernelTick: the kernel's own event (no
// capsule, nothing remembered, nothing forwarded), its interceptor calls
// marked periodic (run.periodic).
func (d *Dispatcher) deliverTick(_ *capsule, _ *knownTopic, e *ipc.Envelope, _ *Runner, _ int64, _ bool) (Result, error) {
	links := d.interceptors.Load().match(e.Topic)
	d.observePublishing(e)
	routes, err := d.bus.PublishResolved(e, d.bus.Now(), d.bus.Resolve(e.Topic))
	if err != nil {
		return Result{}, err
	}
	if len(links) > 0 {
		d.start(&run{env: e, links: links, payload: e.Payload, chained: !samePriority(links), periodic: true}, nil)
	}
	return Result{Routes: routes, Interceptors: len(links)}, nil
}

// deliver hands e to the bus, stamped with now (a reading of the bus's
// clock, or zero for the bus to read it), then to the interceptors its topic
// matches; rn, if not nil, may adopt one of their queues. known is the
// publishing capsule's remembered resolution of the topic (nil if none);
// when it is missing or the bus's routes or the interceptors have changed
// since, the topic is resolved again and, for a capsule (c not nil),
// remembered. continues says a handler made the publish: for a reply, its
// interceptor calls get the queues' headroom (run.reply).
func (d *Dispatcher) deliver(c *capsule, known *knownTopic, e *ipc.Envelope, rn *Runner, now int64, continues bool) (Result, error) {
	if e.IsReply() {
		return d.deliverReply(c, e, nil, rn, now, continues)
	}
	interceptors := d.interceptors.Load()
	if known == nil || known.interceptors != interceptors || !d.bus.Current(known.routes) {
		known = &knownTopic{topic: e.Topic, routes: d.bus.Resolve(e.Topic), interceptors: interceptors, links: interceptors.match(e.Topic)}
		if c != nil {
			c.published.remember(known)
		}
	}
	if now == 0 {
		now = d.bus.Now()
	}
	d.observePublishing(e)
	routes, err := d.bus.PublishResolved(e, now, known.routes)
	if err != nil {
		if errors.Is(err, bus.ErrTooLarge) {
			d.stats.tooLarge.Add(1)
		}
		return Result{}, err
	}
	if c != nil && d.opts.Transport != nil {
		d.opts.Transport.Forward(e)
	}
	if len(known.links) > 0 {
		d.dispatch(e, known.links, rn, false)
	}
	return Result{Routes: routes, Interceptors: len(known.links)}, nil
}

// deliverReply delivers the reply e to askers alone, the capsules whose
// request it answers (answered): their routes and their interceptors of
// its topic. A reply can carry a person's data (a file a tool read), so a
// capsule that merely subscribes to the reply address — the consolidated
// tool.v1.execute.result, say — reads only the answers to its own
// requests (DESIGN §4c). A reply no request of this host waits for reaches
// no capsule here; a transport still forwards it to the host that asked.
//
// askers is nil for a handler's reply: the request it answers is looked
// up, and ends its wait only once the reply is on the bus (a reply refused
// as too large leaves the request to its failure answer). The kernel's
// own failure answer passes the askers it took.
func (d *Dispatcher) deliverReply(c *capsule, e *ipc.Envelope, askers []string, rn *Runner, now int64, continues bool) (Result, error) {
	if now == 0 {
		now = d.bus.Now()
	}
	d.observePublishing(e)
	lookup := askers == nil
	if lookup {
		askers = d.requests.peek(keyOfReply(e))
	}
	if readers := d.replyReaders.Load(); readers != nil && len(*readers) > 0 {
		askers = append(slices.Clip(askers), *readers...)
	}
	routes, err := d.bus.PublishTo(e, now, askers)
	if err != nil {
		if errors.Is(err, bus.ErrTooLarge) {
			d.stats.tooLarge.Add(1)
		}
		return Result{}, err
	}
	if lookup {
		d.answered(e)
	}
	if c != nil && d.opts.Transport != nil {
		d.opts.Transport.Forward(e)
	}
	links := addressed(d.interceptors.Load().match(e.Topic), askers)
	if len(links) > 0 {
		d.dispatch(e, links, rn, continues)
	}
	return Result{Routes: routes, Interceptors: len(links)}, nil
}

// addressed is the links of askers' capsules, in order; links itself
// (shared by every publish of its topic) when they all are.
func addressed(links []*link, askers []string) []*link {
	for i, l := range links {
		if slices.Contains(askers, l.capsule.id) {
			continue
		}
		out := append(make([]*link, 0, len(links)-1), links[:i]...)
		for _, l := range links[i+1:] {
			if slices.Contains(askers, l.capsule.id) {
				out = append(out, l)
			}
		}
		return out
	}
	return links
}

// Subscribe opens a bus route for a capsule after the [subscribe] ACL check,
// in which the requested pattern is taken as a topic, so a wildcard is only
// granted by a key that has a wildcard in the same place. A scoped route
// receives only from.Principal's events (a subscription made inside a
// handler). The route is closed when the capsule is unregistered.
func (d *Dispatcher) Subscribe(from Caller, pattern string, scoped bool) (*bus.Route, error) {
	return d.SubscribeAccepting(from, pattern, scoped, nil)
}

// SubscribeAccepting is Subscribe with a route that admits only the
// envelopes accept returns true for (bus.RouteSpec.Accept; nil: all),
// checked as they are published, so that the others never reach its queue.
func (d *Dispatcher) SubscribeAccepting(from Caller, pattern string, scoped bool, accept func(*ipc.Envelope) bool) (*bus.Route, error) {
	c, err := d.lookup(from.Capsule)
	if err != nil {
		return nil, fmt.Errorf("dispatch: subscribe %s from capsule %s: %w", pattern, from.Capsule, err)
	}
	if err := ipc.ValidatePattern(pattern); err != nil {
		d.stats.invalid.Add(1)
		return nil, fmt.Errorf("dispatch: subscribe from capsule %s: %w", c.id, err)
	}
	if err := ValidatePrincipal(from.Principal); err != nil {
		d.stats.invalid.Add(1)
		return nil, fmt.Errorf("dispatch: subscribe %s from capsule %s: %w", pattern, c.id, err)
	}
	if !c.subscribe.allows(pattern) {
		d.stats.subscribeDenied.Add(1)
		err := c.subscribe.deny("subscribe", pattern, c.id)
		d.policy.refused(c.id, from.Principal, "subscribe", pattern, err)
		d.log.Warn("dispatch: subscribe refused", slog.String("capsule", c.id), slog.String("pattern", pattern), slog.Any("error", err))
		return nil, err
	}
	r, err := d.bus.Subscribe(bus.RouteSpec{Owner: c.id, Pattern: pattern, Principal: from.Principal, Scoped: scoped, Accept: accept})
	if err != nil {
		return nil, fmt.Errorf("dispatch: subscribe %s from capsule %s: %w", pattern, c.id, err)
	}
	if !d.track(c, r) {
		r.Close()
		return nil, fmt.Errorf("dispatch: subscribe %s from capsule %s: %w: unregistered meanwhile", pattern, c.id, ErrUnknownCapsule)
	}
	return r, nil
}
