package natsbus

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Drop reasons: every envelope the transport did not carry or hand over is
// counted under one of them (Stats.Drops), never lost silently.
const (
	// DropPermission: the broker refused a publish or subscription of one
	// of this host's connections (a permissions violation). Dispatch checks
	// the same grants first, so on an honest host it means the two
	// disagree, or that something forged a publish.
	DropPermission = "permission_violation"
	// DropSlowConsumer: the host's receive queue was full, or the server
	// reported this host's connection as too slow.
	DropSlowConsumer = "slow_consumer"
	// DropPublish: the client library refused a publish (connection
	// closed, payload over the server's limit).
	DropPublish = "publish_failed"
	// DropEncode: the envelope could not be encoded.
	DropEncode = "encode_failed"
	// DropNotAttached: a publish from a capsule with no connection.
	DropNotAttached = "not_attached"
	// DropDecode: a received message was not an envelope on a subject
	// this transport makes.
	DropDecode = "decode_failed"
	// DropDeliver: the local bus refused a received envelope (too large,
	// closed, invalid principal).
	DropDeliver = "deliver_failed"
)

// Stats is a snapshot of the transport's counters.
type Stats struct {
	// Forwarded counts envelopes published to NATS.
	Forwarded uint64
	// Received counts envelopes from other hosts handed to the local bus.
	Received uint64
	// Intercepted counts envelopes from other hosts NATS handed to this
	// host in a capsule's queue group, whose interceptor ran here.
	Intercepted uint64
	// Echoes counts this host's own envelopes coming back, skipped.
	Echoes uint64
	// Drops counts lost envelopes and refused operations by reason.
	Drops map[string]uint64
	// Capsules is the number of capsules with a connection.
	Capsules int
	// CredsRenewed counts credentials files taken up after the operator
	// replaced them; CredsExpired the connections the broker dropped
	// because their credentials expired (creds_renew.go).
	CredsRenewed, CredsExpired uint64
	// Node counts the embedded node's route joins and refusals, refused
	// clients and permissions violations; nil when this host connects to
	// an external cluster.
	Node *NodeStats `json:",omitempty"`
}

type counters struct {
	forwarded, received, echoes atomic.Uint64
	intercepted                 atomic.Uint64
	credsRenewed, credsExpired  atomic.Uint64
	mu                          sync.Mutex
	drops                       map[string]uint64
}

// drop counts one loss under reason and reports whether the reason's count
// just reached a power of two, when it is worth a log line: a flood leaves a
// handful of lines, Stats the exact count.
func (c *counters) drop(reason string, n uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drops == nil {
		c.drops = make(map[string]uint64)
	}
	before := c.drops[reason]
	c.drops[reason] = before + n
	return bits.Len64(before) != bits.Len64(before+n)
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{
		Forwarded:    c.forwarded.Load(),
		Received:     c.received.Load(),
		Intercepted:  c.intercepted.Load(),
		Echoes:       c.echoes.Load(),
		CredsRenewed: c.credsRenewed.Load(),
		CredsExpired: c.credsExpired.Load(),
		Drops:        make(map[string]uint64, len(c.drops)),
	}
	for k, v := range c.drops {
		s.Drops[k] = v
	}
	return s
}
