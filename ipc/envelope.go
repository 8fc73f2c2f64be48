package ipc

import (
	"encoding/json"
	"time"
)

// Envelope is one message on the bus, serialised as upstream's IpcMessage.
//
// The bus stamps Seq and Timestamp; the host stamps SourceID and Principal
// (and Origin, DeviceKeyID). A capsule sets none of them. Once published an
// envelope is shared by every receiver and must not be modified.
type Envelope struct {
	Topic string `json:"topic"`
	// Payload is the tagged payload JSON exactly as the publisher produced
	// it; it is never re-encoded on the way.
	Payload   json.RawMessage `json:"payload"`
	Signature Signature       `json:"signature"`
	SourceID  string          `json:"source_id"`
	Timestamp time.Time       `json:"timestamp"`
	Seq       uint64          `json:"seq"`
	// Principal is who the event acts for; empty for system events.
	Principal   string `json:"principal,omitempty"`
	DeviceKeyID string `json:"device_key_id,omitempty"`
	Origin      Origin `json:"origin,omitempty"`
}

// EnvelopeOverhead approximates the bytes an encoded envelope adds to its
// topic and payload (field names, ids, timestamp); the bus uses it for byte
// budgets so that empty payloads still cost something.
const EnvelopeOverhead = 160

// Size is the byte cost of the envelope for budgets and size caps.
func (e *Envelope) Size() int {
	return len(e.Topic) + len(e.Payload) + len(e.SourceID) + len(e.Principal) + len(e.Signature) + EnvelopeOverhead
}

// KernelSourceID is the source_id of the kernel's own events. It is reserved:
// no capsule may take it as its id.
const KernelSourceID = "kernel"
