package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestIsKnownTag(t *testing.T) {
	known := []Type{
		TypeRawJSON, TypeUserInput, TypeAgentResponse, TypeApprovalRequired,
		TypeApprovalResponse, TypeGrantRequired, TypeOnboardingRequired,
		TypeLLMRequest, TypeLLMStreamEvent, TypeLLMResponse,
		TypeToolExecuteRequest, TypeToolExecuteResult, TypeToolCancelRequest,
		TypeSelectionRequired, TypeElicitRequest, TypeElicitResponse,
		TypeConnect, TypeDisconnect, TypeCustom,
	}
	if len(known) != 19 {
		t.Fatalf("test lists %d tags, upstream has 19", len(known))
	}
	for _, tag := range known {
		if !IsKnownTag(string(tag)) {
			t.Errorf("IsKnownTag(%q) = false", tag)
		}
	}
	for _, tag := range []string{"my_plugin_msg", "unknown", "", "Raw_Json", "USER_INPUT", "user_input ", "type"} {
		if IsKnownTag(tag) {
			t.Errorf("IsKnownTag(%q) = true", tag)
		}
	}
	if len(decoders) != len(known) {
		t.Errorf("%d decoders, want %d", len(decoders), len(known))
	}
}

func TestDecodePayload(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want Payload // nil: Custom holding raw itself
	}{
		{"unknown tag", `{"type":"future_variant","x":1}`, nil},
		{"no tag", `{"a":1}`, nil},
		{"non-string tag", `{"type":7}`, nil},
		{"array", `[1,2]`, nil},
		{"string", `"s"`, nil},
		{"number", `42`, nil},
		{"null", `null`, nil},
		{"empty", ``, nil},
		{"malformed", `{"type":"user_input","text":"hi"`, nil},
		{"known tag missing field", `{"type":"user_input"}`, nil},
		{"known tag null field", `{"type":"user_input","text":null}`, nil},
		{"known tag wrong type", `{"type":"user_input","text":5}`, nil},
		{"missing arguments", `{"type":"tool_execute_request","call_id":"c","tool_name":"t"}`, nil},
		{"missing nested field", `{"type":"tool_execute_result","call_id":"c","result":{"call_id":"c"}}`, nil},
		{"bad stop reason", `{"type":"llm_response","request_id":"r","response":{"message":{"role":"assistant","content":"x"},"has_tool_calls":false,"stop_reason":"Bogus","usage":{"input_tokens":1,"output_tokens":1}}}`, nil},
		{"bad role", `{"type":"llm_request","request_id":"r","model":"m","messages":[{"role":"robot","content":"x"}],"tools":[],"system":""}`, nil},
		{"custom without data", `{"type":"custom"}`, nil},
		{"unknown is never produced", `{"type":"unknown"}`, nil},
		{"custom unwraps", `{"type":"custom","data":{"k":1}}`, Custom{Data: json.RawMessage(`{"k":1}`)}},
		{"custom null data", `{"type":"custom","data":null}`, Custom{Data: json.RawMessage(`null`)}},
		{"defaults", `{"type":"user_input","text":"hi"}`, UserInput{Text: "hi", SessionID: DefaultSessionID}},
		{"null context is absent", `{"type":"user_input","text":"hi","context":null}`, UserInput{Text: "hi", SessionID: DefaultSessionID}},
		{"escaped tag", `{"type":"user\u005finput","text":"hi"}`, UserInput{Text: "hi", SessionID: DefaultSessionID}},
		{"tag last", `{"text":"hi","session_id":"s","type":"user_input"}`, UserInput{Text: "hi", SessionID: "s"}},
		{"null arguments", `{"type":"tool_execute_request","call_id":"c","tool_name":"t","arguments":null}`,
			ToolExecuteRequest{CallID: "c", ToolName: "t", Arguments: json.RawMessage(`null`)}},
		{"is_error defaults", `{"type":"tool_execute_result","call_id":"c","result":{"call_id":"c","content":"ok"}}`,
			ToolExecuteResult{CallID: "c", Result: ToolCallResult{CallID: "c", Content: "ok"}}},
		{"null reason", `{"type":"approval_response","request_id":"a","decision":"deny","reason":null}`,
			ApprovalResponse{RequestID: "a", Decision: DecisionDeny}},
		{"extra keys ignored", `{"type":"connect","since":3}`, Connect{}},
		{"raw_json drops tag", `{"type":"raw_json"}`, RawJSON{Value: json.RawMessage(`{}`)}},
		{"raw_json keeps nested type", `{"a":{"type":"x"},"type":"raw_json","b":2}`, RawJSON{Value: json.RawMessage(`{"a":{"type":"x"},"b":2}`)}},
		{"cancel", `{"type":"tool_cancel_request","call_ids":[]}`, ToolCancelRequest{CallIDs: []string{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := json.RawMessage(c.raw)
			got := DecodePayload(raw)
			want := c.want
			if want == nil {
				want = Custom{Data: raw}
				custom, ok := got.(Custom)
				if !ok || !bytes.Equal(custom.Data, raw) {
					t.Fatalf("DecodePayload(%s) = %#v, want Custom holding the original bytes", c.raw, got)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("DecodePayload(%s) =\n %#v\nwant %#v", c.raw, got, want)
			}
		})
	}
}

func TestParsePayload(t *testing.T) {
	cases := []struct {
		raw     string
		wantErr bool
		want    Payload
	}{
		{`{"type":"future_variant","x":1}`, false, Unknown{}},
		{`{"type":"agent_response","text":"t","is_final":false}`, false, AgentResponse{Text: "t", SessionID: DefaultSessionID}},
		{`{"text":"t"}`, true, nil},
		{`[]`, true, nil},
		{`{"type":"user_input"`, true, nil},
		{`{"type":"agent_response","text":"t"}`, true, nil},
		{`{"type":"elicit_request","request_id":"r","capsule_id":"c","field":{"key":"k","prompt":"p","field_type":"Number"}}`, true, nil},
	}
	for _, c := range cases {
		got, err := ParsePayload(json.RawMessage(c.raw))
		if c.wantErr {
			if err == nil || !errors.Is(err, ErrPayload) {
				t.Errorf("ParsePayload(%s) = %#v, %v; want an ErrPayload", c.raw, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParsePayload(%s) = %#v, %v; want %#v", c.raw, got, err, c.want)
		}
	}
}

func TestParsePayloadErrorNamesTheField(t *testing.T) {
	_, err := ParsePayload(json.RawMessage(`{"type":"approval_required","request_id":"a","action":"x"}`))
	if err == nil {
		t.Fatal("no error")
	}
	want := "invalid payload: approval_required: missing field resource, reason"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestGuestBytes(t *testing.T) {
	cases := []struct{ name, raw, want string }{
		{"custom unwraps", `{"type":"custom","data":{"k":1}}`, `{"k":1}`},
		{"custom keeps bytes verbatim", `{ "data" : {"k": 1,  "z":[ ]} , "type" : "custom" }`, `{"k": 1,  "z":[ ]}`},
		{"custom null data", `{"type":"custom","data":null}`, `null`},
		{"custom without data", `{"type":"custom"}`, `{"type":"custom"}`},
		{"typed keeps tag", `{"type":"user_input","text":"hi","session_id":"default"}`, `{"type":"user_input","text":"hi","session_id":"default"}`},
		{"connect", `{"type":"connect"}`, `{"type":"connect"}`},
		{"raw_json unwraps", `{"type":"raw_json","a":1,"b":{"type":"x"}}`, `{"a":1,"b":{"type":"x"}}`},
		{"raw_json tag in the middle", `{"a":1, "type":"raw_json" ,"b":2}`, `{"a":1,"b":2}`},
		{"raw_json alone", `{"type":"raw_json"}`, `{}`},
		{"untagged", `{"a":1}`, `{"a":1}`},
		{"unknown tag", `{"type":"future","a":1}`, `{"type":"future","a":1}`},
		{"not an object", `[1]`, `[1]`},
		{"malformed", `{"type":"custom","data":`, `{"type":"custom","data":`},
	}
	for _, c := range cases {
		if got := GuestBytes(json.RawMessage(c.raw)); string(got) != c.want {
			t.Errorf("%s: GuestBytes(%s) = %s, want %s", c.name, c.raw, got, c.want)
		}
	}
}

// TestGuestBytesOfGoldens: only custom and raw_json lose their tag.
func TestGuestBytesOfGoldens(t *testing.T) {
	for name, p := range goldenPayloads {
		raw := readGolden(t, "payloads", name)
		got := GuestBytes(raw)
		switch p.Type() {
		case TypeCustom:
			if !bytes.Equal(got, p.(Custom).Data) {
				t.Errorf("%s: GuestBytes = %s, want the data %s", name, got, p.(Custom).Data)
			}
		case TypeRawJSON:
			if !bytes.Equal(got, p.(RawJSON).Value) {
				t.Errorf("%s: GuestBytes = %s, want the value %s", name, got, p.(RawJSON).Value)
			}
		default:
			if !bytes.Equal(got, raw) {
				t.Errorf("%s: GuestBytes = %s, want the payload unchanged", name, got)
			}
		}
	}
}

func TestPayloadType(t *testing.T) {
	cases := []struct {
		raw  string
		want Type
	}{
		{`{"type":"tool_execute_request","call_id":"c"}`, TypeToolExecuteRequest},
		{` {"a":{"type":"inner"},"type":"custom"} `, TypeCustom},
		{`{"type":"a","type":"b"}`, "b"},
		{`{"type":"\u0063onnect"}`, TypeConnect},
		{`{"type":1}`, ""},
		{`{"type":null}`, ""},
		{`{"kind":"x"}`, ""},
		{`["type","x"]`, ""},
		{`{"type":"x"`, ""},
		{`{"type":"x"} trailing`, ""},
		{``, ""},
		{`{"type":"future"}`, "future"},
	}
	for _, c := range cases {
		if got := PayloadType(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("PayloadType(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestEncodePayloadErrors(t *testing.T) {
	cases := []struct {
		name string
		p    Payload
	}{
		{"nil", nil},
		{"raw_json array", RawJSON{Value: json.RawMessage(`[1]`)}},
		{"raw_json empty", RawJSON{}},
		{"raw_json malformed", RawJSON{Value: json.RawMessage(`{"a":`)}},
		{"custom malformed", Custom{Data: json.RawMessage(`{"a":`)}},
		{"unset field kind", ElicitRequest{RequestID: "r"}},
		{"unset stream kind", LLMStreamEvent{RequestID: "r"}},
		{"unknown part type", LLMRequest{Messages: []Message{{Role: RoleUser, Content: MessageContent{Kind: ContentMultiPart, Parts: []ContentPart{{}}}}}}},
	}
	for _, c := range cases {
		if got, err := EncodePayload(c.p); err == nil || !errors.Is(err, ErrPayload) {
			t.Errorf("%s: EncodePayload = %s, %v; want an ErrPayload", c.name, got, err)
		}
	}
}

// TestEncodeZeroValues: serde writes empty lists, not null, and optional
// values are left out only when absent.
func TestEncodeZeroValues(t *testing.T) {
	cases := []struct {
		p    Payload
		want string
	}{
		{ToolCancelRequest{}, `{"type":"tool_cancel_request","call_ids":[]}`},
		{LLMRequest{}, `{"type":"llm_request","request_id":"","model":"","messages":[],"tools":[],"system":""}`},
		{OnboardingRequired{}, `{"type":"onboarding_required","capsule_id":"","fields":[]}`},
		{SelectionRequired{}, `{"type":"selection_required","request_id":"","title":"","options":[],"callback_topic":""}`},
		{ElicitResponse{Values: []string{}}, `{"type":"elicit_response","request_id":"","values":[]}`},
		{ToolExecuteRequest{}, `{"type":"tool_execute_request","call_id":"","tool_name":"","arguments":null}`},
		{Custom{}, `{"type":"custom","data":null}`},
		{UserInput{}, `{"type":"user_input","text":"","session_id":""}`},
		{ApprovalResponse{Reason: new("")}, `{"type":"approval_response","request_id":"","decision":"","reason":""}`},
		{RawJSON{Value: json.RawMessage(" {\n \"a\" : 1 }\n")}, `{"type":"raw_json","a":1}`},
		{LLMRequest{Messages: []Message{{Role: RoleAssistant, Content: MessageContent{Kind: ContentToolCalls}}}, Tools: []LLMToolDefinition{{Name: "t"}}},
			`{"type":"llm_request","request_id":"","model":"","messages":[{"role":"assistant","content":[]}],"tools":[{"name":"t","description":null,"input_schema":{"type":"object"}}],"system":""}`},
	}
	for _, c := range cases {
		got, err := EncodePayload(c.p)
		if err != nil || string(got) != c.want {
			t.Errorf("EncodePayload(%#v) = %s, %v; want %s", c.p, got, err, c.want)
		}
	}
}

// TestJSONMarshalAgrees: the standard encoder gives the tagged form too
// (with its HTML escaping), so a payload nested in another value is tagged.
func TestJSONMarshalAgrees(t *testing.T) {
	got, err := json.Marshal(struct {
		P Payload `json:"p"`
	}{AgentResponse{Text: "a<b", SessionID: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"p":{"type":"agent_response","text":"a\u003cb","is_final":false,"session_id":"s"}}`
	if string(got) != want {
		t.Errorf("json.Marshal = %s, want %s", got, want)
	}
}
