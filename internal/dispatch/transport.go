package dispatch

import (
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/ipc"
)

// Transport carries envelopes between hosts (internal/bus/natsbus, DESIGN
// §9). The dispatcher attaches every capsule it registers, with the keys of
// its ACL, so that the broker can hold the capsule's connection to the same
// grants; forwards every capsule publish it admitted; and receives other
// hosts' envelopes through DeliverRemote. The kernel's own events stay on
// their host.
type Transport interface {
	// Attach opens capsule id's presence on the bus, with the keys of its
	// ACL and the patterns it intercepts; an error (a key the transport
	// cannot carry) refuses the registration. Attaching an id again
	// replaces it (a reload).
	Attach(id string, publish, subscribe, intercepts []string) error
	// Detach ends capsule id's presence.
	Detach(id string)
	// Forward sends an envelope the local bus admitted and stamped to the
	// other hosts. It must not block, and must not modify e.
	Forward(e *ipc.Envelope)
}

// RemoteProviders is implemented by a transport that knows the capsules
// other hosts run: ExactInterceptors adds theirs, so that a tool's provider
// on another host is found (DESIGN §4c: a provider is an exact interceptor
// of the tool's topic).
type RemoteProviders interface {
	// ExactInterceptors is the ids of the capsules on other hosts with an
	// interceptor whose pattern is topic itself, sorted.
	ExactInterceptors(topic string) []string
}

// withRemoteProviders adds to ids the other hosts' exact interceptors of
// topic that are not among them, after them (their priorities are not
// known here), by id.
func (d *Dispatcher) withRemoteProviders(topic string, ids []string) []string {
	rp, ok := d.opts.Transport.(RemoteProviders)
	if !ok {
		return ids
	}
	for _, id := range rp.ExactInterceptors(topic) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// attach gives a capsule its presence on the transport, if there is one.
func (d *Dispatcher) attach(a CapsuleACL) error {
	if d.opts.Transport == nil {
		return nil
	}
	intercepts := make([]string, len(a.Interceptors))
	for i, ic := range a.Interceptors {
		intercepts[i] = ic.Pattern
	}
	if err := d.opts.Transport.Attach(a.ID, a.Publish, a.Subscribe, intercepts); err != nil {
		return fmt.Errorf("%w: %w", ErrRegistration, err)
	}
	return nil
}

func (d *Dispatcher) detach(id string) {
	if d.opts.Transport != nil {
		d.opts.Transport.Detach(id)
	}
}

// DeliverRemote hands over an envelope published on another host, as a
// transport received it: it is delivered to this host's matching routes
// and runs this host's interceptors, exactly as a local publish would past
// its checks. The publisher's ACL and rate limit were applied on its own
// host (and the ACL again by the broker), so neither is applied here; the
// envelope keeps the seq and timestamp its host stamped. Interceptor chains
// are per host: an answer here never reaches the publishing host's chain.
// What makes no sense as a local event is refused: the kernel's id as
// source, an invalid topic or principal.
//
// runs, when not nil, says which of this host's capsules run their
// interceptors for e: a capsule loaded on several hosts intercepts each
// envelope on one of them (the transport decides which); the chain here is
// made of the links of the capsules it admits, in the usual order. Route
// subscribers receive e whatever runs says.
func (d *Dispatcher) DeliverRemote(e *ipc.Envelope, runs func(capsule string) bool) error {
	return d.remote(e, runs, true)
}

// InterceptRemote runs, for an envelope published on another host, the
// interceptors of this host's capsules runs admits, and delivers it to no
// route: a transport that hands each envelope to one of the hosts serving
// a capsule (a NATS queue group per capsule) delivers the routes' copy
// through DeliverRemote apart, on every host.
func (d *Dispatcher) InterceptRemote(e *ipc.Envelope, runs func(capsule string) bool) error {
	return d.remote(e, runs, false)
}

func (d *Dispatcher) remote(e *ipc.Envelope, runs func(capsule string) bool, routes bool) error {
	if d.closed.Load() {
		return fmt.Errorf("dispatch: remote envelope on %s: %w", e.Topic, ErrClosed)
	}
	if e.SourceID == ipc.KernelSourceID {
		d.stats.invalid.Add(1)
		return fmt.Errorf("dispatch: remote envelope on %s claims the kernel's id: %w", e.Topic, ErrInvalidSource)
	}
	if err := ipc.ValidateTopic(e.Topic); err != nil {
		d.stats.invalid.Add(1)
		return fmt.Errorf("dispatch: remote envelope from %s: %w", e.SourceID, err)
	}
	if err := ValidatePrincipal(e.Principal); err != nil {
		d.stats.invalid.Add(1)
		return fmt.Errorf("dispatch: remote envelope on %s from %s: %w", e.Topic, e.SourceID, err)
	}
	// Counted before the routes have it, so that a subscriber that got it
	// reads a count that includes it (TestPublishingHostKeepsItsOwnCapsule
	// failed 1 in ~30 under load); a failure to deliver is the
	// transport's drop.
	reply := e.IsReply()
	var askers []string
	if reply {
		// An answer from another host ends the wait of the request this
		// host sent, and reaches only the capsules that sent it
		// (deliverReply).
		askers = d.answered(e)
		if readers := d.replyReaders.Load(); readers != nil && len(*readers) > 0 {
			askers = append(slices.Clip(askers), *readers...)
		}
	}
	if routes {
		d.stats.remote.Add(1)
		var err error
		if reply {
			_, err = d.bus.DeliverTo(e, askers)
		} else {
			_, err = d.bus.Deliver(e)
		}
		if err != nil {
			return fmt.Errorf("dispatch: remote envelope on %s from %s: %w", e.Topic, e.SourceID, err)
		}
	}
	links := d.interceptors.Load().match(e.Topic)
	if reply {
		links = addressed(links, askers)
	}
	if runs != nil && len(links) > 0 {
		links = admitted(links, runs)
	}
	if len(links) > 0 {
		// An answer from another host (a tool's result, a model's stream)
		// gets the headroom answers get here: whether a handler published
		// it is not carried, and the broker held its publisher to its
		// grants.
		d.dispatch(e, links, nil, reply)
	}
	return nil
}

// admitted is the links whose capsule runs admits, in order; links itself
// (shared by every publish of its topic) when it admits them all.
func admitted(links []*link, runs func(capsule string) bool) []*link {
	for i, l := range links {
		if runs(l.capsule.id) {
			continue
		}
		out := append(make([]*link, 0, len(links)-1), links[:i]...)
		for _, l := range links[i+1:] {
			if runs(l.capsule.id) {
				out = append(out, l)
			}
		}
		return out
	}
	return links
}
