package webview

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/ipc"
)

// ObserverID owns the view's bus routes (the turn topics): a kernel-side
// observer like the kernel's cancel listener, not a capsule, so it needs
// no ACL; the bus stats name it.
const ObserverID = "astrid-webview"

// turnTopics are the events a turn is seen by (docs/agent.md), and the
// onboarding question a call of one may wait on.
var turnTopics = []string{ipc.UserPromptTopic, ipc.AgentToolStartedTopic, ipc.AgentToolFinishedTopic, ipc.AgentToolProgressTopic, ipc.AgentCompactedTopic, ipc.AgentResponseTopic, ipc.OnboardingTopic}

// maxQueues bounds the backlog table.
const maxQueues = 50

// KernelSource is a running kernel as the view reads it.
type KernelSource struct {
	Kernel *kernel.Kernel
	// Frontends are the identities frontends act under (the kernel's
	// Options.Frontends): nodes of the graph too, since prompts come
	// from them.
	Frontends []dispatch.CapsuleACL
}

// Capsules lists the loaded capsules in load order, then the frontends.
func (s KernelSource) Capsules() []Node {
	var out []Node
	for _, st := range s.Kernel.Runtime.List() {
		n := Node{ID: st.ID, Kind: "capsule", State: st.State, Builtin: st.Builtin, Engines: st.Engines, Tools: st.Tools, Error: st.Error}
		if c, ok := s.Kernel.Registry.Get(st.ID); ok {
			m := c.Manifest()
			n.Publish = m.PublishPatterns()
			for _, e := range m.Subscribe {
				n.Subscribe = append(n.Subscribe, Subscription{Pattern: e.Pattern, Interceptor: e.Handler != ""})
			}
			n.Grants = m.Capabilities.Granted()
		}
		out = append(out, n)
	}
	for _, f := range s.Frontends {
		n := Node{ID: f.ID, Kind: "frontend", Publish: f.Publish}
		for _, p := range f.Subscribe {
			n.Subscribe = append(n.Subscribe, Subscription{Pattern: p})
		}
		out = append(out, n)
	}
	return out
}

// Counters reads the bus's and dispatcher's counters.
func (s KernelSource) Counters() Counters {
	b := s.Kernel.Bus.Stats()
	d := s.Kernel.Dispatcher.Stats()
	c := Counters{Published: b.Published, Delivered: b.Delivered}
	add := func(where, reason string, n uint64) {
		if n > 0 {
			c.Drops = append(c.Drops, Drop{Where: where, Reason: reason, Count: n})
		}
	}
	add("bus", "no route took it (no subscriber)", b.Unrouted)
	add("bus", "refused: larger than max_message_bytes", b.Rejected)
	add("bus", "evicted: a route over its byte budget", b.Evicted)
	add("bus", "queued when its route closed", b.DroppedOnClose)
	add("bus", "overwritten in an observer ring", b.Lagged)
	add("dispatch", "publish refused by the [publish] ACL", d.PublishDenied)
	add("dispatch", "subscribe refused by the [subscribe] ACL", d.SubscribeDenied)
	add("dispatch", "publish over the rate limit", d.RateLimited)
	add("dispatch", "work refused by the CPU budget", d.NotAdmitted)
	add("dispatch", "publish larger than max_message_bytes", d.TooLarge)
	add("dispatch", "invalid topic, pattern, principal or payload", d.Invalid)
	add("dispatch", "interceptor queue full (queue_depth)", d.QueueDrops)
	add("dispatch", "for a capsule already unloaded", d.Orphaned)
	add("dispatch", "queued when its capsule unloaded", d.Discarded)
	add("dispatch", "interceptor chain cut short", d.ChainsCut)
	add("dispatch", "interceptor failed or panicked", d.Errors)
	for reason, n := range d.DenialsByReason {
		add("interceptor", fmt.Sprintf("denied: %s", reason), n)
	}
	slices.SortStableFunc(c.Drops, func(a, b Drop) int { return cmp.Compare(b.Count, a.Count) })
	for _, r := range b.Routes {
		if r.QueuedMessages > 0 {
			c.Queues = append(c.Queues, Queue{Owner: r.Owner, Pattern: r.Pattern, Messages: r.QueuedMessages, Bytes: r.QueuedBytes})
		}
	}
	slices.SortStableFunc(c.Queues, func(a, b Queue) int { return cmp.Compare(b.Messages, a.Messages) })
	if len(c.Queues) > maxQueues {
		c.Queues = c.Queues[:maxQueues]
	}
	return c
}

// Observe opens a bus observer ring.
func (s KernelSource) Observe() bus.Subscription { return s.Kernel.Bus.Observe() }

// TurnEvents opens one route per turn topic, every principal's.
func (s KernelSource) TurnEvents() ([]bus.Subscription, error) {
	var subs []bus.Subscription
	for _, topic := range turnTopics {
		r, err := s.Kernel.Bus.Subscribe(bus.RouteSpec{Owner: ObserverID, Pattern: topic, Operator: true})
		if err != nil {
			for _, r := range subs {
				r.Close()
			}
			return nil, fmt.Errorf("webview: subscribe %s: %w", topic, err)
		}
		subs = append(subs, r)
	}
	return subs, nil
}
