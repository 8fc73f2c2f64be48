package hostapi

import "time"

// Invocation is one handler call the kernel makes into a capsule: the guest
// side of the ABI (docs/abi.md) and the argument of a native handler alike.
type Invocation struct {
	// Handler is the handler name bound to the pattern in Capsule.toml.
	Handler string `json:"handler"`
	// Pattern is the [subscribe] key that matched.
	Pattern  string `json:"pattern"`
	Topic    string `json:"topic"`
	SourceID string `json:"source_id"`
	// Principal is the invoking principal ("default" for system events).
	Principal string `json:"principal"`
	// Payload is the guest form of the event's payload.
	Payload []byte `json:"payload"`
	// ReplyTo and CorrelationID are set when the event is a request
	// (IPC.PublishRequest): the handler answers with
	// IPC.PublishReply(ReplyTo, CorrelationID, …). When the handler fails
	// instead, the kernel answers for it.
	ReplyTo       string `json:"reply_to,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
}

// Request is what makes a publish a request (IPC.PublishRequest).
type Request struct {
	// ReplyTo is the topic the answer goes to.
	ReplyTo string `json:"reply_to"`
	// CorrelationID ties the answers to the request: 1 to 1024 bytes of
	// UTF-8 without control characters.
	CorrelationID string `json:"correlation_id"`
	// Timeout is how long the request waits for an answer before the
	// kernel answers it with a timeout; zero is the kernel's default (10
	// minutes), at most an hour.
	Timeout time.Duration `json:"timeout_ns,omitempty"`
}

// Action is an interceptor's answer.
type Action uint32

// The three answers. A handler that answers nothing continues.
const (
	Continue Action = 0 // go on; a non-empty payload replaces the one the next link sees
	Final    Action = 1 // stop the chain here
	Deny     Action = 2 // stop the chain and count the refusal with its reason
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

// Verdict is what a handler returns.
type Verdict struct {
	Action  Action `json:"action"`
	Payload []byte `json:"payload,omitempty"`
	Reason  string `json:"reason,omitempty"`
}
