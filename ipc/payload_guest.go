package ipc

import (
	"bytes"
	"encoding/json"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// PayloadType returns the payload's `type` tag without decoding it: the value
// of its top-level "type" member (the last one, if repeated, as JSON decoders
// keep), or "" when raw is not an object or has no string tag. The tag is not
// checked against the known set; see IsKnownTag.
func PayloadType(raw json.RawMessage) Type {
	tag, _ := sniffType(raw)
	return tag
}

// sniffType is PayloadType that also reports whether raw was an object.
func sniffType(raw []byte) (Type, bool) {
	var tag Type
	ok := jsonscan.ScanObject(raw, func(m jsonscan.Member) bool {
		if m.Is("type") {
			tag = stringValue(raw[m.ValStart:m.End])
		}
		return true
	})
	if !ok {
		return "", false
	}
	return tag, true
}

// stringValue decodes a JSON string literal, or "" for anything else. A
// known tag comes back as this package's constant, so sniffing a typed
// payload allocates nothing.
func stringValue(lit []byte) Type {
	if len(lit) < 2 || lit[0] != '"' {
		return ""
	}
	body := lit[1 : len(lit)-1]
	for _, c := range body {
		if c == '\\' {
			var s string
			if json.Unmarshal(lit, &s) != nil {
				return ""
			}
			return Type(s)
		}
	}
	if tag, ok := knownTags[string(body)]; ok {
		return tag
	}
	return Type(body)
}

// GuestBytes returns the bytes a handler receives for a payload (upstream's
// to_guest_bytes): for custom, the inner `data` value; for raw_json, the
// object without its `type` member; for every other payload, including
// untagged and unknown ones (which decode as custom holding the whole value),
// raw itself.
//
// Unlike upstream, typed payloads are not re-encoded, so extra keys the
// publisher sent survive and absent defaults are not filled in; handlers
// decoding into this package's types get the same values either way. The
// result aliases raw except for raw_json, which needs a new slice.
//
// raw must be valid JSON (dispatch checks payloads at publish); GuestBytes
// does not validate it again, and on malformed input it returns some part of
// raw without panicking.
func GuestBytes(raw json.RawMessage) json.RawMessage {
	// Only a "type" of custom or raw_json changes the bytes, and neither
	// value can be written without its letters or a \u escape (the short
	// escapes make no letter): without those, skip the scan (four per tool
	// call, ≈ 0.3 µs each).
	if !bytes.Contains(raw, custom) && !bytes.Contains(raw, rawJSON) && !bytes.Contains(raw, unicodeEscape) {
		return raw
	}
	return guestBytesScan(raw)
}

var (
	custom        = []byte(TypeCustom)
	rawJSON       = []byte(TypeRawJSON)
	unicodeEscape = []byte(`\u`)
)

// guestBytesScan is GuestBytes by scanning raw's members.
func guestBytesScan(raw json.RawMessage) json.RawMessage {
	var (
		tag                Type
		dataStart, dataEnd = -1, -1
	)
	ok := jsonscan.ScanObject(raw, func(m jsonscan.Member) bool {
		switch {
		case m.Is("type"):
			tag = stringValue(raw[m.ValStart:m.End])
		case m.Is("data"):
			dataStart, dataEnd = m.ValStart, m.End
		}
		return true
	})
	if !ok {
		return raw
	}
	switch tag {
	case TypeCustom:
		if dataStart < 0 {
			// {"type":"custom"} without data fails to decode as Custom,
			// so upstream keeps the whole value as custom data.
			return raw
		}
		return raw[dataStart:dataEnd]
	case TypeRawJSON:
		return withoutKey(raw, "type")
	default:
		return raw
	}
}

// withoutKey re-assembles the object raw without its members named key,
// copying every other member's text unchanged.
func withoutKey(raw []byte, key string) json.RawMessage {
	out := make([]byte, 0, len(raw))
	out = append(out, '{')
	jsonscan.ScanObject(raw, func(m jsonscan.Member) bool {
		if m.Is(key) {
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, raw[m.Start:m.End]...)
		return true
	})
	return append(out, '}')
}
