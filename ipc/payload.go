package ipc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Type is a payload's `type` tag: upstream's IpcPayload variant name in
// snake_case.
type Type string

// The 19 concrete tags upstream knows, plus TypeUnknown (see Unknown).
const (
	TypeRawJSON            Type = "raw_json"
	TypeUserInput          Type = "user_input"
	TypeAgentResponse      Type = "agent_response"
	TypeApprovalRequired   Type = "approval_required"
	TypeApprovalResponse   Type = "approval_response"
	TypeGrantRequired      Type = "grant_required"
	TypeOnboardingRequired Type = "onboarding_required"
	TypeLLMRequest         Type = "llm_request"
	TypeLLMStreamEvent     Type = "llm_stream_event"
	TypeLLMResponse        Type = "llm_response"
	TypeToolExecuteRequest Type = "tool_execute_request"
	TypeToolExecuteResult  Type = "tool_execute_result"
	TypeToolCancelRequest  Type = "tool_cancel_request"
	TypeSelectionRequired  Type = "selection_required"
	TypeElicitRequest      Type = "elicit_request"
	TypeElicitResponse     Type = "elicit_response"
	TypeConnect            Type = "connect"
	TypeDisconnect         Type = "disconnect"
	TypeCustom             Type = "custom"
	TypeUnknown            Type = "unknown"
)

// Payload is one of the payload variants of this package. The set is closed:
// anything else travels as Custom.
type Payload interface {
	// Type is the variant's tag.
	Type() Type
	isPayload()
}

// decoders maps each concrete tag to a decoder of its tagged form.
var decoders = map[Type]func([]byte) (Payload, error){
	TypeRawJSON:            decodeRawJSON,
	TypeUserInput:          decodeAs[UserInput],
	TypeAgentResponse:      decodeAs[AgentResponse],
	TypeApprovalRequired:   decodeAs[ApprovalRequired],
	TypeApprovalResponse:   decodeAs[ApprovalResponse],
	TypeGrantRequired:      decodeAs[GrantRequired],
	TypeOnboardingRequired: decodeAs[OnboardingRequired],
	TypeLLMRequest:         decodeAs[LLMRequest],
	TypeLLMStreamEvent:     decodeAs[LLMStreamEvent],
	TypeLLMResponse:        decodeAs[LLMResponse],
	TypeToolExecuteRequest: decodeAs[ToolExecuteRequest],
	TypeToolExecuteResult:  decodeAs[ToolExecuteResult],
	TypeToolCancelRequest:  decodeAs[ToolCancelRequest],
	TypeSelectionRequired:  decodeAs[SelectionRequired],
	TypeElicitRequest:      decodeAs[ElicitRequest],
	TypeElicitResponse:     decodeAs[ElicitResponse],
	TypeConnect:            decodeAs[Connect],
	TypeDisconnect:         decodeAs[Disconnect],
	TypeCustom:             decodeAs[Custom],
}

// knownTags interns the tags (unknown included) so that sniffing them does
// not allocate.
var knownTags = func() map[string]Type {
	m := map[string]Type{string(TypeUnknown): TypeUnknown}
	for tag := range decoders {
		m[string(tag)] = tag
	}
	return m
}()

// payloadPtr is satisfied by a pointer to a variant struct.
type payloadPtr[T any] interface {
	*T
	Payload
	json.Unmarshaler
}

func decodeAs[T Payload, P payloadPtr[T]](raw []byte) (Payload, error) {
	var v T
	if err := P(&v).UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return v, nil
}

// IsKnownTag reports whether tag names one of the 19 concrete variants. It is
// case-sensitive and false for "unknown" and "".
func IsKnownTag(tag string) bool {
	_, ok := decoders[Type(tag)]
	return ok
}

// ErrPayload is wrapped by every error ParsePayload returns.
var ErrPayload = errors.New("invalid payload")

// ParsePayload decodes a tagged payload strictly, as upstream's plain serde
// decoding does: a known tag is decoded as its variant (an error if that
// fails, e.g. a required field is missing), an unrecognised tag gives
// Unknown, and a value that is not an object or has no string `type` is an
// error. Use it where a malformed message deserves a readable error; use
// DecodePayload on the delivery path, where nothing may be lost.
func ParsePayload(raw json.RawMessage) (Payload, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: malformed JSON", ErrPayload)
	}
	tag, ok := sniffType(raw)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrPayload)
	}
	if tag == "" {
		return nil, fmt.Errorf("%w: no string `type` tag", ErrPayload)
	}
	decode, known := decoders[tag]
	if !known {
		return Unknown{}, nil
	}
	p, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPayload, err)
	}
	return p, nil
}

// DecodePayload decodes a payload the way upstream decodes every guest
// publish, and never loses the message: a known tag that decodes gives its
// variant ({"type":"custom","data":X} gives Custom{Data: X}); anything else
// (no tag, an unknown tag, a known tag that fails to decode, a value that is
// not an object) gives Custom whose Data is raw itself, not a copy. It never
// returns Unknown.
func DecodePayload(raw json.RawMessage) Payload {
	p, err := ParsePayload(raw)
	if err != nil || p.Type() == TypeUnknown {
		return Custom{Data: raw}
	}
	return p
}

// EncodePayload encodes a payload in its tagged form: `{"type":"<tag>",...}`
// with the variant's fields in upstream's order. It fails only for a RawJSON
// whose value is not an object or a value holding malformed raw JSON.
func EncodePayload(p Payload) (json.RawMessage, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil payload", ErrPayload)
	}
	// The tool payloads write themselves compact and unescaped already;
	// skipping the encoder spares re-scanning them on every tool call hop.
	var out []byte
	var err error
	switch v := p.(type) {
	case ToolExecuteRequest:
		out, err = v.MarshalJSON()
	case ToolExecuteResult:
		out, err = v.MarshalJSON()
	default:
		out, err = marshalPlain(p)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %w", ErrPayload, p.Type(), err)
	}
	return out, nil
}
