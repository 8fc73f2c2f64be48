package dispatch

import (
	"context"
	"encoding/json"

	"github.com/astrid-go/astrid/ipc"
)

// Target is a registered capsule as the dispatcher sees it: something that can
// be asked to intercept an event. The capsule layer's Composite implements it.
//
// Intercept is called from the capsule's (capsule, principal) queue worker,
// one call at a time per queue; it should honour ctx, which is cancelled when
// the capsule is unregistered or the dispatcher closes. Returning an error
// (trap, timeout) counts as Deny; returning ErrNotSupported skips the link.
type Target interface {
	Intercept(ctx context.Context, inv Invocation) (Verdict, error)
}

// Invocation is one interceptor call.
type Invocation struct {
	Capsule string // the intercepting capsule
	Pattern string // its interceptor pattern that matched
	Handler string // its handler for that pattern
	// Principal is who the event acts for; empty for a system event.
	Principal string
	// Envelope is the event as the bus delivered it to routes. It is shared
	// and must not be modified.
	Envelope *ipc.Envelope
	// Payload is the payload this link sees: the envelope's, or the one an
	// earlier link of the chain replaced it with.
	Payload json.RawMessage
}

// Action is an interceptor's answer.
type Action uint8

// The three answers (spec bus.md §4.5). The zero value is Continue, matching
// upstream, where any unknown action continues.
const (
	// Continue passes the event to the next link, with Verdict.Payload
	// replacing the payload when it is not empty.
	Continue Action = iota
	// Final ends the chain: the event has been handled.
	Final
	// Deny ends the chain and is counted with Verdict.Reason.
	Deny
)

func (a Action) String() string {
	switch a {
	case Continue:
		return "continue"
	case Final:
		return "final"
	case Deny:
		return "deny"
	}
	return "unknown"
}

// Verdict is what an interceptor returns.
type Verdict struct {
	Action Action
	// Payload, on Continue, replaces the payload seen by the next link of a
	// chain; empty keeps the current one. It is ignored otherwise and never
	// reaches route subscribers.
	Payload json.RawMessage
	// Reason explains a Deny.
	Reason string
}
