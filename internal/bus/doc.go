// Package bus owns in-memory delivery of IPC envelopes on one host: the route
// table, one route per subscription, per-principal FIFO queues inside a route,
// byte budgets with eviction from the heaviest principal, deficit-round-robin
// receiving, the kernel's all-topics observer rings, and the counters that
// account for every envelope it did not deliver.
//
// It must not decide who may publish or subscribe (no ACL), run interceptors,
// rate-limit, or stamp identity (source_id, principal): internal/dispatch and
// the host layer do that before an envelope reaches the bus. The bus stamps
// only Seq and Timestamp. It trusts its caller to have validated topics and
// patterns (Subscribe re-validates patterns, Publish does not re-validate
// topics, to keep the hot path short).
//
// # Layers
//
// Publish is split into two steps so that a transport can sit between them:
//
//   - admission and stamping (Publish): size cap, global Seq, Timestamp;
//   - local fan-out (Deliver): match the envelope against this host's route
//     table and enqueue it on every matching route and observer ring.
//
// The planned internal/bus/natsbus carries stamped envelopes between hosts:
// it forwards what Publish admitted to NATS and hands envelopes arriving from
// other hosts to Deliver, which never re-stamps them. Routing, byte budgets and
// fairness therefore stay host-local, above any transport, and nothing in this
// package knows about NATS.
//
// # Concurrency
//
// Publish takes no bus-wide lock: the route table is copy-on-write behind an
// atomic pointer, and each matching route is locked only for its own enqueue.
// Seq is one atomic counter; envelopes from concurrent publishers may reach a
// route in an order that differs from their Seq, while each publisher's own
// envelopes keep their order. Publish never blocks on a receiver. A route's
// RouteSpec.Accept, the subscriber's own filter (an uplink client's match),
// runs on the publisher's goroutine before the route's lock is taken, so
// that what it refuses is never queued and never wakes the receiver; it must
// not block.
//
// A Route is meant to be read by one goroutine. Receivers take messages in
// small batches under one lock acquisition; concurrent receivers are safe but
// not load-balanced.
package bus
