package ipc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CancelRequestTopic is where a capsule asks the kernel to interrupt work
// of the principal it acts for: astrid.v1.request.cancel, carrying a
// CancelRequest. Every host's kernel hears it (DESIGN §9). It names
// requests, not a convention's calls: a handler binds the correlation id
// of the request it serves as its cancel key (hostapi SetCancelKey), and a
// convention's own cancel (the tool convention's tool.v1.request.cancel)
// is turned into this one by the capsule that owns the convention (the
// router).
const CancelRequestTopic = "astrid.v1.request.cancel"

// TypeCancelRequest is the `type` tag of a CancelRequest payload.
const TypeCancelRequest Type = "cancel_request"

// MaxCancelKeys bounds the keys one cancel request names.
const MaxCancelKeys = 256

// CancelRequest asks that the calls holding these keys (the correlation
// ids of the requests they serve) be interrupted, for the envelope's
// principal only: a correlation id is no secret.
type CancelRequest struct {
	CorrelationIDs []string `json:"correlation_ids"`
}

// MarshalJSON writes the tagged form.
func (r CancelRequest) MarshalJSON() ([]byte, error) {
	type plain CancelRequest
	return json.Marshal(struct {
		Type Type `json:"type"`
		plain
	}{TypeCancelRequest, plain(r)})
}

// ParseCancelRequest decodes a cancel request (the wire or guest form),
// refusing another payload's type, more than MaxCancelKeys keys and keys
// that are empty or over 256 bytes (no cancel key is: SetCancelKey).
func ParseCancelRequest(payload []byte) (CancelRequest, error) {
	var r struct {
		Type           Type     `json:"type"`
		CorrelationIDs []string `json:"correlation_ids"`
	}
	if err := json.Unmarshal(GuestBytes(payload), &r); err != nil {
		return CancelRequest{}, fmt.Errorf("cancel request: %w", err)
	}
	if r.Type != TypeCancelRequest {
		return CancelRequest{}, fmt.Errorf("cancel request: type %q, want %q", r.Type, TypeCancelRequest)
	}
	if len(r.CorrelationIDs) > MaxCancelKeys {
		return CancelRequest{}, fmt.Errorf("cancel request: %d correlation ids, at most %d", len(r.CorrelationIDs), MaxCancelKeys)
	}
	for _, id := range r.CorrelationIDs {
		if id == "" || len(id) > 256 {
			return CancelRequest{}, errors.New("cancel request: a correlation id is 1 to 256 bytes")
		}
	}
	return CancelRequest{CorrelationIDs: r.CorrelationIDs}, nil
}
