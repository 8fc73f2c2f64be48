package ipc

import (
	"encoding/json"
	"testing"
)

// TestCanonicalToolResultIsWhatTheCodecWrites: every result the codec
// writes with equal ids is recognised with its id, and forwarding it is
// the same as decoding and re-encoding it; anything else (other key order,
// space, unequal or escaped ids, other types, trailing bytes) is not.
func TestCanonicalToolResultIsWhatTheCodecWrites(t *testing.T) {
	for _, r := range []ToolExecuteResult{
		{CallID: "c1", Result: ToolCallResult{CallID: "c1", Content: "hello"}},
		{CallID: "c-2", Result: ToolCallResult{CallID: "c-2", Content: "line\nline \"q\" \\ \u2028 é", IsError: true}},
		{CallID: "c3", Result: ToolCallResult{CallID: "c3", Content: ""}},
	} {
		raw, err := EncodePayload(r)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := CanonicalToolResult(raw)
		if !ok || id != r.CallID {
			t.Fatalf("%s: (%q, %v), want (%q, true)", raw, id, ok, r.CallID)
		}
		var back ToolExecuteResult
		if err := back.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		again, err := EncodePayload(back)
		if err != nil || string(again) != string(raw) {
			t.Fatalf("re-encoding %s gave %s, %v", raw, again, err)
		}
	}
	for _, raw := range []string{
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c2","content":"x","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"","content":"x","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c\u0031","result":{"call_id":"c1","content":"x","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"content":"x","call_id":"c1","is_error":false}}`,
		`{"type":"tool_execute_result", "call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":7,"is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":0}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false},"x":1}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false}} `,
		`{"type":"tool_execute_request","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x"}}`,
	} {
		if !json.Valid([]byte(raw)) {
			t.Fatalf("test case is not JSON: %s", raw)
		}
		if id, ok := CanonicalToolResult([]byte(raw)); ok {
			t.Errorf("%s: recognised as canonical with id %q", raw, id)
		}
	}
}

// FuzzCanonicalToolResult: whatever valid JSON is recognised decodes to a
// result with that call id inside and out, and re-encodes to a payload that
// decodes the same: forwarding it as it is changes nothing a reader sees.
func FuzzCanonicalToolResult(f *testing.F) {
	f.Add([]byte(`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x\ny","is_error":false}}`))
	f.Add([]byte(`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"\u00e9\/","is_error":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !ValidJSON(data) {
			return
		}
		id, ok := CanonicalToolResult(data)
		if !ok {
			return
		}
		var r ToolExecuteResult
		if err := r.UnmarshalJSON(data); err != nil || r.CallID != id || r.Result.CallID != id {
			t.Fatalf("%s recognised with id %q but decodes to %+v, %v", data, id, r, err)
		}
		again, err := EncodePayload(r)
		if err != nil {
			t.Fatal(err)
		}
		var r2 ToolExecuteResult
		if err := r2.UnmarshalJSON(again); err != nil || r2 != r {
			t.Fatalf("%s re-encoded as %s, which decodes to %+v (%v), not %+v", data, again, r2, err, r)
		}
	})
}

// TestCanonicalToolRequestIsWhatTheCodecWrites, as for results.
func TestCanonicalToolRequestIsWhatTheCodecWrites(t *testing.T) {
	for _, r := range []ToolExecuteRequest{
		{CallID: "c1", ToolName: "read_file", Arguments: json.RawMessage(`{"file_path":"a b"}`)},
		{CallID: "c2", ToolName: "x", Arguments: json.RawMessage(`{ "nested" : [1, {"k":"v"}] }`)},
		{CallID: "c3", ToolName: "y", Arguments: json.RawMessage(`null`)},
	} {
		raw, err := EncodePayload(r)
		if err != nil {
			t.Fatal(err)
		}
		id, name, ok := CanonicalToolRequest(raw)
		if !ok || id != r.CallID || name != r.ToolName {
			t.Fatalf("%s: (%q, %q, %v)", raw, id, name, ok)
		}
	}
	for _, raw := range []string{
		`{"type":"tool_execute_request","tool_name":"t","call_id":"c1","arguments":{}}`,
		`{"type":"tool_execute_request","call_id":"c1","tool_name":"t","arguments":{}} `,
		`{"type":"tool_execute_request","call_id":"c1","tool_name":"t","arguments":{},"x":1}`,
		`{"type":"tool_execute_request","call_id":"c\u0031","tool_name":"t","arguments":{}}`,
		`{"type":"tool_execute_request","call_id":"c1","tool_name":"t"}`,
		`{"type":"tool_execute_result","call_id":"c1","tool_name":"t","arguments":{}}`,
		`{"type":"tool_execute_request","call_id":1,"tool_name":"t","arguments":{}}`,
	} {
		if !json.Valid([]byte(raw)) {
			t.Fatalf("test case is not JSON: %s", raw)
		}
		if id, name, ok := CanonicalToolRequest([]byte(raw)); ok {
			t.Errorf("%s: recognised as canonical (%q, %q)", raw, id, name)
		}
	}
}

// FuzzCanonicalToolRequest: whatever valid JSON is recognised decodes to a
// request with that call id and tool name.
func FuzzCanonicalToolRequest(f *testing.F) {
	f.Add([]byte(`{"type":"tool_execute_request","call_id":"c1","tool_name":"read_file","arguments":{"file_path":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !ValidJSON(data) {
			return
		}
		id, name, ok := CanonicalToolRequest(data)
		if !ok {
			return
		}
		var r ToolExecuteRequest
		if err := r.UnmarshalJSON(data); err != nil || r.CallID != id || r.ToolName != name {
			t.Fatalf("%s recognised as (%q, %q) but decodes to %+v, %v", data, id, name, r, err)
		}
	})
}
