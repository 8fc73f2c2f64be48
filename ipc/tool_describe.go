package ipc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// The describe fan-out: the prompt builder publishes {} on
// ToolRequestDescribeTopic; each tool capsule answers with a
// ToolDescribeResponse on ToolDescribeResponseTopic(its id). Both travel as
// untagged JSON (custom payloads), not as typed variants.

// ToolDescriptor is one tool as its capsule describes it.
//
// Upstream puts the mutable flag inside input_schema as an extra top-level
// schema keyword, which then reaches the model's API. This package writes it
// beside the schema instead, and reads either spelling: the descriptor's own
// "mutable" when present, else input_schema's.
type ToolDescriptor struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments; nil encodes as an
	// object schema with no properties.
	InputSchema json.RawMessage `json:"input_schema"`
	// Mutable marks a tool that changes state, so that approval layers can
	// ask first. It has no effect on routing.
	Mutable bool `json:"mutable"`
	// AsksApproval marks a tool that asks the person itself, per call,
	// through the host approval call (the shell asks for each command),
	// so that an approval layer does not ask a second time for the tool
	// as a whole. Only the kernel's stamp from the providing capsule's
	// manifest ([[tool]] asks_approval) sets it on the bus: whatever a
	// capsule's code writes here is overwritten.
	AsksApproval bool `json:"asks_approval,omitempty"`
}

// ToolDescribeResponse is one capsule's answer to a describe request.
type ToolDescribeResponse struct {
	Tools []ToolDescriptor `json:"tools"`
	// Description describes the capsule as a whole.
	Description string `json:"description,omitempty"`
	// ScopeBound says the capsule serves one request scope only (a
	// session's own MCP servers): its answer differs per scope, so a
	// catalogue it took part in must not be cached for other scopes.
	ScopeBound bool `json:"scope_bound,omitempty"`
}

// emptyObjectSchema is the schema of a tool without arguments; providers
// require a properties object.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// MarshalJSON writes the descriptor with a schema even when none was set.
func (d ToolDescriptor) MarshalJSON() ([]byte, error) {
	type wire ToolDescriptor
	if len(d.InputSchema) == 0 {
		d.InputSchema = emptyObjectSchema
	}
	return marshalPlain(wire(d))
}

// UnmarshalJSON reads a descriptor, taking the mutable flag from the
// descriptor or, failing that, from its input_schema (upstream's place).
func (d *ToolDescriptor) UnmarshalJSON(data []byte) error {
	type wire ToolDescriptor
	var w wire
	if err := decodeObject(data, &w); err != nil {
		return fmt.Errorf("tool descriptor: %w", err)
	}
	hasMutable := false
	jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		hasMutable = hasMutable || m.Is("mutable")
		return true
	})
	if !hasMutable && len(w.InputSchema) > 0 {
		var schema struct {
			Mutable bool `json:"mutable"`
		}
		// A schema that is not an object simply has no flag.
		_ = json.Unmarshal(w.InputSchema, &schema)
		w.Mutable = schema.Mutable
	}
	w.InputSchema = nullToNil(w.InputSchema)
	*d = ToolDescriptor(w)
	return nil
}

// MarshalJSON writes nil Tools as [].
func (r ToolDescribeResponse) MarshalJSON() ([]byte, error) {
	type wire ToolDescribeResponse
	r.Tools = emptyIfNil(r.Tools)
	return marshalPlain(wire(r))
}

// ErrNoTools is returned by ParseToolDescribeResponse for a payload that
// holds no "tools" list.
var ErrNoTools = errors.New(`no "tools" list`)

// ParseToolDescribeResponse reads a describe response in any of the shapes
// peers send: the bare {"tools":[...]} (canonical), the older
// {"data":{"tools":[...]}}, or either one wrapped as a tagged custom payload.
// Entries are kept as sent, including ones without a name; deciding what to
// offer the model is the caller's business.
func ParseToolDescribeResponse(raw json.RawMessage) (ToolDescribeResponse, error) {
	body := GuestBytes(raw)
	var hasTools bool
	var data json.RawMessage
	jsonscan.ScanObject(body, func(m jsonscan.Member) bool {
		switch {
		case m.Is("tools"):
			hasTools = true
		case m.Is("data"):
			data = json.RawMessage(body[m.ValStart:m.End])
		}
		return true
	})
	if !hasTools && data != nil {
		body = data
	}
	if err := requireKeys(body, false, "tools"); err != nil {
		if errors.Is(err, errNotObject) {
			return ToolDescribeResponse{}, fmt.Errorf("tool describe response: %w", err)
		}
		return ToolDescribeResponse{}, fmt.Errorf("tool describe response: %w", ErrNoTools)
	}
	var resp ToolDescribeResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return ToolDescribeResponse{}, fmt.Errorf("tool describe response: %w", err)
	}
	return resp, nil
}
