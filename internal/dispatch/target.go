package dispatch

import (
	"context"
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// Target is a registered capsule as the dispatcher sees it: something that can
// be asked to intercept an event. The capsule layer's Composite implements it.
//
// Intercept is called by whichever goroutine owns the capsule's (capsule,
// principal) queue — its worker, or a Runner (see Runner) — one call at a
// time per queue; it should honour ctx, which is cancelled when
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

// Action and Verdict are an interceptor's answer. They are the syscall
// table's own types (hostapi), so an engine's answer reaches the dispatcher
// unconverted: Continue (the zero value, as upstream, where any unknown action
// continues) passes the event on, with a non-empty Verdict.Payload replacing
// the payload the next link of a chain sees (never what route subscribers
// get); Final ends the chain, the event handled; Deny ends it and is counted
// with Verdict.Reason.
type (
	Action  = hostapi.Action
	Verdict = hostapi.Verdict
)

// The three answers (spec bus.md §4.5).
const (
	Continue = hostapi.Continue
	Final    = hostapi.Final
	Deny     = hostapi.Deny
)
