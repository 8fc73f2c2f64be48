package ipc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// Each variant encodes in its tagged form and decodes from it (the tag itself
// is not checked here; ParsePayload dispatches on it). Decoding insists on
// the fields serde requires, fills serde's defaults, and maps null optional
// values to absent ones.

// MarshalJSON merges the object's members beside the tag.
func (p RawJSON) MarshalJSON() ([]byte, error) {
	v := bytes.TrimSpace(p.Value)
	if len(v) == 0 || v[0] != '{' || !json.Valid(v) {
		return nil, fmt.Errorf("%s: the value must be a JSON object", TypeRawJSON)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, fmt.Errorf("%s: %w", TypeRawJSON, err)
	}
	return prependTag(TypeRawJSON, buf.Bytes())
}

// UnmarshalJSON keeps the object without its `type` member.
func (p *RawJSON) UnmarshalJSON(data []byte) error {
	if err := requireKeys(data, false); err != nil {
		return fmt.Errorf("%s: %w", TypeRawJSON, err)
	}
	*p = RawJSON{Value: withoutKey(data, "type")}
	return nil
}

func decodeRawJSON(raw []byte) (Payload, error) { return decodeAs[RawJSON](raw) }

// MarshalJSON writes the tagged form.
func (p UserInput) MarshalJSON() ([]byte, error) {
	type wire UserInput
	return marshalTagged(TypeUserInput, wire(p))
}

// UnmarshalJSON requires text; session_id defaults to DefaultSessionID.
func (p *UserInput) UnmarshalJSON(data []byte) error {
	type wire UserInput
	w := wire{SessionID: DefaultSessionID}
	if err := decodeObject(data, &w, "text"); err != nil {
		return fmt.Errorf("%s: %w", TypeUserInput, err)
	}
	w.Context = nullToNil(w.Context)
	*p = UserInput(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p AgentResponse) MarshalJSON() ([]byte, error) {
	type wire AgentResponse
	return marshalTagged(TypeAgentResponse, wire(p))
}

// UnmarshalJSON requires text and is_final; session_id defaults to
// DefaultSessionID.
func (p *AgentResponse) UnmarshalJSON(data []byte) error {
	type wire AgentResponse
	w := wire{SessionID: DefaultSessionID}
	if err := decodeObject(data, &w, "text", "is_final"); err != nil {
		return fmt.Errorf("%s: %w", TypeAgentResponse, err)
	}
	*p = AgentResponse(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p ApprovalRequired) MarshalJSON() ([]byte, error) {
	type wire ApprovalRequired
	return marshalTagged(TypeApprovalRequired, wire(p))
}

// UnmarshalJSON requires every field.
func (p *ApprovalRequired) UnmarshalJSON(data []byte) error {
	type wire ApprovalRequired
	var w wire
	if err := decodeObject(data, &w, "request_id", "action", "resource", "reason"); err != nil {
		return fmt.Errorf("%s: %w", TypeApprovalRequired, err)
	}
	*p = ApprovalRequired(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p ApprovalResponse) MarshalJSON() ([]byte, error) {
	type wire ApprovalResponse
	return marshalTagged(TypeApprovalResponse, wire(p))
}

// UnmarshalJSON requires request_id and decision.
func (p *ApprovalResponse) UnmarshalJSON(data []byte) error {
	type wire ApprovalResponse
	var w wire
	if err := decodeObject(data, &w, "request_id", "decision"); err != nil {
		return fmt.Errorf("%s: %w", TypeApprovalResponse, err)
	}
	*p = ApprovalResponse(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p GrantRequired) MarshalJSON() ([]byte, error) {
	type wire GrantRequired
	return marshalTagged(TypeGrantRequired, wire(p))
}

// UnmarshalJSON requires every field.
func (p *GrantRequired) UnmarshalJSON(data []byte) error {
	type wire GrantRequired
	var w wire
	if err := decodeObject(data, &w, "request_id", "principal", "capsule_id"); err != nil {
		return fmt.Errorf("%s: %w", TypeGrantRequired, err)
	}
	*p = GrantRequired(w)
	return nil
}

// MarshalJSON writes the tagged form; nil Fields encode as [].
func (p OnboardingRequired) MarshalJSON() ([]byte, error) {
	type wire OnboardingRequired
	p.Fields = emptyIfNil(p.Fields)
	return marshalTagged(TypeOnboardingRequired, wire(p))
}

// UnmarshalJSON requires every field.
func (p *OnboardingRequired) UnmarshalJSON(data []byte) error {
	type wire OnboardingRequired
	var w wire
	if err := decodeObject(data, &w, "capsule_id", "fields"); err != nil {
		return fmt.Errorf("%s: %w", TypeOnboardingRequired, err)
	}
	*p = OnboardingRequired(w)
	return nil
}

// MarshalJSON writes the tagged form; nil Options encode as [].
func (p SelectionRequired) MarshalJSON() ([]byte, error) {
	type wire SelectionRequired
	p.Options = emptyIfNil(p.Options)
	return marshalTagged(TypeSelectionRequired, wire(p))
}

// UnmarshalJSON requires every field.
func (p *SelectionRequired) UnmarshalJSON(data []byte) error {
	type wire SelectionRequired
	var w wire
	if err := decodeObject(data, &w, "request_id", "title", "options", "callback_topic"); err != nil {
		return fmt.Errorf("%s: %w", TypeSelectionRequired, err)
	}
	*p = SelectionRequired(w)
	return nil
}

// UnmarshalJSON requires id and label.
func (o *SelectionOption) UnmarshalJSON(data []byte) error {
	type wire SelectionOption
	var w wire
	if err := decodeObject(data, &w, "id", "label"); err != nil {
		return fmt.Errorf("selection option: %w", err)
	}
	*o = SelectionOption(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p ElicitRequest) MarshalJSON() ([]byte, error) {
	type wire ElicitRequest
	return marshalTagged(TypeElicitRequest, wire(p))
}

// UnmarshalJSON requires every field.
func (p *ElicitRequest) UnmarshalJSON(data []byte) error {
	type wire ElicitRequest
	var w wire
	if err := decodeObject(data, &w, "request_id", "capsule_id", "field"); err != nil {
		return fmt.Errorf("%s: %w", TypeElicitRequest, err)
	}
	*p = ElicitRequest(w)
	return nil
}

// MarshalJSON writes the tagged form; nil Values are left out, an empty
// non-nil slice is written as [].
func (p ElicitResponse) MarshalJSON() ([]byte, error) {
	type wire ElicitResponse
	return marshalTagged(TypeElicitResponse, wire(p))
}

// UnmarshalJSON requires request_id.
func (p *ElicitResponse) UnmarshalJSON(data []byte) error {
	type wire ElicitResponse
	var w wire
	if err := decodeObject(data, &w, "request_id"); err != nil {
		return fmt.Errorf("%s: %w", TypeElicitResponse, err)
	}
	*p = ElicitResponse(w)
	return nil
}

// UnmarshalJSON requires key, prompt and field_type.
func (f *OnboardingField) UnmarshalJSON(data []byte) error {
	type wire OnboardingField
	var w wire
	if err := decodeObject(data, &w, "key", "prompt", "field_type"); err != nil {
		return fmt.Errorf("onboarding field: %w", err)
	}
	*f = OnboardingField(w)
	return nil
}

// MarshalJSON writes {"type":"connect"}.
func (Connect) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"connect"}`), nil
}

// UnmarshalJSON accepts any object.
func (p *Connect) UnmarshalJSON(data []byte) error {
	if err := requireKeys(data, false); err != nil {
		return fmt.Errorf("%s: %w", TypeConnect, err)
	}
	*p = Connect{}
	return nil
}

// MarshalJSON writes the tagged form.
func (p Disconnect) MarshalJSON() ([]byte, error) {
	type wire Disconnect
	return marshalTagged(TypeDisconnect, wire(p))
}

// UnmarshalJSON accepts an optional reason.
func (p *Disconnect) UnmarshalJSON(data []byte) error {
	type wire Disconnect
	var w wire
	if err := decodeObject(data, &w); err != nil {
		return fmt.Errorf("%s: %w", TypeDisconnect, err)
	}
	*p = Disconnect(w)
	return nil
}

// MarshalJSON writes {"type":"custom","data":...}; nil Data is null.
func (p Custom) MarshalJSON() ([]byte, error) {
	type wire Custom
	return marshalTagged(TypeCustom, wire(p))
}

// UnmarshalJSON requires data, which may be any JSON value including null.
// Data is taken by exact key (the last one if repeated) and copied
// verbatim, so it is always what GuestBytes hands a handler.
func (p *Custom) UnmarshalJSON(data []byte) error {
	if err := requireKeys(data, true, "data"); err != nil {
		return fmt.Errorf("%s: %w", TypeCustom, err)
	}
	var inner []byte
	jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		if m.Is("data") {
			inner = data[m.ValStart:m.End]
		}
		return true
	})
	*p = Custom{Data: bytes.Clone(inner)}
	return nil
}

// MarshalJSON writes {"type":"unknown"}.
func (Unknown) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"unknown"}`), nil
}

// UnmarshalJSON accepts any object.
func (p *Unknown) UnmarshalJSON(data []byte) error {
	if err := requireKeys(data, false); err != nil {
		return fmt.Errorf("%s: %w", TypeUnknown, err)
	}
	*p = Unknown{}
	return nil
}
