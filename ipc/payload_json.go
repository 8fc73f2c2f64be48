package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// errNotObject is returned when a struct-shaped value is not a JSON object
// (serde refuses null, arrays and scalars where it expects a struct; Go's
// decoder would silently accept null).
var errNotObject = errors.New("not a JSON object")

// marshalPlain encodes v the way serde_json does as far as encoding/json
// allows: compact, without escaping <, > and & as \u003c etc.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// marshalTagged encodes the struct v and puts `"type":"<tag>"` first, as
// serde's internally tagged enums do.
func marshalTagged(tag Type, v any) ([]byte, error) {
	body, err := marshalPlain(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tag, err)
	}
	return prependTag(tag, body)
}

// prependTag splices the type member into the encoded object body.
func prependTag(tag Type, body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("%s: %w", tag, errNotObject)
	}
	out := make([]byte, 0, len(body)+len(tag)+11)
	out = append(out, `{"type":"`...)
	out = append(out, tag...)
	out = append(out, '"')
	rest := bytes.TrimLeft(body[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// decodeObject decodes the JSON object data into v after checking that every
// required key is present and not null: Go's decoder treats a missing field
// as its zero value, serde refuses it, and this package follows serde so that
// a known tag with missing fields falls back to custom as upstream does.
func decodeObject(data []byte, v any, required ...string) error {
	if err := requireKeys(data, false, required...); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// requireKeys checks that data is an object holding every key; null counts
// as missing unless nullOK (fields typed as any JSON value accept null).
func requireKeys(data []byte, nullOK bool, keys ...string) error {
	var seen uint32 // len(keys) is small; one bit per key
	ok := jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		for i, k := range keys {
			if m.Is(k) && (nullOK || string(data[m.ValStart:m.End]) != "null") {
				seen |= 1 << i
			}
		}
		return true
	})
	if !ok {
		return errNotObject
	}
	var missing []string
	for i, k := range keys {
		if seen&(1<<i) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing field %s", strings.Join(missing, ", "))
	}
	return nil
}

// nullToNil maps an explicit JSON null to an absent value, as serde does for
// Option<Value> fields, so that re-encoding leaves the key out.
func nullToNil(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// emptyIfNil makes a nil slice encode as [] (serde's Vec) instead of null.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
