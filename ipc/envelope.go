package ipc

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Envelope is one message on the bus, serialised as upstream's IpcMessage
// (see MarshalJSON: the wire form is flat).
//
// The bus stamps Seq and Timestamp; the host stamps SourceID and Principal
// (and the Provenance). A capsule sets none of them. Once published an
// envelope is shared by every receiver and must not be modified.
type Envelope struct {
	Topic string
	// Payload is the tagged payload JSON exactly as the publisher produced
	// it; it is never re-encoded on the way.
	Payload  json.RawMessage
	SourceID string
	// Principal is who the event acts for; empty for system events.
	Principal string
	// Timestamp is when the bus admitted the envelope, in nanoseconds
	// since the Unix epoch (Time converts it). An integer rather than a
	// time.Time: the envelope is allocated for every publish, and a
	// time.Time is 24 bytes with a pointer where this is 8 without.
	Timestamp int64
	Seq       uint64
	// Scope names the request context the event belongs to: the
	// workspace and provider settings of the client whose request began
	// the work (DESIGN §4a, §8). The host stamps it, as it stamps the
	// principal: a call's publishes carry the scope of the event that
	// invoked it, and only an uplink sets one of its own choosing. Zero is
	// none (the kernel's own workspace and the capsules' stored settings).
	// It is local to the kernel that stamped it: it is not part of the
	// wire forms (JSON, the binary frame), so an envelope from another
	// host has none.
	Scope uint64
	// Provenance holds what few envelopes carry: a signature, a device key
	// id, a transport origin, a trace context (only when tracing is on).
	// Nil means none of them (origin system, no trace). It is
	// apart because an envelope is allocated for every publish: without
	// these three fields inline it is 112 bytes instead of 160, and the
	// garbage collector's share of a publish shrinks with it.
	Provenance *Provenance
}

// Provenance is an envelope's rarely set fields.
type Provenance struct {
	Signature   Signature
	DeviceKeyID string
	Origin      Origin
	// Trace is the W3C trace context of the span that published the
	// envelope (trace.go); zero when tracing is off. It is here rather
	// than inline so that an untraced envelope pays nothing for it.
	Trace TraceContext
	// ReplyTo, CorrelationID and Deadline make the envelope a request (all
	// set but Deadline, which may be zero) or a reply (CorrelationID
	// alone): request.go. Here rather than inline for the same reason as
	// the rest: most envelopes are neither.
	ReplyTo       string
	CorrelationID string
	// Deadline is Unix nanoseconds; zero is none.
	Deadline int64
	// Host is the id of the host whose bus admitted the envelope, when
	// that is another host of a bus spanning hosts: the receiving host's
	// transport sets it (SetHost) on every envelope it hands over, so that
	// a reader tells this host's capsules from another host's (`tool
	// list`'s HOST column). Empty: published on this host. Like Scope, it
	// is local: no part of the wire forms, so no publisher can claim one.
	Host string
}

// Signature is the envelope's signature, nil when it has none.
func (e *Envelope) Signature() Signature {
	if e.Provenance == nil {
		return nil
	}
	return e.Provenance.Signature
}

// DeviceKeyID is the id of the device key that signed the envelope, if any.
func (e *Envelope) DeviceKeyID() string {
	if e.Provenance == nil {
		return ""
	}
	return e.Provenance.DeviceKeyID
}

// Origin is the transport the envelope came in on; OriginSystem (the
// fail-closed default) when not recorded.
func (e *Envelope) Origin() Origin {
	if e.Provenance == nil {
		return OriginSystem
	}
	return e.Provenance.Origin
}

// Host is the id of the host the envelope was published on, when that is
// another host; "" for this host's own (Provenance.Host).
func (e *Envelope) Host() string {
	if e.Provenance == nil {
		return ""
	}
	return e.Provenance.Host
}

// SetHost records that the envelope was published on host, another host of
// the bus: only the transport that received it calls it.
func (e *Envelope) SetHost(host string) {
	if e.Provenance == nil {
		e.Provenance = &Provenance{}
	}
	e.Provenance.Host = host
}

// Time is Timestamp as a time.Time in UTC; the zero Time when the envelope
// was never stamped.
func (e *Envelope) Time() time.Time {
	if e.Timestamp == 0 {
		return time.Time{}
	}
	return time.Unix(0, e.Timestamp).UTC()
}

// minStamp and maxStamp are the instants Unix nanoseconds in an int64 can
// hold (years 1677 to 2262).
var (
	minStamp = time.Unix(0, math.MinInt64)
	maxStamp = time.Unix(0, math.MaxInt64)
)

// unixNano converts a decoded timestamp, refusing one an int64 of
// nanoseconds cannot hold rather than wrapping it to another date.
func unixNano(t time.Time) (int64, error) {
	if t.IsZero() {
		return 0, nil
	}
	if t.Before(minStamp) || t.After(maxStamp) {
		return 0, fmt.Errorf("ipc: envelope timestamp %s is outside the years 1677 to 2262", t.Format(time.RFC3339))
	}
	return t.UnixNano(), nil
}

// envelopeWire is the envelope's JSON form, field for field upstream's.
type envelopeWire struct {
	Topic       string          `json:"topic"`
	Payload     json.RawMessage `json:"payload"`
	Signature   Signature       `json:"signature"`
	SourceID    string          `json:"source_id"`
	Timestamp   time.Time       `json:"timestamp"`
	Seq         uint64          `json:"seq"`
	Principal   string          `json:"principal,omitempty"`
	DeviceKeyID string          `json:"device_key_id,omitempty"`
	Origin      Origin          `json:"origin,omitempty"`
	// Traceparent is Provenance.Trace in W3C form; absent when there is
	// none. An extension of upstream's frame, which ignores it.
	Traceparent string `json:"traceparent,omitempty"`
	// ReplyTo, CorrelationID and Deadline are a request's or a reply's
	// (request.go); absent on every other envelope. Extensions too.
	ReplyTo       string     `json:"reply_to,omitempty"`
	CorrelationID string     `json:"correlation_id,omitempty"`
	Deadline      *time.Time `json:"deadline,omitempty"`
}

// MarshalJSON writes the flat wire form: signature always (null when
// absent), principal, device_key_id and origin only when set.
func (e Envelope) MarshalJSON() ([]byte, error) {
	w := envelopeWire{Topic: e.Topic, Payload: e.Payload, SourceID: e.SourceID, Timestamp: e.Time(), Seq: e.Seq, Principal: e.Principal}
	if p := e.Provenance; p != nil {
		w.Signature, w.DeviceKeyID, w.Origin = p.Signature, p.DeviceKeyID, p.Origin
		w.Traceparent = p.Trace.String()
		w.ReplyTo, w.CorrelationID = p.ReplyTo, p.CorrelationID
		if p.Deadline != 0 {
			dl := time.Unix(0, p.Deadline).UTC()
			w.Deadline = &dl
		}
	}
	return json.Marshal(&w)
}

// UnmarshalJSON reads the wire form; Provenance stays nil unless the frame
// has a signature (even an empty one), a device key id, an origin other
// than system or a trace context. A traceparent that does not parse is
// dropped, not an error: tracing is advisory and must never make a frame
// undeliverable.
func (e *Envelope) UnmarshalJSON(data []byte) error {
	var w envelopeWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	stamp, err := unixNano(w.Timestamp)
	if err != nil {
		return err
	}
	*e = Envelope{Topic: w.Topic, Payload: w.Payload, SourceID: w.SourceID, Principal: w.Principal, Timestamp: stamp, Seq: w.Seq}
	var trace TraceContext
	if w.Traceparent != "" {
		trace, _ = ParseTraceparent(w.Traceparent)
	}
	var deadline int64
	if w.Deadline != nil {
		if deadline, err = unixNano(*w.Deadline); err != nil {
			return err
		}
	}
	if w.Signature != nil || w.DeviceKeyID != "" || w.Origin != OriginSystem || trace.Valid() || w.ReplyTo != "" || w.CorrelationID != "" || deadline != 0 {
		e.Provenance = &Provenance{Signature: w.Signature, DeviceKeyID: w.DeviceKeyID, Origin: w.Origin, Trace: trace,
			ReplyTo: w.ReplyTo, CorrelationID: w.CorrelationID, Deadline: deadline}
	}
	return nil
}

// EnvelopeOverhead approximates the bytes an encoded envelope adds to its
// topic and payload (field names, ids, timestamp); the bus uses it for byte
// budgets so that empty payloads still cost something.
const EnvelopeOverhead = 160

// Size is the byte cost of the envelope for budgets and size caps.
func (e *Envelope) Size() int {
	n := len(e.Topic) + len(e.Payload) + len(e.SourceID) + len(e.Principal) + EnvelopeOverhead
	if p := e.Provenance; p != nil {
		n += len(p.Signature) + len(p.ReplyTo) + len(p.CorrelationID)
	}
	return n
}

// KernelSourceID is the source_id of the kernel's own events. It is reserved:
// no capsule may take it as its id.
const KernelSourceID = "kernel"
