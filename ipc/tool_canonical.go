package ipc

import "bytes"

// CanonicalToolResult reports whether data, which must be valid JSON (the
// kernel validates every payload at publish), is a tool_execute_result in
// exactly the form this package writes it: the keys in their order, no
// space, the inner result's call id equal to the outer one, both ids plain
// (no escape). It returns that call id. Such a payload re-encodes to itself
// (up to how its content's escapes are spelled, which decoders do not
// see), so a relay that would decode and re-encode it can forward it as it
// is, without copying its content twice: the router does, for results of
// any size.
func CanonicalToolResult(data []byte) (callID string, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"tool_execute_result","call_id":`))
	if !ok {
		return "", false
	}
	outer, rest, ok := cutPlainLiteral(rest)
	if !ok {
		return "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"result":{"call_id":`)); !ok {
		return "", false
	}
	inner, rest, ok := cutPlainLiteral(rest)
	if !ok || !bytes.Equal(inner, outer) {
		return "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":`)); !ok || len(rest) == 0 || rest[0] != '"' {
		return "", false
	}
	end, _ := skipString(rest, 0)
	if end < 0 {
		return "", false
	}
	switch string(rest[end:]) {
	case `,"is_error":true}}`, `,"is_error":false}}`:
		return string(outer[1 : len(outer)-1]), true
	}
	return "", false
}

// cutPlainLiteral cuts the string literal at the start of b when its body
// is its value (plainLiteral), returning the literal with its quotes.
func cutPlainLiteral(b []byte) (lit, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	end, escaped := skipString(b, 0)
	if end < 0 || escaped || !plainLiteral(b[:end]) {
		return nil, b, false
	}
	return b[:end], b[end:], true
}

// CanonicalToolRequest reports whether data, which must be valid JSON, is a
// tool_execute_request in the form this package writes it (keys in order,
// no space around them, plain call id and tool name), and returns those
// two. Its arguments are forwarded as they are spelled, which decoders do
// not see; the codec would only compact them.
func CanonicalToolRequest(data []byte) (callID, toolName string, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"tool_execute_request","call_id":`))
	if !ok {
		return "", "", false
	}
	id, rest, ok := cutPlainLiteral(rest)
	if !ok {
		return "", "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"tool_name":`)); !ok {
		return "", "", false
	}
	name, rest, ok := cutPlainLiteral(rest)
	if !ok {
		return "", "", false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"arguments":`)); !ok {
		return "", "", false
	}
	if end := skipValue(rest, 0); end < 0 || string(rest[end:]) != "}" {
		return "", "", false
	}
	return string(id[1 : len(id)-1]), string(name[1 : len(name)-1]), true
}
