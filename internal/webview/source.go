package webview

import "github.com/astrid-go/astrid/internal/bus"

// Source is what the view reads of a kernel (KernelSource) or, in tests,
// of a synthetic one.
type Source interface {
	// Capsules lists the graph's nodes: the loaded capsules and the
	// frontends' identities.
	Capsules() []Node
	// Counters reads the bus's and the dispatcher's counters now.
	Counters() Counters
	// Observe opens an observer of every published envelope: one that
	// loses the oldest rather than makes a publisher wait (a bus ring).
	Observe() bus.Subscription
	// TurnEvents subscribes to the events of agent turns: prompts, tool
	// calls started and finished, final responses.
	TurnEvents() ([]bus.Subscription, error)
}

// Node is one capsule (or frontend identity) and its ACL, as the graph and
// the grants table show it.
type Node struct {
	ID string `json:"id"`
	// Kind is "capsule" or "frontend".
	Kind    string   `json:"kind"`
	State   string   `json:"state,omitempty"`
	Builtin bool     `json:"builtin,omitempty"`
	Engines []string `json:"engines,omitempty"`
	Tools   []string `json:"tools,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Publish and Subscribe are the ACL's patterns, in manifest order.
	Publish   []string       `json:"publish"`
	Subscribe []Subscription `json:"subscribe"`
	// Grants are the [capabilities] held, "name = value" each, the
	// high-risk tool_middleware first (manifest.Capabilities.Granted).
	Grants []string `json:"grants"`
}

// Subscription is one [subscribe] pattern.
type Subscription struct {
	Pattern string `json:"pattern"`
	// Interceptor is set for an entry with a handler: it matches topics of
	// exactly its number of segments.
	Interceptor bool `json:"interceptor,omitempty"`
}

// Counters are the kernel's counters the view shows.
type Counters struct {
	Published uint64 `json:"published"`
	Delivered uint64 `json:"delivered"`
	// Drops are the events refused, dropped or cut short, by where and why
	// (zero counts left out).
	Drops []Drop `json:"drops"`
	// Queues are the routes holding undelivered messages, deepest first.
	Queues []Queue `json:"queues"`
}

// Drop is one counter of events that did not arrive.
type Drop struct {
	Where  string `json:"where"`
	Reason string `json:"reason"`
	Count  uint64 `json:"count"`
}

// Queue is one route's backlog.
type Queue struct {
	Owner    string `json:"owner"`
	Pattern  string `json:"pattern"`
	Messages int    `json:"messages"`
	Bytes    int    `json:"bytes"`
}
