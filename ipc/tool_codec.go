package ipc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// The tool payloads travel on every hop of every tool call, so they have a
// hand-written codec beside the generic one. Its output is byte for byte what
// marshalTagged gives (TestToolCodecMatchesGeneric holds it to that), and its
// decoders take only the plain shape they were written for; anything else
// (escaped or case-variant keys, escaped \u sequences, nulls, wrong types)
// goes to the generic decoder, which has the final word on errors.

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Plain bytes are copied as they are, a run at a time.
		if i += jsonscan.PlainPrefix(s[i:]); i == len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

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
	if r.IsError {
		return append(dst, `,"is_error":true}`...)
	}
	return append(dst, `,"is_error":false}`...)
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

// foreignKey reports whether a member is one the plain decoders may skip: an
// unescaped ASCII key that no field name matches, even case-insensitively
// (encoding/json matches keys that way).
func foreignKey(m jsonscan.Member, fields ...string) bool {
	if m.Escaped {
		return false
	}
	k := m.QuotedKey[1 : len(m.QuotedKey)-1]
	for _, c := range k {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, f := range fields {
		if len(f) == len(k) && equalFoldASCII(k, f) {
			return false
		}
	}
	return true
}

func equalFoldASCII(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// decodePlainRequest decodes the plain shape of a tool_execute_request.
func decodePlainRequest(data []byte) (p ToolExecuteRequest, ok bool) {
	var haveID, haveName, haveArgs bool
	c := payloadCopy{src: data}
	ok = jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		switch {
		case m.Is("call_id"):
			p.CallID, haveID = c.str(m.ValStart, m.End)
			return haveID
		case m.Is("tool_name"):
			p.ToolName, haveName = c.str(m.ValStart, m.End)
			return haveName
		case m.Is("arguments"):
			p.Arguments, haveArgs = c.raw(m.ValStart, m.End), true
			return true
		case m.Is("type"):
			return true
		}
		return foreignKey(m, "call_id", "tool_name", "arguments")
	})
	return p, ok && haveID && haveName && haveArgs
}

// decodePlainCallResult decodes the plain shape of a tool call result.
func decodePlainCallResult(data []byte) (r ToolCallResult, ok bool) {
	c := payloadCopy{src: data}
	return decodePlainCallResultIn(&c, 0, len(data))
}

// decodePlainCallResultIn decodes c.src[start:end], the plain shape of a
// tool call result, carving its strings out of c.
func decodePlainCallResultIn(c *payloadCopy, start, end int) (r ToolCallResult, ok bool) {
	var haveID, haveContent bool
	data := c.src[start:end]
	ok = jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		val := data[m.ValStart:m.End]
		switch {
		case m.Is("call_id"):
			r.CallID, haveID = c.str(start+m.ValStart, start+m.End)
			return haveID
		case m.Is("content"):
			r.Content, haveContent = c.str(start+m.ValStart, start+m.End)
			return haveContent
		case m.Is("is_error"):
			switch string(val) {
			case "true":
				r.IsError = true
			case "false":
				r.IsError = false
			default:
				return false
			}
			return true
		}
		return foreignKey(m, "call_id", "content", "is_error")
	})
	return r, ok && haveID && haveContent
}

// decodePlainResult decodes the plain shape of a tool_execute_result.
func decodePlainResult(data []byte) (p ToolExecuteResult, ok bool) {
	var haveID, haveResult bool
	c := payloadCopy{src: data}
	ok = jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		switch {
		case m.Is("call_id"):
			p.CallID, haveID = c.str(m.ValStart, m.End)
			return haveID
		case m.Is("result"):
			p.Result, haveResult = decodePlainCallResultIn(&c, m.ValStart, m.End)
			return haveResult
		case m.Is("type"):
			return true
		}
		return foreignKey(m, "call_id", "result")
	})
	return p, ok && haveID && haveResult
}
