package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/jsonscan"
	"github.com/astrid-go/astrid/ipc"
)

type tool struct {
	name        string
	description string
	mutable     bool
	schema      json.RawMessage
	required    []string
	failure     string // the is_error text of a call that never answered
	run         func(c *Call, args json.RawMessage) (Result, error)
}

// Result is a tool's answer with typed content (images, audio, embedded
// resources): Text is what the model reads (empty: the parts as
// ipc.ToolPartsText gives them, a placeholder naming each non-text part);
// Parts travel beside it for a frontend that passes typed content on, such
// as astrid mcp serve. Parts are checked by ipc.ValidateToolParts; a tool
// whose parts are refused answers an error saying why.
type Result struct {
	Text  string
	Parts []ipc.ToolPart
}

// ToolOption adjusts a tool's registration.
type ToolOption func(*tool)

// Mutable marks a tool that changes state; the flag travels in its describe
// entry so that an approval layer can key on it (the kernel never does).
func Mutable() ToolOption { return func(t *tool) { t.mutable = true } }

// Tool registers the tool name on c. fn receives the decoded arguments; its
// string is the result content, its error becomes an is_error result carrying
// the error's text. The arguments' JSON schema is generated from A (see
// SchemaOf). Registering binds the interceptor tool_execute_<name> on
// tool.v1.execute.<name> and, once per capsule, tool_describe on
// tool.v1.request.describe.
func Tool[A any](c *Capsule, name, description string, fn func(c *Call, args A) (string, error), opts ...ToolOption) {
	ToolWithParts(c, name, description, func(call *Call, args A) (Result, error) {
		text, err := fn(call, args)
		return Result{Text: text}, err
	}, opts...)
}

// ToolWithParts is Tool for a tool whose result may carry typed content
// parts (see Result).
func ToolWithParts[A any](c *Capsule, name, description string, fn func(c *Call, args A) (Result, error), opts ...ToolOption) {
	if err := ipc.ValidateToolName(name); err != nil {
		panic(fmt.Sprintf("sdk: tool %q: %v", name, err))
	}
	schema, required, err := schemaOf[A]()
	if err != nil {
		panic(fmt.Sprintf("sdk: tool %q: %v", name, err))
	}
	t := &tool{name: name, description: description, required: required,
		failure: fmt.Sprintf("tool %s failed: the capsule trapped, timed out or was cancelled before answering", name)}
	for _, o := range opts {
		o(t)
	}
	t.schema = schema
	flat := newFlatArgs(reflect.TypeFor[A]())
	t.run = func(call *Call, raw json.RawMessage) (Result, error) {
		var args A
		if err := decodeArgsFlat(flat, raw, t.required, &args); err != nil {
			return Result{}, fmt.Errorf("failed to parse tool arguments: %w", err)
		}
		return fn(call, args)
	}
	c.tools = append(c.tools, t)
	c.Handle(ipc.ToolExecuteTopic(name), toolHandlerPrefix+name, t.handle)
	if !c.HasHandler(DescribeHandler) {
		c.Handle(ipc.ToolRequestDescribeTopic, DescribeHandler, c.describe)
	}
}

// decodeArgsFlat is decodeArgs through flat when flat takes raw (a nil
// flat takes nothing).
func decodeArgsFlat[A any](flat *flatArgs, raw json.RawMessage, required []string, v *A) error {
	if flat != nil {
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) > 0 && trimmed[0] == '{' {
			if ok, err := flat.decode(trimmed, reflect.ValueOf(v).Elem(), required); ok {
				return err
			}
		}
	}
	return decodeArgs(raw, required, v)
}

// decodeArgs unmarshals arguments with encoding/json, refusing what it
// would quietly turn into something else: a missing required property
// (encoding/json would leave a zero value and the tool would act on it) and
// an unpaired UTF-16 surrogate escape (encoding/json would decode
// "\ud800.txt" to "\uFFFD.txt", another file that may exist).
func decodeArgs(raw json.RawMessage, required []string, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if esc, at, found := jsonscan.LoneSurrogate(raw); found {
		return fmt.Errorf("unpaired UTF-16 surrogate escape %s at byte %d: it names no character (encoding/json would read it as U+FFFD)", esc, at)
	}
	if len(required) > 0 {
		switch missing, isObject := jsonscan.MissingKey(raw, required...); {
		case isObject && missing != "":
			return fmt.Errorf("missing field %q", missing)
		case isObject:
			return json.Unmarshal(raw, v)
		}
		// Not an object: let encoding/json say what it is.
		var present map[string]json.RawMessage
		if err := json.Unmarshal(raw, &present); err != nil {
			return err
		}
		for _, k := range required {
			if _, ok := present[k]; !ok {
				return fmt.Errorf("missing field %q", k)
			}
		}
	}
	return json.Unmarshal(raw, v)
}

func (t *tool) handle(c *Call) error {
	var req ipc.ToolExecuteRequest
	// Straight to the hand-written decoder: json.Unmarshal would first
	// validate bytes the kernel has already validated.
	if err := req.UnmarshalJSON(c.Payload()); err != nil {
		return fmt.Errorf("tool %s: payload is not a tool_execute_request: %w", t.name, err)
	}
	resultTopic := ipc.ToolResultTopic(t.name)
	// Registered first, so that a trap or timeout below still answers. A
	// refused registration does not stop the call (its own result still
	// answers), but it is logged: the caller may otherwise wait its whole
	// timeout on a trap, or be unable to cancel.
	if err := c.SetFailureReply(resultTopic, resultPayload(req.CallID, t.failure, true)); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("tool %s: call %q: failure reply not registered: %v", t.name, req.CallID, err))
	}
	if req.CallID != "" {
		if err := c.SetCancelKey(req.CallID); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("tool %s: call %q: cancel key not registered: %v", t.name, req.CallID, err))
		}
	}
	out, err := t.run(c, req.Arguments)
	if err == nil && len(out.Parts) > 0 {
		if verr := ipc.ValidateToolParts(out.Parts); verr != nil {
			err = fmt.Errorf("tool %s: its result was refused: %w", t.name, verr)
		} else if out.Text == "" {
			out.Text = ipc.ToolPartsText(out.Parts)
		}
	}
	res := ipc.ToolCallResult{CallID: req.CallID, Content: out.Text, Parts: out.Parts}
	if err != nil {
		res = ipc.ToolCallError(req.CallID, err.Error())
	}
	payload, _ := ipc.ToolExecuteResult{CallID: req.CallID, Result: res}.MarshalJSON()
	if err := c.Publish(resultTopic, payload); err != nil {
		return fmt.Errorf("tool %s: publish result: %w", t.name, err)
	}
	return nil
}

// resultPayload is the tool_execute_result of a call. (ToolExecuteResult's
// MarshalJSON never fails: it has no field that can hold invalid JSON.)
func resultPayload(callID, content string, isError bool) []byte {
	out, _ := ipc.ToolExecuteResult{
		CallID: callID,
		Result: ipc.ToolCallResult{CallID: callID, Content: content, IsError: isError},
	}.MarshalJSON()
	return out
}

// Describe returns the describe answer for c's tools, in registration order.
func (c *Capsule) Describe() ipc.ToolDescribeResponse {
	resp := ipc.ToolDescribeResponse{Description: c.description, Tools: make([]ipc.ToolDescriptor, 0, len(c.tools))}
	for _, t := range c.tools {
		resp.Tools = append(resp.Tools, ipc.ToolDescriptor{Name: t.name, Description: t.description, InputSchema: t.schema, Mutable: t.mutable})
	}
	return resp
}

func (c *Capsule) describe(call *Call) error {
	return call.PublishJSON(ipc.ToolDescribeResponseTopic(call.CapsuleID()), c.Describe())
}
