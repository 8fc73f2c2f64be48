package dispatch

import "time"

// Kind is what a publish is (Publish's optional last argument, Event when
// left out, so that the common publish reads as it always did): it decides
// which checks the publish passes and what the envelope carries besides
// the caller's stamp. The zero Kind is Event. Build one with the values and
// functions below; its fields are unexported.
type Kind struct {
	of          kindOf
	correlation string // RequestOf, ReplyOf, FailureOf
	replyTo     string // RequestOf
	timeout     time.Duration
	periodic    bool // KernelTick
}

type kindOf uint8

const (
	kindEvent kindOf = iota
	kindRequest
	kindReply
	kindFailure
	kindKernel
)

var (
	// Event is a capsule's plain publish: every check of Publish.
	Event = Kind{}
	// KernelEvent is one of the kernel's own events: source_id "kernel",
	// no ACL, admission or rate limit; the Caller gives only the principal
	// (empty for a system event; set, an interceptor runs for, and sees
	// the KV of, that principal, as the watchdog tick does) and the trace
	// context (the host's approval question carries its call's).
	KernelEvent = Kind{of: kindKernel}
	// KernelTick is a periodic KernelEvent (the watchdog's tick): a
	// capsule whose queue for the principal still holds a tick it has not
	// taken gets no second one, and a full queue skips it quietly (no drop
	// warning, no failure answer). The next tick comes anyway, and a tick
	// must never take the place of a person's work in a slow capsule's
	// queue (Stats.TicksSkipped counts both).
	KernelTick = Kind{of: kindKernel, periodic: true}
)

// RequestOf is a request (DESIGN §4b): Event's checks, then the
// request's. The reply address must be a valid topic the capsule may
// subscribe to or publish on, and the correlation id valid. From then on
// the request is answered exactly once by the kernel if no handler answers
// it: at once when nothing on this host or a transport took it
// (ipc.FailNoResponders), and otherwise as the Request type says.
func RequestOf(r Request) Kind {
	return Kind{of: kindRequest, replyTo: r.ReplyTo, correlation: r.CorrelationID, timeout: r.Timeout}
}

// ReplyOf is an answer to the request correlationID names; the first
// answer ends that request's wait. A reply a handler publishes may use the
// queues' headroom (limitFor).
func ReplyOf(correlationID string) Kind { return Kind{of: kindReply, correlation: correlationID} }

// FailureOf is a call's failure reply (DESIGN §4): the one answer a caller
// is owed when the handler it reached cannot give it. The rate limit never
// refuses it: its bytes are borrowed from the bucket (which may go up to
// one burst into debt, repaid by the capsule's later publishes), so that a
// caller is not left waiting for a reply the limiter dropped; admission
// never refuses it either. The host layer checked the topic against the
// ACL when the reply was registered, and it is checked again. A capsule
// being unregistered still sends it. A non-empty correlationID makes it
// the reply to that request, as ReplyOf.
func FailureOf(correlationID string) Kind { return Kind{of: kindFailure, correlation: correlationID} }
