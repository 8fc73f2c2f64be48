package ipc

import (
	"encoding/json"
	"fmt"
	"math"
)

// The provider-neutral LLM types carried by the llm_* payloads. Their JSON
// follows upstream's serde defaults: roles lowercase, StreamEvent and
// StopReason with PascalCase variant names, MessageContent untagged.

// Role is who authored a message.
type Role string

// The four roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role           `json:"role"`
	Content MessageContent `json:"content"`
}

// TextMessage is a message holding plain text.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Content: MessageContent{Kind: ContentText, Text: text}}
}

// Text returns the message's text and true if its content is plain text.
func (m Message) Text() (string, bool) {
	if m.Content.Kind != ContentText {
		return "", false
	}
	return m.Content.Text, true
}

// ContentKind says which field of a MessageContent is in use.
type ContentKind uint8

// The content kinds, in the order decoding tries them.
const (
	ContentText       ContentKind = iota // a JSON string
	ContentToolCalls                     // an array of ToolCall (an assistant asking for tools)
	ContentToolResult                    // a ToolCallResult object (a tool message)
	ContentMultiPart                     // an array of ContentPart
)

// MessageContent is a message body. On the wire it is untagged, told apart by
// shape; decoding tries text, tool calls, tool result, then parts, and the
// first that fits wins (so an empty array is an empty ToolCalls).
type MessageContent struct {
	Kind       ContentKind
	Text       string
	ToolCalls  []ToolCall
	ToolResult ToolCallResult
	Parts      []ContentPart
}

// MarshalJSON writes the shape of the content's kind.
func (c MessageContent) MarshalJSON() ([]byte, error) {
	switch c.Kind {
	case ContentText:
		return marshalPlain(c.Text)
	case ContentToolCalls:
		return marshalPlain(emptyIfNil(c.ToolCalls))
	case ContentToolResult:
		return marshalPlain(c.ToolResult)
	case ContentMultiPart:
		return marshalPlain(emptyIfNil(c.Parts))
	default:
		return nil, fmt.Errorf("message content: unknown kind %d", c.Kind)
	}
}

// UnmarshalJSON tries each shape in upstream's order.
func (c *MessageContent) UnmarshalJSON(data []byte) error {
	var text string
	if json.Unmarshal(data, &text) == nil && string(data) != "null" {
		*c = MessageContent{Kind: ContentText, Text: text}
		return nil
	}
	var calls []ToolCall
	if json.Unmarshal(data, &calls) == nil && calls != nil {
		*c = MessageContent{Kind: ContentToolCalls, ToolCalls: calls}
		return nil
	}
	var result ToolCallResult
	if result.UnmarshalJSON(data) == nil {
		*c = MessageContent{Kind: ContentToolResult, ToolResult: result}
		return nil
	}
	var parts []ContentPart
	if json.Unmarshal(data, &parts) == nil && parts != nil {
		*c = MessageContent{Kind: ContentMultiPart, Parts: parts}
		return nil
	}
	return fmt.Errorf("message content: not text, tool calls, a tool result or content parts")
}

// PartType tags a ContentPart.
type PartType string

// The content part types.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
)

// ContentPart is one part of a multi-part message: text, or an image given
// as base64 Data with its MediaType.
type ContentPart struct {
	Type      PartType
	Text      string
	Data      string
	MediaType string
}

// MarshalJSON writes the part's tagged form.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PartText:
		return marshalTagged("text", struct {
			Text string `json:"text"`
		}{p.Text})
	case PartImage:
		return marshalTagged("image", struct {
			Data      string `json:"data"`
			MediaType string `json:"media_type"`
		}{p.Data, p.MediaType})
	default:
		return nil, fmt.Errorf("content part: unknown type %q", p.Type)
	}
}

// UnmarshalJSON reads a tagged part.
func (p *ContentPart) UnmarshalJSON(data []byte) error {
	var w struct {
		Text      string `json:"text"`
		Data      string `json:"data"`
		MediaType string `json:"media_type"`
	}
	var err error
	tag := PartType(PayloadType(data))
	switch tag {
	case PartText:
		err = decodeObject(data, &w, "text")
	case PartImage:
		err = decodeObject(data, &w, "data", "media_type")
	default:
		err = fmt.Errorf("unknown type %q", tag)
	}
	if err != nil {
		return fmt.Errorf("content part: %w", err)
	}
	*p = ContentPart{Type: tag, Text: w.Text, Data: w.Data, MediaType: w.MediaType}
	return nil
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments default to {} when absent.
	Arguments json.RawMessage `json:"arguments"`
}

// MarshalJSON writes nil Arguments as {}.
func (t ToolCall) MarshalJSON() ([]byte, error) {
	type wire ToolCall
	if len(t.Arguments) == 0 {
		t.Arguments = json.RawMessage(`{}`)
	}
	return marshalPlain(wire(t))
}

// UnmarshalJSON requires id and name.
func (t *ToolCall) UnmarshalJSON(data []byte) error {
	type wire ToolCall
	var w wire
	if err := decodeObject(data, &w, "id", "name"); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if len(w.Arguments) == 0 {
		w.Arguments = json.RawMessage(`{}`)
	}
	*t = ToolCall(w)
	return nil
}

// LLMToolDefinition is a tool as offered to a model.
type LLMToolDefinition struct {
	Name string `json:"name"`
	// Description is written as null when nil.
	Description *string `json:"description"`
	// InputSchema defaults to {"type":"object"}.
	InputSchema json.RawMessage `json:"input_schema"`
}

var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// MarshalJSON writes a nil InputSchema as {"type":"object"}.
func (d LLMToolDefinition) MarshalJSON() ([]byte, error) {
	type wire LLMToolDefinition
	if len(d.InputSchema) == 0 {
		d.InputSchema = defaultInputSchema
	}
	return marshalPlain(wire(d))
}

// UnmarshalJSON requires name.
func (d *LLMToolDefinition) UnmarshalJSON(data []byte) error {
	if fast, ok := decodeToolDefinition(data); ok {
		*d = fast
		return nil
	}
	type wire LLMToolDefinition
	var w wire
	if err := decodeObject(data, &w, "name"); err != nil {
		return fmt.Errorf("llm tool definition: %w", err)
	}
	if len(w.InputSchema) == 0 {
		w.InputSchema = defaultInputSchema
	}
	*d = LLMToolDefinition(w)
	return nil
}

// StopReason is why a model stopped generating.
type StopReason string

// The stop reasons, spelled as on the wire.
const (
	StopEndTurn      StopReason = "EndTurn"
	StopMaxTokens    StopReason = "MaxTokens"
	StopToolUse      StopReason = "ToolUse"
	StopStopSequence StopReason = "StopSequence"
)

// UnmarshalJSON accepts only the four known reasons.
func (r *StopReason) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("stop reason: %w", err)
	}
	switch StopReason(s) {
	case StopEndTurn, StopMaxTokens, StopToolUse, StopStopSequence:
		*r = StopReason(s)
		return nil
	}
	return fmt.Errorf("stop reason: unknown %q", s)
}

// Usage counts the tokens of one generation (a provider's stream carries
// it once, its request's total, before Done), or of a turn's requests.
type Usage struct {
	// InputTokens counts every input token, CachedTokens included.
	InputTokens  uint64 `json:"input_tokens"`
	OutputTokens uint64 `json:"output_tokens"`
	// CachedTokens are the input tokens the provider read from its prompt
	// cache (OpenAI's cached_tokens, Anthropic's cache_read_input_tokens),
	// which most providers bill at a fraction.
	CachedTokens uint64 `json:"cached_tokens,omitempty"`
}

// Add is u plus v, each count saturating instead of wrapping.
func (u Usage) Add(v Usage) Usage {
	sat := func(a, b uint64) uint64 {
		if a > math.MaxUint64-b {
			return math.MaxUint64
		}
		return a + b
	}
	return Usage{InputTokens: sat(u.InputTokens, v.InputTokens), OutputTokens: sat(u.OutputTokens, v.OutputTokens), CachedTokens: sat(u.CachedTokens, v.CachedTokens)}
}

// Total is input plus output tokens, saturating instead of wrapping.
func (u Usage) Total() uint64 {
	if u.InputTokens > math.MaxUint64-u.OutputTokens {
		return math.MaxUint64
	}
	return u.InputTokens + u.OutputTokens
}

// UnmarshalJSON requires both counts.
func (u *Usage) UnmarshalJSON(data []byte) error {
	type wire Usage
	var w wire
	if err := decodeObject(data, &w, "input_tokens", "output_tokens"); err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	*u = Usage(w)
	return nil
}

// Completion is a whole (non-streamed) model answer, carried by
// LLMResponse.
type Completion struct {
	Message      Message    `json:"message"`
	HasToolCalls bool       `json:"has_tool_calls"`
	StopReason   StopReason `json:"stop_reason"`
	Usage        Usage      `json:"usage"`
}

// UnmarshalJSON requires every field.
func (c *Completion) UnmarshalJSON(data []byte) error {
	type wire Completion
	var w wire
	if err := decodeObject(data, &w, "message", "has_tool_calls", "stop_reason", "usage"); err != nil {
		return fmt.Errorf("completion: %w", err)
	}
	*c = Completion(w)
	return nil
}

// UnmarshalJSON requires role and content.
func (m *Message) UnmarshalJSON(data []byte) error {
	type wire Message
	var w wire
	if err := decodeObject(data, &w, "role", "content"); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	switch w.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return fmt.Errorf("message: unknown role %q", w.Role)
	}
	*m = Message(w)
	return nil
}
