package ipc

import (
	"bytes"
	"encoding/json"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// The tool payloads travel on every hop of every tool call, so they have a
// hand-written codec beside the generic one. Its output is byte for byte what
// marshalTagged gives (TestToolCodecMatchesGeneric holds it to that), and its
// decoders take only that output's form back; anything else (other key
// orders, spaces, \u escapes, nulls, wrong types) goes to the generic
// decoder, which has the final word on errors. Taking one exact form makes
// decoding a run of prefix comparisons, which matters most in a wasm guest,
// where every branching function is an exit to the host (docs/rationale/tools.md).

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off.
func appendString(dst []byte, s string) []byte { return jsonscan.AppendString(dst, s, false) }

// appendRaw appends a raw JSON value compacted, as encoding/json encodes a
// json.RawMessage (nil is null; anything invalid is an error).
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func appendToolCallResult(dst []byte, r ToolCallResult) []byte {
	dst = append(dst, `{"call_id":`...)
	dst = appendString(dst, r.CallID)
	dst = append(dst, `,"content":`...)
	dst = appendString(dst, r.Content)
	if len(r.Parts) > 0 {
		return appendParts(dst, r)
	}
	if r.IsError {
		return append(dst, `,"is_error":true}`...)
	}
	return append(dst, `,"is_error":false}`...)
}

// appendParts ends a result that has content parts, as the generic
// encoder writes it (parts are rare: they take its path).
func appendParts(dst []byte, r ToolCallResult) []byte {
	if r.IsError {
		dst = append(dst, `,"is_error":true,"parts":`...)
	} else {
		dst = append(dst, `,"is_error":false,"parts":`...)
	}
	// Cannot fail: a ContentPart holds only strings and bytes.
	b, _ := marshalPlain(r.Parts)
	dst = append(dst, b...)
	return append(dst, '}')
}

func (p ToolExecuteRequest) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":"tool_execute_request","call_id":`...)
	dst = appendString(dst, p.CallID)
	dst = append(dst, `,"tool_name":`...)
	dst = appendString(dst, p.ToolName)
	dst = append(dst, `,"arguments":`...)
	dst, err := appendRaw(dst, p.Arguments)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

func (p ToolExecuteResult) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"tool_execute_result","call_id":`...)
	dst = appendString(dst, p.CallID)
	dst = append(dst, `,"result":`...)
	dst = appendToolCallResult(dst, p.Result)
	return append(dst, '}')
}

// payloadCopy carves the strings a payload decodes to out of one copy of
// the payload as a string, made when the first is needed: one allocation
// per decoded payload instead of one per field. (The copy is needed at all
// because src may be a buffer its owner reuses, such as a guest's.) A
// decoded value keeps the whole copy alive, which for a tool payload is
// little more than the value itself.
type payloadCopy struct {
	src    []byte
	view   string // src as a string, once copied
	copied bool
}

func (c *payloadCopy) copy() {
	if !c.copied {
		c.view, c.copied = string(c.src), true
	}
}

// str decodes the string literal src[start:end] (see plainString).
func (c *payloadCopy) str(start, end int) (string, bool) {
	lit := c.src[start:end]
	if !jsonscan.PlainLiteral(lit) {
		return jsonscan.DecodeString(lit) // escapes: decoded into a string of its own
	}
	c.copy()
	return c.view[start+1 : end-1], true
}

// raw returns a copy of src[start:end] of its own: the caller may write
// to a RawMessage, and the strings' copy must never change.
func (c *payloadCopy) raw(start, end int) json.RawMessage {
	return bytes.Clone(c.src[start:end])
}

// The decoders below take exactly the form appendJSON writes (keys in
// order, no space, every string plain or with short escapes only), which is
// what every sdk capsule and the router publish; anything else goes to the
// generic decoder. They check structure, not literals: like every decoder
// here they assume valid JSON (the kernel validates every payload at
// publish), and FuzzToolCodec holds them to the generic decoder's answers.

// cutLiteral cuts the string literal at the start of b and decodes it
// through c (b starts at src[at]).
func (c *payloadCopy) cutLiteral(b []byte, at int) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", b, false
	}
	end, _ := jsonscan.SkipString(b, 0)
	if end < 0 {
		return "", b, false
	}
	s, ok = c.str(at, at+end)
	return s, b[end:], ok
}

// decodePlainRequest decodes a tool_execute_request in the codec's form.
func decodePlainRequest(data []byte) (p ToolExecuteRequest, ok bool) {
	c := payloadCopy{src: data}
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"tool_execute_request","call_id":`))
	if !ok {
		return p, false
	}
	if p.CallID, rest, ok = c.cutLiteral(rest, len(data)-len(rest)); !ok {
		return p, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"tool_name":`)); !ok {
		return p, false
	}
	if p.ToolName, rest, ok = c.cutLiteral(rest, len(data)-len(rest)); !ok {
		return p, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"arguments":`)); !ok {
		return p, false
	}
	end := jsonscan.SkipValue(rest, 0)
	if end < 0 || string(rest[end:]) != "}" {
		return p, false
	}
	at := len(data) - len(rest)
	p.Arguments = c.raw(at, at+end)
	return p, true
}

// decodePlainCallResult decodes a tool call result in the codec's form.
func decodePlainCallResult(data []byte) (r ToolCallResult, ok bool) {
	c := payloadCopy{src: data}
	r, rest, ok := decodePlainCallResultIn(&c, data)
	return r, ok && len(rest) == 0
}

// decodePlainCallResultIn decodes the call result at the start of b, a
// suffix of c.src, carving its strings out of c; rest is what follows it.
func decodePlainCallResultIn(c *payloadCopy, b []byte) (r ToolCallResult, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(b, []byte(`{"call_id":`))
	if !ok {
		return r, b, false
	}
	if r.CallID, rest, ok = c.cutLiteral(rest, len(c.src)-len(rest)); !ok {
		return r, b, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":`)); !ok {
		return r, b, false
	}
	if r.Content, rest, ok = c.cutLiteral(rest, len(c.src)-len(rest)); !ok {
		return r, b, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"is_error":false}`)); ok {
		return r, rest, true
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"is_error":true}`)); ok {
		r.IsError = true
		return r, rest, true
	}
	return r, b, false
}

// decodePlainResult decodes a tool_execute_result in the codec's form.
func decodePlainResult(data []byte) (p ToolExecuteResult, ok bool) {
	c := payloadCopy{src: data}
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"tool_execute_result","call_id":`))
	if !ok {
		return p, false
	}
	if p.CallID, rest, ok = c.cutLiteral(rest, len(data)-len(rest)); !ok {
		return p, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"result":`)); !ok {
		return p, false
	}
	if p.Result, rest, ok = decodePlainCallResultIn(&c, rest); !ok {
		return p, false
	}
	return p, string(rest) == "}"
}

// ToolResultCallIDs reads the outer and inner call ids of a
// tool_execute_result in the form this codec writes, without decoding its
// content: what a relay needs to route a result it forwards unchanged (the
// router, for results of any size). ok is false for any other form; decode
// those with UnmarshalJSON. Like the decoders, it assumes valid JSON.
func ToolResultCallIDs(data []byte) (callID, innerID string, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"tool_execute_result","call_id":`))
	if !ok {
		return "", "", false
	}
	if callID, rest, ok = cutString(rest); !ok {
		return "", "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"result":{"call_id":`)); !ok {
		return "", "", false
	}
	if innerID, rest, ok = cutString(rest); !ok {
		return "", "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":`)); !ok || len(rest) == 0 || rest[0] != '"' {
		return "", "", false
	}
	end, _ := jsonscan.SkipString(rest, 0)
	if end < 0 {
		return "", "", false
	}
	// A result with content parts is not this form: the relay decodes it
	// (the parts' JSON decides whether it decodes at all).
	switch string(rest[end:]) {
	case `,"is_error":true}}`, `,"is_error":false}}`:
		return callID, innerID, true
	}
	return "", "", false
}

// cutString cuts and decodes the string literal at the start of b into a
// string of its own (see jsonscan.DecodeString).
func cutString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", b, false
	}
	end, _ := jsonscan.SkipString(b, 0)
	if end < 0 {
		return "", b, false
	}
	s, ok = jsonscan.DecodeString(b[:end])
	return s, b[end:], ok
}
