package ipc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// genericRequest and genericResult are the codec the hand-written one must
// agree with: encoding/json through the wire types.
func genericRequestJSON(p ToolExecuteRequest) ([]byte, error) {
	type wire ToolExecuteRequest
	return marshalTagged(TypeToolExecuteRequest, wire(p))
}

func genericResultJSON(p ToolExecuteResult) ([]byte, error) {
	type wire ToolExecuteResult
	return marshalTagged(TypeToolExecuteResult, wire(p))
}

func genericRequestDecode(data []byte) (ToolExecuteRequest, error) {
	type wire ToolExecuteRequest
	var w wire
	if err := requireKeys(data, true, "arguments"); err != nil {
		return ToolExecuteRequest{}, err
	}
	err := decodeObject(data, &w, "call_id", "tool_name")
	return ToolExecuteRequest(w), err
}

func genericResultDecode(data []byte) (ToolExecuteResult, error) {
	type wire ToolExecuteResult
	var w wire
	err := decodeObject(data, &w, "call_id", "result")
	return ToolExecuteResult(w), err
}

var codecStrings = []string{
	"", "plain", "call_0123456789abcdef", "a \"quoted\" \\ path", "line\nbreak\r\ttab\b\f",
	"\x00\x01\x1f\x7f", "<html> & more", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8", "/slash/",
}

func TestToolCodecMatchesGeneric(t *testing.T) {
	args := []json.RawMessage{nil, json.RawMessage(`{"file_path":"a.txt"}`), json.RawMessage(" { \"a\" : [1, 2 , {\"b\":null}] } "), json.RawMessage(`"<&>"`), json.RawMessage(`null`)}
	for _, s := range codecStrings {
		for _, a := range args {
			req := ToolExecuteRequest{CallID: s, ToolName: s + "x", Arguments: a}
			got, gerr := req.MarshalJSON()
			want, werr := genericRequestJSON(req)
			if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("request %q: got %s (%v), want %s (%v)", s, got, gerr, want, werr)
			}
			back, err := genericRequestDecode(got)
			if err != nil {
				t.Fatalf("generic decode of %s: %v", got, err)
			}
			var fast ToolExecuteRequest
			if err := fast.UnmarshalJSON(got); err != nil || !reflect.DeepEqual(fast, back) {
				t.Fatalf("decode %s: got %+v (%v), want %+v", got, fast, err, back)
			}
		}
		for _, isErr := range []bool{false, true} {
			res := ToolExecuteResult{CallID: s, Result: ToolCallResult{CallID: "c" + s, Content: s + s, IsError: isErr}}
			got, _ := res.MarshalJSON()
			want, _ := genericResultJSON(res)
			if !bytes.Equal(got, want) {
				t.Fatalf("result %q: got %s, want %s", s, got, want)
			}
			back, err := genericResultDecode(got)
			if err != nil {
				t.Fatalf("generic decode of %s: %v", got, err)
			}
			var fast ToolExecuteResult
			if err := fast.UnmarshalJSON(got); err != nil || !reflect.DeepEqual(fast, back) {
				t.Fatalf("decode %s: got %+v (%v), want %+v", got, fast, err, back)
			}
		}
	}
	if _, err := (ToolExecuteRequest{Arguments: json.RawMessage(`{bad`)}).MarshalJSON(); err == nil {
		t.Fatal("invalid arguments encoded")
	}
}

// Shapes the plain decoders must hand to the generic one, which then decides.
func TestToolCodecDecodeEdgeCases(t *testing.T) {
	requests := []string{
		`{"call_id":"a","tool_name":"t","arguments":{}}`,
		`{"CALL_ID":"a","call_id":"b","tool_name":"t","arguments":1}`,
		`{"call_id":"a","Call_Id":"b","tool_name":"t","arguments":1}`,
		`{"call_id":"a","call_id":null,"tool_name":"t","arguments":1}`,
		`{"call_id":"\u0041","tool_name":"t","arguments":null}`,
		`{"call_id":"a\/b","tool_name":"t","arguments":[],"extra":1,"type":"x"}`,
		`{"call_id":"a","tool_name":"t"}`,
		`{"call_id":1,"tool_name":"t","arguments":1}`,
		`{"call_id":"a","tool_name":"t","arguments":1,"\u0063all_id":"z"}`,
		`{"call_id":"a","tool_name":"t","arguments":1,"ſall_id":"z"}`,
		`[]`, `null`,
		// The codec's own form, which its decoder takes without the
		// generic one.
		`{"type":"tool_execute_request","call_id":"c\n1","tool_name":"t","arguments":{"a":[1,{"b":"}"}]}}`,
		`{"type":"tool_execute_request","call_id":"c","tool_name":"t","arguments":null}`,
		`{"type":"tool_execute_request","call_id":"c","tool_name":"t","arguments":1,"arguments":2}`,
		`{"type":"tool_execute_request","call_id":"\u0063","tool_name":"t","arguments":"x"}`,
	}
	for _, in := range requests {
		want, werr := genericRequestDecode([]byte(in))
		var got ToolExecuteRequest
		gerr := got.UnmarshalJSON([]byte(in))
		if (gerr != nil) != (werr != nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: got %+v (%v), want %+v (%v)", in, got, gerr, want, werr)
		}
	}
	results := []string{
		`{"call_id":"a","result":{"call_id":"a","content":"x\ny","is_error":true}}`,
		`{"call_id":"a","result":{"call_id":"a","content":"x","is_error":null}}`,
		`{"call_id":"a","result":{"call_id":"a","content":"x","IS_ERROR":true}}`,
		`{"call_id":"a","result":{"call_id":"a","content":"\u00e9"}}`,
		`{"call_id":"a","result":{"call_id":"a"}}`,
		`{"call_id":"a","result":{"call_id":"a","content":"1"},"result":{"call_id":"b","content":"2"}}`,
		`{"call_id":"a","result":null}`,
		`{"type":"tool_execute_result","call_id":"a","result":{"call_id":"b","content":"x\"y\\z\/","is_error":true}}`,
		`{"type":"tool_execute_result","call_id":"a","result":{"call_id":"a","content":"\u00e9","is_error":false}}`,
		`{"type":"tool_execute_result","call_id":"a","result":{"call_id":"a","content":"","is_error":false},"result":{"call_id":"b","content":"2","is_error":false}}`,
	}
	for _, in := range results {
		want, werr := genericResultDecode([]byte(in))
		var got ToolExecuteResult
		gerr := got.UnmarshalJSON([]byte(in))
		if (gerr != nil) != (werr != nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: got %+v (%v), want %+v (%v)", in, got, gerr, want, werr)
		}
	}
}

func FuzzToolCodec(f *testing.F) {
	f.Add("call_1", "read_file", `{"file_path":"x"}`, "content\n", true)
	f.Add("\u2028", "t\xff", ` [ 1 ] `, "<\x00>", false)
	f.Fuzz(func(t *testing.T, id, name, args, content string, isErr bool) {
		req := ToolExecuteRequest{CallID: id, ToolName: name, Arguments: json.RawMessage(args)}
		got, gerr := req.MarshalJSON()
		want, werr := genericRequestJSON(req)
		if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("request: got %s (%v), want %s (%v)", got, gerr, want, werr)
		}
		res := ToolExecuteResult{CallID: id, Result: ToolCallResult{CallID: name, Content: content, IsError: isErr}}
		got, _ = res.MarshalJSON()
		want, _ = genericResultJSON(res)
		if !bytes.Equal(got, want) {
			t.Fatalf("result: got %s, want %s", got, want)
		}
		if cid, inner, ok := ToolResultCallIDs(got); ok && (cid != res.CallID || inner != res.Result.CallID) {
			t.Fatalf("ToolResultCallIDs(%s) = %q, %q", got, cid, inner)
		}
		// Decoding: any valid JSON object the fuzzer builds as content.
		if json.Valid([]byte(content)) {
			wantR, werr := genericResultDecode([]byte(content))
			if cid, inner, ok := ToolResultCallIDs([]byte(content)); ok && (werr != nil || cid != wantR.CallID || inner != wantR.Result.CallID) {
				t.Fatalf("ToolResultCallIDs(%s) = %q, %q; the generic decoder %+v (%v)", content, cid, inner, wantR, werr)
			}
			var gotR ToolExecuteResult
			gerr := gotR.UnmarshalJSON([]byte(content))
			if (gerr != nil) != (werr != nil) || (werr == nil && !reflect.DeepEqual(gotR, wantR)) {
				t.Fatalf("decode result %s: got %+v (%v), want %+v (%v)", content, gotR, gerr, wantR, werr)
			}
			wantQ, werr := genericRequestDecode([]byte(content))
			var gotQ ToolExecuteRequest
			gerr = gotQ.UnmarshalJSON([]byte(content))
			if (gerr != nil) != (werr != nil) || (werr == nil && !reflect.DeepEqual(gotQ, wantQ)) {
				t.Fatalf("decode request %s: got %+v (%v), want %+v (%v)", content, gotQ, gerr, wantQ, werr)
			}
		}
	})
}

// TestToolCodecDecodesIntoItsOwnMemory: the decoders carve strings out of a
// copy of the payload, so a publisher (or a guest) reusing its buffer after
// the decode changes nothing decoded, and writing to the decoded arguments
// changes none of the strings.
func TestToolCodecDecodesIntoItsOwnMemory(t *testing.T) {
	req := []byte(`{"type":"tool_execute_request","call_id":"c1","tool_name":"read_file","arguments":{"file_path":"a"}}`)
	res := []byte(`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"hello","is_error":false}}`)
	p, ok := decodePlainRequest(req)
	r, ok2 := decodePlainResult(res)
	if !ok || !ok2 {
		t.Fatal("plain payloads not decoded by the plain decoders")
	}
	for i := range req {
		req[i] = 'x'
	}
	for i := range res {
		res[i] = 'x'
	}
	p.Arguments[2] = 'X'
	if p.CallID != "c1" || p.ToolName != "read_file" || string(p.Arguments) != `{"Xile_path":"a"}` {
		t.Errorf("request after its buffer was reused: %+v %s", p, p.Arguments)
	}
	if r.CallID != "c1" || r.Result.CallID != "c1" || r.Result.Content != "hello" || r.Result.IsError {
		t.Errorf("result after its buffer was reused: %+v", r)
	}
	allocs := testing.AllocsPerRun(100, func() {
		decodePlainResult([]byte(`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"hello","is_error":false}}`))
	})
	if allocs > 2 {
		t.Errorf("decoding a result: %v allocations, want at most 2 (the literal's bytes and one copy)", allocs)
	}
}

func TestToolResultCallIDs(t *testing.T) {
	for _, c := range []struct {
		in        string
		id, inner string
		ok        bool
	}{
		{`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"a\nb \"q\" \u00e9","is_error":false}}`, "c1", "c1", true},
		{`{"type":"tool_execute_result","call_id":"c\/1","result":{"call_id":"","content":"","is_error":true}}`, "c/1", "", true},
		{`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"x","is_error":false},"x":1}`, "", "", false},
		{`{"type":"tool_execute_result","call_id":"\u0063","result":{"call_id":"c","content":"x","is_error":false}}`, "", "", false},
		{`{"call_id":"c1","type":"tool_execute_result","result":{"call_id":"c1","content":"x","is_error":false}}`, "", "", false},
		{`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":1,"is_error":false}}`, "", "", false},
	} {
		id, inner, ok := ToolResultCallIDs([]byte(c.in))
		if id != c.id || inner != c.inner || ok != c.ok {
			t.Errorf("%s: %q %q %v, want %q %q %v", c.in, id, inner, ok, c.id, c.inner, c.ok)
		}
	}
}
