package ipc

import (
	"bytes"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// decodeToolDefinition is LLMToolDefinition.UnmarshalJSON's one-pass path
// for the common form: an object whose members are exactly "name" (a
// string), "description" (a string or null) and "input_schema" (any JSON
// value, kept as written), each at most once, strings that
// jsonscan.DecodeString decodes. Anything else (another key, a key in
// other case or escaped, a repeated key, a \u escape) reports false, and
// the caller decodes with encoding/json, whose result this path matches
// wherever it answers. Every request carries every tool's definition
// through several capsules, and encoding/json validated each one twice
// more after its payload was validated (docs/rationale/providers.md).
func decodeToolDefinition(data []byte) (LLMToolDefinition, bool) {
	var d LLMToolDefinition
	var name, desc, schema []byte
	refused := false // a stop of the scan is not a refusal of the object
	ok := jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		if m.Escaped {
			refused = true
			return false
		}
		v := data[m.ValStart:m.End]
		switch string(m.QuotedKey) {
		case `"name"`:
			refused = name != nil
			name = v
		case `"description"`:
			refused = desc != nil
			desc = v
		case `"input_schema"`:
			refused = schema != nil
			schema = v
		default:
			refused = true
		}
		return !refused
	})
	if !ok || refused || name == nil {
		return d, false
	}
	if d.Name, ok = jsonscan.DecodeString(name); !ok {
		return d, false // null, not a string, or an escape encoding/json decides
	}
	if desc != nil && string(desc) != "null" {
		s, ok := jsonscan.DecodeString(desc)
		if !ok {
			return d, false
		}
		d.Description = &s
	}
	switch {
	case schema == nil:
		d.InputSchema = defaultInputSchema
	case !jsonscan.Valid(schema):
		return d, false
	default:
		d.InputSchema = bytes.Clone(schema)
	}
	return d, true
}
