package dispatch

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
)

// Stats is a snapshot of the dispatcher's counters. Every event the
// dispatcher refuses, drops or cuts short is counted here (DESIGN §2.3).
type Stats struct {
	Published       uint64 // envelopes the bus admitted (read from the bus's count)
	PublishDenied   uint64 // publishes refused by the [publish] ACL
	SubscribeDenied uint64 // subscriptions refused by the [subscribe] ACL
	RateLimited     uint64 // publishes refused by the token bucket
	NotAdmitted     uint64 // publishes starting work refused by Options.Admit (CPU budget)
	TooLarge        uint64 // publishes the bus refused as over its size cap
	Invalid         uint64 // bad topic, pattern, principal or payload JSON

	Invocations uint64 // interceptor calls made
	Continued   uint64
	Finals      uint64
	Denials     uint64 // Deny answers, errors included
	// DenialsByReason counts Deny by reason; an error counts as "error".
	// Distinct reasons are capped (maxDenyReasons); the rest count as
	// "(other)", so a capsule cannot grow this map without bound.
	DenialsByReason map[string]uint64
	Errors          uint64 // interceptor calls that failed or panicked
	Skipped         uint64 // calls a capsule did not support (ErrNotSupported)

	QueueDrops uint64 // invocations dropped because the target's queue was full
	// DropsAnswered counts the QueueDrops whose caller was told at once
	// (the kernel answered the request, or told the requester its reply
	// was lost: request.go).
	DropsAnswered uint64
	// RequestsFailed counts requests the kernel answered with a failure
	// (request.go): dropped, refused, failed, unanswered or untaken.
	RequestsFailed uint64
	// RepliesUnaddressed counts replies no request of this host waited
	// for (late, or to another host's request): delivered to no capsule
	// here, since only a request's askers may read its replies.
	RepliesUnaddressed uint64
	// Expired counts interceptor calls not made because the request they
	// served was past its deadline.
	Expired   uint64
	Orphaned  uint64 // invocations for a capsule already unregistered
	Discarded uint64 // queued invocations discarded by Unregister or Close
	ChainsCut uint64 // chains ended early because a link could not be queued
	// TicksSkipped counts a KernelTick's calls not queued: one of its kind
	// was still waiting in that queue, or the queue was full.
	TicksSkipped uint64
	// Remote counts envelopes from other hosts delivered here
	// (DeliverRemote); they are not in Published, which counts this
	// host's own.
	Remote uint64
}

const (
	maxDenyReasons   = 64
	maxReasonBytes   = 120
	otherDenyReasons = "(other)"
	errorDenyReason  = "error"
)

type counters struct {
	publishDenied, subscribeDenied, rateLimited, tooLarge, invalid atomic.Uint64
	notAdmitted                                                    atomic.Uint64
	invocations, continued, finals, denials, errors, skipped       atomic.Uint64
	queueDrops, dropsAnswered, orphaned, discarded, chainsCut      atomic.Uint64
	ticksSkipped                                                   atomic.Uint64
	remote, requestsFailed, expired, repliesUnaddressed            atomic.Uint64

	reasonsMu sync.Mutex
	reasons   map[string]uint64
}

func (c *counters) deny(reason string) {
	c.denials.Add(1)
	if len(reason) > maxReasonBytes {
		reason = strings.ToValidUTF8(reason[:maxReasonBytes], "")
	}
	c.reasonsMu.Lock()
	defer c.reasonsMu.Unlock()
	if c.reasons == nil {
		c.reasons = make(map[string]uint64)
	}
	if _, seen := c.reasons[reason]; !seen && len(c.reasons) >= maxDenyReasons {
		reason = otherDenyReasons
	}
	c.reasons[reason]++
}

func (c *counters) snapshot() Stats {
	c.reasonsMu.Lock()
	reasons := maps.Clone(c.reasons)
	c.reasonsMu.Unlock()
	return Stats{
		PublishDenied:      c.publishDenied.Load(),
		SubscribeDenied:    c.subscribeDenied.Load(),
		RateLimited:        c.rateLimited.Load(),
		NotAdmitted:        c.notAdmitted.Load(),
		TooLarge:           c.tooLarge.Load(),
		Invalid:            c.invalid.Load(),
		Invocations:        c.invocations.Load(),
		Continued:          c.continued.Load(),
		Finals:             c.finals.Load(),
		Denials:            c.denials.Load(),
		DenialsByReason:    reasons,
		Errors:             c.errors.Load(),
		Skipped:            c.skipped.Load(),
		QueueDrops:         c.queueDrops.Load(),
		DropsAnswered:      c.dropsAnswered.Load(),
		Orphaned:           c.orphaned.Load(),
		Discarded:          c.discarded.Load(),
		ChainsCut:          c.chainsCut.Load(),
		TicksSkipped:       c.ticksSkipped.Load(),
		Remote:             c.remote.Load(),
		RequestsFailed:     c.requestsFailed.Load(),
		RepliesUnaddressed: c.repliesUnaddressed.Load(),
		Expired:            c.expired.Load(),
	}
}

// Queued reports how many interceptor calls wait in capsule id's queues,
// over all principals (0 for an unknown capsule): a gauge for status
// displays and for tests that need a call to be queued before they act.
func (d *Dispatcher) Queued(id string) int {
	c := (*d.capsules.Load())[id]
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.queues {
		n += q.n
	}
	return n
}
