package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Request/reply is a bus primitive (DESIGN §4b): a request is an envelope
// that names where its answer goes (ReplyTo) and what ties the answer to it
// (CorrelationID); a reply is an envelope that carries the correlation id
// of the request it answers. When a request cannot be answered by a handler
// — dropped at a full queue, discarded at an unload, its handler failed, no
// one took it, its deadline passed, its host was lost — the kernel answers
// on ReplyTo with a RequestFailed payload, without knowing what the topic
// means. Envelopes that are neither encode exactly as before.

// MaxCorrelationID bounds a correlation id, in bytes (a KV key's bound).
const MaxCorrelationID = 1024

// ReplyTo is the topic a request's answer goes to; empty when the envelope
// is not a request.
func (e *Envelope) ReplyTo() string {
	if e.Provenance == nil {
		return ""
	}
	return e.Provenance.ReplyTo
}

// CorrelationID ties a request to its answers; empty when the envelope is
// neither a request nor a reply.
func (e *Envelope) CorrelationID() string {
	if e.Provenance == nil {
		return ""
	}
	return e.Provenance.CorrelationID
}

// Deadline is when a request stops waiting for its answer (Unix
// nanoseconds); zero when it has none or is not a request.
func (e *Envelope) Deadline() int64 {
	if e.Provenance == nil {
		return 0
	}
	return e.Provenance.Deadline
}

// IsRequest reports whether the envelope asks for an answer.
func (e *Envelope) IsRequest() bool {
	return e.Provenance != nil && e.Provenance.ReplyTo != "" && e.Provenance.CorrelationID != ""
}

// IsReply reports whether the envelope answers a request: it carries a
// correlation id and asks for no answer itself.
func (e *Envelope) IsReply() bool {
	return e.Provenance != nil && e.Provenance.CorrelationID != "" && e.Provenance.ReplyTo == ""
}

// SetRequest makes e a request answered on replyTo, tied by correlationID,
// that waits until deadline (Unix nanoseconds; 0: none).
func (e *Envelope) SetRequest(replyTo, correlationID string, deadline int64) {
	if e.Provenance == nil {
		e.Provenance = &Provenance{}
	}
	e.Provenance.ReplyTo, e.Provenance.CorrelationID, e.Provenance.Deadline = replyTo, correlationID, deadline
}

// SetReply makes e a reply to the request tied by correlationID.
func (e *Envelope) SetReply(correlationID string) {
	if e.Provenance == nil {
		e.Provenance = &Provenance{}
	}
	e.Provenance.ReplyTo, e.Provenance.CorrelationID, e.Provenance.Deadline = "", correlationID, 0
}

// ErrInvalidCorrelationID is wrapped by ValidateCorrelationID's refusals.
var ErrInvalidCorrelationID = errors.New("ipc: invalid correlation id")

// ValidateCorrelationID checks a correlation id: 1 to MaxCorrelationID
// bytes of UTF-8 without control characters (it is logged and shown).
func ValidateCorrelationID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidCorrelationID)
	}
	if len(id) > MaxCorrelationID {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidCorrelationID, len(id), MaxCorrelationID)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("%w: not UTF-8", ErrInvalidCorrelationID)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: it holds a control character (%U)", ErrInvalidCorrelationID, r)
		}
	}
	return nil
}

// FailureReason says why the kernel answered a request itself.
type FailureReason string

// The reasons a request is answered with a failure.
const (
	// FailNoResponders: nothing on the bus took the request.
	FailNoResponders FailureReason = "no_responders"
	// FailQueueFull: a handler's queue was full; it never saw the request.
	FailQueueFull FailureReason = "queue_full"
	// FailUnloaded: the handler's capsule was unloaded before it took it.
	FailUnloaded FailureReason = "unloaded"
	// FailHandler: the handler trapped, failed, timed out or was cancelled.
	FailHandler FailureReason = "handler_failed"
	// FailRefused: an interceptor refused the request (Deny).
	FailRefused FailureReason = "refused"
	// FailTimeout: nothing answered before the request's deadline.
	FailTimeout FailureReason = "timeout"
	// FailReplyLost: an answer was lost at the requester's own full queue.
	FailReplyLost FailureReason = "reply_lost"
	// FailHostLost: the host that took the request left the cluster.
	FailHostLost FailureReason = "host_lost"
	// FailCancelled: a cancel ended the handler before it answered.
	FailCancelled FailureReason = "cancelled"
	// FailTooLarge: the handler's answer was over the bus's message cap.
	FailTooLarge FailureReason = "too_large"
)

// TypeRequestFailed is the `type` tag of a RequestFailed payload. It is ours,
// not one of upstream's variants: DecodePayload reads it as Custom.
const TypeRequestFailed Type = "request_failed"

// RequestFailed is the kernel's answer to a request no handler answered.
type RequestFailed struct {
	CorrelationID string        `json:"correlation_id"`
	Reason        FailureReason `json:"reason"`
	// Message says what happened in words a person can act on.
	Message string `json:"message"`
}

// MarshalJSON writes the tagged form.
func (f RequestFailed) MarshalJSON() ([]byte, error) {
	type plain RequestFailed
	return json.Marshal(struct {
		Type Type `json:"type"`
		plain
	}{TypeRequestFailed, plain(f)})
}

// failedTag is how every RequestFailed payload starts once encoded by
// MarshalJSON; AsRequestFailed checks for it before decoding, so that a
// consumer's ordinary answers pay one prefix comparison.
var failedTag = []byte(`{"type":"request_failed"`)

// AsRequestFailed reports whether payload (the wire or guest form) is the
// kernel's failure answer, and decodes it.
func AsRequestFailed(payload []byte) (RequestFailed, bool) {
	p := bytes.TrimLeft(payload, " \t\r\n")
	if !bytes.HasPrefix(p, failedTag) {
		return RequestFailed{}, false
	}
	var f struct {
		Type          Type          `json:"type"`
		CorrelationID string        `json:"correlation_id"`
		Reason        FailureReason `json:"reason"`
		Message       string        `json:"message"`
	}
	if err := json.Unmarshal(p, &f); err != nil || f.Type != TypeRequestFailed {
		return RequestFailed{}, false
	}
	return RequestFailed{CorrelationID: f.CorrelationID, Reason: f.Reason, Message: f.Message}, true
}

// DeadlineAfter is the deadline of a request that waits d from now; zero
// for d ≤ 0 (no deadline).
func DeadlineAfter(now time.Time, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return now.Add(d).UnixNano()
}

// FailureText says in words for a person or a model what a failure means
// for what (say "the tool call" or "the model request"): whether the work
// ran, and what to do.
func FailureText(f RequestFailed, what string) string {
	switch f.Reason {
	case FailNoResponders, FailQueueFull, FailUnloaded:
		return fmt.Sprintf("%s was not taken: %s; nothing ran, try again later", what, f.Message)
	case FailRefused:
		return fmt.Sprintf("%s was refused: %s", what, f.Message)
	case FailTimeout:
		return fmt.Sprintf("%s was not answered in time: %s", what, f.Message)
	case FailReplyLost:
		return fmt.Sprintf("the answer to %s was lost: %s", what, f.Message)
	case FailHostLost:
		return fmt.Sprintf("the answer to %s was lost: %s; it may have acted, check before asking again", what, f.Message)
	case FailCancelled:
		return fmt.Sprintf("%s was cancelled before it answered (%s); whatever it had started was stopped", what, f.Message)
	case FailTooLarge:
		return fmt.Sprintf("%s's answer was not delivered: %s", what, f.Message)
	}
	return fmt.Sprintf("%s failed: %s", what, f.Message)
}
