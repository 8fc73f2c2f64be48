package ipc

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// This file holds the conversational, approval, interactive-input, lifecycle
// and catch-all variants; the tool variants are in tool_payloads.go and the
// LLM variants in payload_llm.go. Optional strings are pointers so that an
// absent value and an empty one stay distinct on the wire, as upstream's
// Option<String> does (write new("text") to set one).

// DefaultSessionID is the session a user_input or agent_response belongs to
// when its session_id is absent.
const DefaultSessionID = "default"

// RawJSON carries a JSON object whose members sit beside the `type` tag:
// {"type":"raw_json","a":1} holds {"a":1}. Handlers receive the object
// without the tag. Kernel management requests and responses travel this way.
type RawJSON struct {
	// Value must be a JSON object to be encoded.
	Value json.RawMessage
}

// UserInput is a prompt from a user (published on user.v1.prompt).
type UserInput struct {
	Text      string `json:"text"`
	SessionID string `json:"session_id"`
	// Context is free-form; {"action":"cancel_turn"} with empty Text asks
	// the orchestrator to cancel the running turn.
	Context json.RawMessage `json:"context,omitempty"`
	// Images go with Text to the model, after it in the user message
	// (an editor's pasted screenshot). Not upstream's: an agent that
	// does not know the field reads the text alone.
	Images []PromptImage `json:"images,omitempty"`
}

// PromptImage is one image of a prompt: base64 Data of MediaType
// (image/png, image/jpeg, image/gif or image/webp).
type PromptImage struct {
	Data      string `json:"data"`
	MediaType string `json:"media_type"`
}

// AgentResponse is (part of) the agent's answer to the user.
type AgentResponse struct {
	Text      string `json:"text"`
	IsFinal   bool   `json:"is_final"`
	SessionID string `json:"session_id"`
	// Outcome says what ended the turn on a final response (one of the
	// Outcome constants); empty on a partial one. Upstream has no such
	// field: a frontend had to guess an error from the text.
	Outcome string `json:"outcome,omitempty"`
	// TurnID echoes the PromptContext.TurnID of the prompt that started
	// the turn, so a frontend tells its turn's end from an earlier turn's
	// on the same session (one it pre-empted). Empty when none was given.
	TurnID string `json:"turn_id,omitempty"`
	// Provider is the LLM provider the turn asked, on a final response of
	// a turn that chose one; Defaulted is true when nobody chose it (not
	// the prompt, the principal's active model nor the operator's [env]
	// provider): a frontend then says which provider stood in, so the
	// offline replay script never answers as if it were a model.
	Provider  string `json:"provider,omitempty"`
	Defaulted bool   `json:"defaulted,omitempty"`
	// Model is the model the turn asked Provider for, when the agent knew
	// it (empty: the provider's own configured model).
	Model string `json:"model,omitempty"`
	// Usage sums the tokens the provider reported for the turn's model
	// requests, on a final response of a turn that made any; CostUSD is
	// their price when the agent's price table knows the model.
	Usage   *Usage   `json:"usage,omitempty"`
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// ApprovalRequired asks the user to approve an action on a resource; the
// answer is an ApprovalResponse on ApprovalResponseTopic(RequestID).
type ApprovalRequired struct {
	RequestID string `json:"request_id"`
	Action    string `json:"action"`
	Resource  string `json:"resource"`
	Reason    string `json:"reason"`
	// CallID is the tool call the question holds up, when there is one:
	// the orchestrator stops that turn's tool-phase clock while it waits.
	CallID string `json:"call_id,omitempty"`
	// Unconfined marks a question about running a process outside the
	// sandbox (DESIGN §11): a frontend never answers it from --yes or a
	// standing allowance, and the kernel takes any approval of it for this
	// once.
	Unconfined bool `json:"unconfined,omitempty"`
}

// The decisions an ApprovalResponse carries.
const (
	DecisionApprove        = "approve"
	DecisionApproveSession = "approve_session"
	DecisionApproveAlways  = "approve_always"
	DecisionDeny           = "deny"
)

// ApprovalResponse answers an ApprovalRequired (or a GrantRequired).
type ApprovalResponse struct {
	RequestID string  `json:"request_id"`
	Decision  string  `json:"decision"`
	Reason    *string `json:"reason,omitempty"`
}

// GrantRequired asks the user to grant a capsule access for a principal.
// Only the kernel may publish it; the answer goes to
// ApprovalResponseTopic(RequestID).
type GrantRequired struct {
	RequestID string `json:"request_id"`
	Principal string `json:"principal"`
	CapsuleID string `json:"capsule_id"`
}

// OnboardingRequired asks the user for the values a capsule needs before it
// can run (API keys, endpoints).
type OnboardingRequired struct {
	CapsuleID string            `json:"capsule_id"`
	Fields    []OnboardingField `json:"fields"`
}

// SelectionRequired asks the user to pick one option; the choice is
// published on CallbackTopic.
type SelectionRequired struct {
	RequestID     string            `json:"request_id"`
	Title         string            `json:"title"`
	Options       []SelectionOption `json:"options"`
	CallbackTopic string            `json:"callback_topic"`
}

// SelectionOption is one choice of a SelectionRequired.
type SelectionOption struct {
	ID          string  `json:"id"`
	Label       string  `json:"label"`
	Description *string `json:"description,omitempty"`
}

// ElicitRequest asks the user for one value on a capsule's behalf; the
// answer is an ElicitResponse on ElicitResponseTopic(RequestID).
type ElicitRequest struct {
	RequestID string          `json:"request_id"`
	CapsuleID string          `json:"capsule_id"`
	Field     OnboardingField `json:"field"`
	// CallID is the tool call the question holds up, when there is one
	// (as ApprovalRequired.CallID); upstream has no such field.
	CallID string `json:"call_id,omitempty"`
	// Form, when set, makes the question a form of several typed fields
	// (MCP's form elicitation), answered by ElicitResponse.Content; Field
	// then names the question as a whole (its key and message) for a
	// frontend that shows only one field. Upstream has no such field.
	Form *ElicitForm `json:"form,omitempty"`
}

// ElicitForm is a form question's fields, as MCP's requested schema.
type ElicitForm struct {
	Schema ElicitSchema `json:"schema"`
}

// ElicitResponse answers an ElicitRequest. Neither Value, Values nor
// Content set means the user cancelled; an empty Value is an answer.
type ElicitResponse struct {
	RequestID string   `json:"request_id"`
	Value     *string  `json:"value,omitempty"`
	Values    []string `json:"values,omitzero"`
	// Content answers a form (ElicitRequest.Form): a JSON object of the
	// values given, by field (ElicitSchema.CheckContent).
	Content json.RawMessage `json:"content,omitempty"`
}

// Connect announces a client connection.
type Connect struct{}

// Disconnect announces that a client went away.
type Disconnect struct {
	Reason *string `json:"reason,omitempty"`
}

// Custom carries any JSON a capsule publishes that is not a known variant.
// Handlers receive Data alone.
type Custom struct {
	Data json.RawMessage `json:"data"`
}

// Unknown is what strict decoding (ParsePayload) gives for an unrecognised
// tag. It encodes as {"type":"unknown"}; DecodePayload never produces it.
type Unknown struct{}

// OnboardingField describes one value to ask the user for.
type OnboardingField struct {
	Key         string    `json:"key"`
	Prompt      string    `json:"prompt"`
	Description *string   `json:"description,omitempty"`
	FieldType   FieldType `json:"field_type"`
	Default     *string   `json:"default,omitempty"`
	Placeholder *string   `json:"placeholder,omitempty"`
}

// FieldKind is the kind of an onboarding field.
type FieldKind string

// The field kinds, spelled as on the wire.
const (
	FieldText   FieldKind = "Text"
	FieldSecret FieldKind = "Secret"
	FieldEnum   FieldKind = "Enum"
	FieldArray  FieldKind = "Array"
)

// FieldType is an onboarding field's type. On the wire it is "Text",
// "Secret", "Array", or {"Enum":[options...]}.
type FieldType struct {
	Kind FieldKind
	// Options are the choices of an Enum field.
	Options []string
}

// MarshalJSON writes the externally tagged form.
func (f FieldType) MarshalJSON() ([]byte, error) {
	switch f.Kind {
	case FieldText, FieldSecret, FieldArray:
		return json.Marshal(string(f.Kind))
	case FieldEnum:
		return marshalPlain(map[string][]string{string(FieldEnum): emptyIfNil(f.Options)})
	default:
		return nil, fmt.Errorf("field type: unknown kind %q", f.Kind)
	}
}

// UnmarshalJSON reads the externally tagged form.
func (f *FieldType) UnmarshalJSON(data []byte) error {
	var name string
	if json.Unmarshal(data, &name) == nil {
		switch FieldKind(name) {
		case FieldText, FieldSecret, FieldArray:
			*f = FieldType{Kind: FieldKind(name)}
			return nil
		}
		return fmt.Errorf("field type: unknown kind %q", name)
	}
	var enum struct {
		Enum *[]string `json:"Enum"`
	}
	if err := decodeObject(data, &enum, string(FieldEnum)); err != nil || enum.Enum == nil {
		return fmt.Errorf("field type: want \"Text\", \"Secret\", \"Array\" or {\"Enum\":[...]}: %s", bytes.TrimSpace(data))
	}
	*f = FieldType{Kind: FieldEnum, Options: *enum.Enum}
	return nil
}

func (RawJSON) Type() Type            { return TypeRawJSON }
func (UserInput) Type() Type          { return TypeUserInput }
func (AgentResponse) Type() Type      { return TypeAgentResponse }
func (ApprovalRequired) Type() Type   { return TypeApprovalRequired }
func (ApprovalResponse) Type() Type   { return TypeApprovalResponse }
func (GrantRequired) Type() Type      { return TypeGrantRequired }
func (OnboardingRequired) Type() Type { return TypeOnboardingRequired }
func (SelectionRequired) Type() Type  { return TypeSelectionRequired }
func (ElicitRequest) Type() Type      { return TypeElicitRequest }
func (ElicitResponse) Type() Type     { return TypeElicitResponse }
func (Connect) Type() Type            { return TypeConnect }
func (Disconnect) Type() Type         { return TypeDisconnect }
func (Custom) Type() Type             { return TypeCustom }
func (Unknown) Type() Type            { return TypeUnknown }

func (RawJSON) isPayload()            {}
func (UserInput) isPayload()          {}
func (AgentResponse) isPayload()      {}
func (ApprovalRequired) isPayload()   {}
func (ApprovalResponse) isPayload()   {}
func (GrantRequired) isPayload()      {}
func (OnboardingRequired) isPayload() {}
func (SelectionRequired) isPayload()  {}
func (ElicitRequest) isPayload()      {}
func (ElicitResponse) isPayload()     {}
func (Connect) isPayload()            {}
func (Disconnect) isPayload()         {}
func (Custom) isPayload()             {}
func (Unknown) isPayload()            {}
