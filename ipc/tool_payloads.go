package ipc

import (
	"encoding/json"
	"fmt"
)

// ToolExecuteRequest asks for one tool call. The orchestrator publishes it
// on ToolRequestExecuteTopic; the router re-publishes it unchanged on
// ToolExecuteTopic(ToolName).
type ToolExecuteRequest struct {
	// CallID correlates the request with its result through the whole
	// round trip; it is chosen by the caller (random, at least 128 bits).
	CallID   string `json:"call_id"`
	ToolName string `json:"tool_name"`
	// Arguments are the tool's arguments as the model produced them.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolExecuteResult carries one tool call's outcome, on
// ToolResultTopic(name) from the tool and on ToolExecuteResultTopic from the
// router.
type ToolExecuteResult struct {
	CallID string         `json:"call_id"`
	Result ToolCallResult `json:"result"`
}

// ToolCancelRequest asks that the named in-flight calls be interrupted.
type ToolCancelRequest struct {
	CallIDs []string `json:"call_ids"`
}

// ToolCallResult is a tool's answer as the model will read it. Errors are
// values: a failed call sets IsError and says why in Content. Parts, when
// present, are the result's typed content (images, audio, resources) for a
// frontend that can pass them on; Content stays the whole of what the
// model reads (ValidateToolParts, ToolPartPlaceholder).
type ToolCallResult struct {
	CallID  string     `json:"call_id"`
	Content string     `json:"content"`
	IsError bool       `json:"is_error"`
	Parts   []ToolPart `json:"parts,omitempty"`
}

// ToolCallSuccess is the result of a call that succeeded.
func ToolCallSuccess(callID, content string) ToolCallResult {
	return ToolCallResult{CallID: callID, Content: content}
}

// ToolCallError is the result of a call that failed, with a readable reason.
func ToolCallError(callID, reason string) ToolCallResult {
	return ToolCallResult{CallID: callID, Content: reason, IsError: true}
}

func (ToolExecuteRequest) Type() Type { return TypeToolExecuteRequest }
func (ToolExecuteResult) Type() Type  { return TypeToolExecuteResult }
func (ToolCancelRequest) Type() Type  { return TypeToolCancelRequest }

func (ToolExecuteRequest) isPayload() {}
func (ToolExecuteResult) isPayload()  {}
func (ToolCancelRequest) isPayload()  {}

// MarshalJSON writes the tagged form; nil Arguments are null.
func (p ToolExecuteRequest) MarshalJSON() ([]byte, error) {
	out, err := p.appendJSON(make([]byte, 0, 96+len(p.CallID)+len(p.ToolName)+len(p.Arguments)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TypeToolExecuteRequest, err)
	}
	return out, nil
}

// UnmarshalJSON requires call_id, tool_name and arguments (which may be
// any JSON value, null included).
func (p *ToolExecuteRequest) UnmarshalJSON(data []byte) error {
	if plain, ok := decodePlainRequest(data); ok {
		*p = plain
		return nil
	}
	type wire ToolExecuteRequest
	var w wire
	if err := requireKeys(data, true, "arguments"); err != nil {
		return fmt.Errorf("%s: %w", TypeToolExecuteRequest, err)
	}
	if err := decodeObject(data, &w, "call_id", "tool_name"); err != nil {
		return fmt.Errorf("%s: %w", TypeToolExecuteRequest, err)
	}
	*p = ToolExecuteRequest(w)
	return nil
}

// MarshalJSON writes the tagged form.
func (p ToolExecuteResult) MarshalJSON() ([]byte, error) {
	return p.appendJSON(make([]byte, 0, 96+2*len(p.CallID)+len(p.Result.Content)+len(p.Result.Content)/8)), nil
}

// UnmarshalJSON requires call_id and result. The kernel's answer to a tool
// call no handler answered (RequestFailed, correlated by the call id) reads
// as that call's error result, so every consumer of results handles it.
func (p *ToolExecuteResult) UnmarshalJSON(data []byte) error {
	if plain, ok := decodePlainResult(data); ok {
		*p = plain
		return nil
	}
	if f, ok := AsRequestFailed(data); ok {
		*p = ToolExecuteResult{CallID: f.CorrelationID, Result: ToolCallResult{CallID: f.CorrelationID, Content: FailureText(f, "the tool call"), IsError: true}}
		return nil
	}
	type wire ToolExecuteResult
	var w wire
	if err := decodeObject(data, &w, "call_id", "result"); err != nil {
		return fmt.Errorf("%s: %w", TypeToolExecuteResult, err)
	}
	*p = ToolExecuteResult(w)
	return nil
}

// MarshalJSON writes the tagged form; nil CallIDs encode as [].
func (p ToolCancelRequest) MarshalJSON() ([]byte, error) {
	type wire ToolCancelRequest
	p.CallIDs = emptyIfNil(p.CallIDs)
	return marshalTagged(TypeToolCancelRequest, wire(p))
}

// UnmarshalJSON requires call_ids.
func (p *ToolCancelRequest) UnmarshalJSON(data []byte) error {
	type wire ToolCancelRequest
	var w wire
	if err := decodeObject(data, &w, "call_ids"); err != nil {
		return fmt.Errorf("%s: %w", TypeToolCancelRequest, err)
	}
	*p = ToolCancelRequest(w)
	return nil
}

// UnmarshalJSON requires call_id and content; is_error defaults to false.
func (r *ToolCallResult) UnmarshalJSON(data []byte) error {
	if plain, ok := decodePlainCallResult(data); ok {
		*r = plain
		return nil
	}
	type wire ToolCallResult
	var w wire
	if err := decodeObject(data, &w, "call_id", "content"); err != nil {
		return fmt.Errorf("tool call result: %w", err)
	}
	*r = ToolCallResult(w)
	return nil
}
