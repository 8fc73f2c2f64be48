package ipc

import (
	"encoding/json"
	"reflect"
	"testing"
)

// slowToolDefinition is LLMToolDefinition.UnmarshalJSON without its fast
// path: what encoding/json decodes.
func slowToolDefinition(data []byte) (LLMToolDefinition, error) {
	type wire LLMToolDefinition
	var w wire
	if err := decodeObject(data, &w, "name"); err != nil {
		return LLMToolDefinition{}, err
	}
	if len(w.InputSchema) == 0 {
		w.InputSchema = defaultInputSchema
	}
	return LLMToolDefinition(w), nil
}

func TestToolDefinitionFastPath(t *testing.T) {
	tests := []struct {
		in   string
		fast bool // the one-pass path answers
	}{
		{`{"name":"read_file","description":"Reads a file.","input_schema":{"type":"object","properties":{"p":{"type":"string"}}}}`, true},
		{`{"name":"now"}`, true},
		{` {"input_schema":null,"description":null,"name":"a\nb\"c"} `, true},
		{`{"name":"é","description":"tab\there","input_schema":[1,2]}`, true},
		{`{"name":"a","NAME":"b"}`, false},            // encoding/json matches keys in any case
		{`{"name":"a","name":"b"}`, false},            // the last one wins there
		{`{"n\u0061me":"a"}`, false},                  // an escaped key
		{`{"name":"\u00e9"}`, false},                  // a \u escape
		{`{"name":null}`, false},                      // required: refused below
		{`{"name":1}`, false},                         // not a string: refused below
		{`{"name":"a","input_schema":{"x":}}`, false}, // invalid: refused below
		{`{"name":"a","extra":true}`, false},          // unknown keys are encoding/json's to ignore
		{`{}`, false},
		{`[]`, false},
	}
	for _, tt := range tests {
		fast, ok := decodeToolDefinition([]byte(tt.in))
		if ok != tt.fast {
			t.Errorf("%s: fast path answered %v, want %v", tt.in, ok, tt.fast)
		}
		slow, slowErr := slowToolDefinition([]byte(tt.in))
		var got LLMToolDefinition
		err := json.Unmarshal([]byte(tt.in), &got)
		if (err == nil) != (slowErr == nil) || (err == nil && !reflect.DeepEqual(got, slow)) {
			t.Errorf("%s: decoded %+v, %v; encoding/json alone %+v, %v", tt.in, got, err, slow, slowErr)
		}
		if ok && !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: fast %+v, encoding/json %+v", tt.in, fast, slow)
		}
	}
}

// FuzzToolDefinitionFastPath: wherever the one-pass path answers for valid
// JSON, encoding/json decodes the same definition.
func FuzzToolDefinitionFastPath(f *testing.F) {
	for _, s := range []string{
		`{"name":"read_file","description":"Reads.","input_schema":{"type":"object"}}`,
		`{"name":"a","description":null}`, `{"name":"a\\b","input_schema":"x"}`, `{"name":"a","Name":"b"}`,
		`{"name":"\ud800"}`, `{"description":"d","name":"n","input_schema":[{"a":[]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeToolDefinition(data)
		if !ok || !json.Valid(data) {
			return
		}
		slow, err := slowToolDefinition(data)
		if err != nil {
			t.Fatalf("%q: the fast path decoded %+v, encoding/json refused: %v", data, fast, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", data, fast, slow)
		}
	})
}
