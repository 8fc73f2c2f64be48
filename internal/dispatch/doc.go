// Package dispatch owns the one publish/subscribe entry every capsule's IPC
// goes through (DESIGN §4b): one Publish, whose Kind (an event, a request, a
// reply, a failure reply, a kernel event) decides the checks it passes.
//
// It makes the ACL check — the only place in the runtime where a capsule's
// [publish] and [subscribe] keys are enforced — charges the per-(capsule,
// principal) token-bucket rate limit, hands admitted envelopes to the bus, and
// runs interceptors: matching by the equal-depth matcher, fan-out when every
// match shares one priority, otherwise one chain ordered by (priority, capsule
// id), each invocation passing through the target's (capsule, principal)
// queue. Interceptors are reached through the Target interface, which the
// capsule layer implements. A queue is drained by a worker goroutine or, when
// the publisher is about to wait anyway, by the publisher itself (Runner), so
// that a relay of handlers (a tool call) runs on one goroutine.
//
// Decisions that follow from "fail closed" (DESIGN §2.6):
//   - an interceptor that errors or panics counts as Deny;
//   - a chain link that cannot be queued (queue full, capsule unregistered)
//     ends the chain, so overload can never let an event slip past a guard;
//   - a principal that is not a valid principal id is never dispatched.
//
// What it must not do: it does not route, buffer or evict messages for
// subscribers (internal/bus does), it never lets a capsule choose its
// source_id or principal (the Caller comes from the host layer), it never
// blocks a publisher, and an interceptor's answer never changes what route
// subscribers receive. It knows nothing of tools, LLMs or capsule engines.
package dispatch
