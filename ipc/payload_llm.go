package ipc

import "fmt"

// The three LLM variants. Upstream types RequestID as a UUID; it is carried
// here as a string and other spellings are not refused, but peers running
// upstream code will refuse a request_id that is not a UUID.

// LLMRequest asks a provider for a generation (on LLMGenerateTopic).
type LLMRequest struct {
	RequestID string              `json:"request_id"`
	Model     string              `json:"model"`
	Messages  []Message           `json:"messages"`
	Tools     []LLMToolDefinition `json:"tools"`
	System    string              `json:"system"`
}

// LLMStreamEvent carries one event of a streamed generation (on
// LLMStreamTopic).
type LLMStreamEvent struct {
	RequestID string      `json:"request_id"`
	Event     StreamEvent `json:"event"`
}

// LLMResponse carries a whole, non-streamed generation.
type LLMResponse struct {
	RequestID string     `json:"request_id"`
	Response  Completion `json:"response"`
}

func (LLMRequest) Type() Type     { return TypeLLMRequest }
func (LLMStreamEvent) Type() Type { return TypeLLMStreamEvent }
func (LLMResponse) Type() Type    { return TypeLLMResponse }

func (LLMRequest) isPayload()     {}
func (LLMStreamEvent) isPayload() {}
func (LLMResponse) isPayload()    {}

// MarshalJSON writes the tagged form; nil Messages and Tools encode as [].
func (p LLMRequest) MarshalJSON() ([]byte, error) {
	type wire LLMRequest
	p.Messages = emptyIfNil(p.Messages)
	p.Tools = emptyIfNil(p.Tools)
	return marshalTagged(TypeLLMRequest, wire(p))
}

// UnmarshalJSON requires every field.
func (p *LLMRequest) UnmarshalJSON(data []byte) error {
	type wire LLMRequest
	var w wire
	if err := decodeObject(data, &w, "request_id", "model", "messages", "tools", "system"); err != nil {
		return fmt.Errorf("%s: %w", TypeLLMRequest, err)
	}
	*p = LLMRequest(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p LLMStreamEvent) MarshalJSON() ([]byte, error) {
	if b, ok := appendLLMStreamEvent(make([]byte, 0, 64+len(p.RequestID)+len(p.Event.Text)+len(p.Event.ArgsDelta)), p); ok {
		return b, nil
	}
	type wire LLMStreamEvent
	return marshalTagged(TypeLLMStreamEvent, wire(p))
}

// UnmarshalJSON requires every field. The kernel's answer to a model
// request no provider answered (RequestFailed, correlated by the request
// id) reads as that request's error event.
func (p *LLMStreamEvent) UnmarshalJSON(data []byte) error {
	if f, ok := AsRequestFailed(data); ok {
		*p = LLMStreamEvent{RequestID: f.CorrelationID, Event: StreamEvent{Kind: StreamError, Text: FailureText(f, "the model request")}}
		return nil
	}
	type wire LLMStreamEvent
	var w wire
	if err := decodeObject(data, &w, "request_id", "event"); err != nil {
		return fmt.Errorf("%s: %w", TypeLLMStreamEvent, err)
	}
	*p = LLMStreamEvent(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p LLMResponse) MarshalJSON() ([]byte, error) {
	type wire LLMResponse
	return marshalTagged(TypeLLMResponse, wire(p))
}

// UnmarshalJSON requires every field.
func (p *LLMResponse) UnmarshalJSON(data []byte) error {
	type wire LLMResponse
	var w wire
	if err := decodeObject(data, &w, "request_id", "response"); err != nil {
		return fmt.Errorf("%s: %w", TypeLLMResponse, err)
	}
	*p = LLMResponse(w)
	return nil
}
