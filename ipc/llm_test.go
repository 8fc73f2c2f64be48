package ipc

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestMessageContentDecodeOrder(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want MessageContent
	}{
		{"text", `"hi"`, MessageContent{Kind: ContentText, Text: "hi"}},
		{"empty text", `""`, MessageContent{Kind: ContentText}},
		{"empty array is tool calls", `[]`, MessageContent{Kind: ContentToolCalls, ToolCalls: []ToolCall{}}},
		{"tool calls, arguments default", `[{"id":"1","name":"fs:read"}]`,
			MessageContent{Kind: ContentToolCalls, ToolCalls: []ToolCall{{ID: "1", Name: "fs:read", Arguments: json.RawMessage(`{}`)}}}},
		{"tool result", `{"call_id":"c","content":"x"}`, MessageContent{Kind: ContentToolResult, ToolResult: ToolCallResult{CallID: "c", Content: "x"}}},
		{"tool error", `{"call_id":"c","content":"x","is_error":true}`, MessageContent{Kind: ContentToolResult, ToolResult: ToolCallError("c", "x")}},
		{"parts", `[{"type":"text","text":"a"},{"type":"image","data":"AA==","media_type":"image/png"}]`,
			MessageContent{Kind: ContentMultiPart, Parts: []ContentPart{{Type: PartText, Text: "a"}, {Type: PartImage, Data: "AA==", MediaType: "image/png"}}}},
	}
	for _, c := range cases {
		var got MessageContent
		if err := json.Unmarshal([]byte(c.raw), &got); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, got, c.want)
		}
	}
	for _, bad := range []string{`null`, `5`, `{"x":1}`, `[{"type":"video"}]`, `[1]`, `{"call_id":"c"}`, `[{"type":"image","data":"AA=="}]`} {
		var got MessageContent
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("%s decoded as %#v, want an error", bad, got)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, role := range []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool} {
		m := TextMessage(role, "hello")
		if text, ok := m.Text(); !ok || text != "hello" || m.Role != role {
			t.Errorf("TextMessage(%q): %#v", role, m)
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"role":"` + string(role) + `","content":"hello"}`; string(raw) != want {
			t.Errorf("encoded %s, want %s", raw, want)
		}
	}
	calls := Message{Role: RoleAssistant, Content: MessageContent{Kind: ContentToolCalls}}
	if _, ok := calls.Text(); ok {
		t.Error("Text() of a tool-call message reports text")
	}
	var m Message
	if err := json.Unmarshal([]byte(`{"role":"Robot","content":"x"}`), &m); err == nil {
		t.Error("unknown role accepted")
	}
	if err := json.Unmarshal([]byte(`{"role":"user"}`), &m); err == nil {
		t.Error("message without content accepted")
	}
}

func TestToolCallResultConstructors(t *testing.T) {
	if r := ToolCallSuccess("c", "ok"); r.IsError || r.CallID != "c" || r.Content != "ok" {
		t.Errorf("ToolCallSuccess = %#v", r)
	}
	if r := ToolCallError("c", "boom"); !r.IsError || r.CallID != "c" || r.Content != "boom" {
		t.Errorf("ToolCallError = %#v", r)
	}
}

func TestUsageTotalSaturates(t *testing.T) {
	cases := []struct {
		u    Usage
		want uint64
	}{
		{Usage{}, 0},
		{Usage{InputTokens: 3, OutputTokens: 4}, 7},
		{Usage{InputTokens: math.MaxUint64, OutputTokens: 1}, math.MaxUint64},
		{Usage{InputTokens: math.MaxUint64 - 1, OutputTokens: 1}, math.MaxUint64},
		{Usage{InputTokens: 1 << 63, OutputTokens: 1 << 63}, math.MaxUint64},
	}
	for _, c := range cases {
		if got := c.u.Total(); got != c.want {
			t.Errorf("%+v.Total() = %d, want %d", c.u, got, c.want)
		}
	}
}

func TestStreamEventDecode(t *testing.T) {
	cases := []struct {
		raw  string
		want StreamEvent
	}{
		{`"Done"`, StreamEvent{Kind: StreamDone}},
		{`{"Done":null}`, StreamEvent{Kind: StreamDone}},
		{`{"TextDelta":""}`, StreamEvent{Kind: StreamTextDelta}},
		{`{"Error":"e"}`, StreamEvent{Kind: StreamError, Text: "e"}},
	}
	for _, c := range cases {
		var got StreamEvent
		if err := json.Unmarshal([]byte(c.raw), &got); err != nil || got != c.want {
			t.Errorf("%s = %#v, %v; want %#v", c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{
		`"TextDelta"`, `"done"`, `{}`, `{"TextDelta":"a","Done":null}`, `{"Bogus":1}`, `{"TextDelta":null}`,
		`{"ToolCallStart":{"id":"1"}}`, `{"ToolCallDelta":{"id":"1"}}`, `{"ToolCallEnd":{}}`,
		`{"Usage":{"input_tokens":1}}`, `{"Done":1}`, `null`, `[]`,
	} {
		var got StreamEvent
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("%s decoded as %#v, want an error", bad, got)
		}
	}
}

func TestLLMToolDefinitionDefaults(t *testing.T) {
	var d LLMToolDefinition
	if err := json.Unmarshal([]byte(`{"name":"now"}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Description != nil || string(d.InputSchema) != `{"type":"object"}` {
		t.Errorf("defaults: %#v", d)
	}
	if err := json.Unmarshal([]byte(`{"description":"x"}`), &d); err == nil {
		t.Error("definition without a name accepted")
	}
}

func TestStopReason(t *testing.T) {
	for _, r := range []StopReason{StopEndTurn, StopMaxTokens, StopToolUse, StopStopSequence} {
		var got StopReason
		if err := json.Unmarshal([]byte(`"`+string(r)+`"`), &got); err != nil || got != r {
			t.Errorf("%s = %q, %v", r, got, err)
		}
	}
	var got StopReason
	if err := json.Unmarshal([]byte(`"end_turn"`), &got); err == nil {
		t.Error("snake_case stop reason accepted")
	}
}

func TestFieldTypeDecode(t *testing.T) {
	cases := []struct {
		raw  string
		want FieldType
	}{
		{`"Text"`, FieldType{Kind: FieldText}},
		{`"Secret"`, FieldType{Kind: FieldSecret}},
		{`"Array"`, FieldType{Kind: FieldArray}},
		{`{"Enum":[]}`, FieldType{Kind: FieldEnum, Options: []string{}}},
		{`{"Enum":["a"]}`, FieldType{Kind: FieldEnum, Options: []string{"a"}}},
	}
	for _, c := range cases {
		var got FieldType
		if err := json.Unmarshal([]byte(c.raw), &got); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, %v; want %#v", c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{`"Enum"`, `"text"`, `{"Enum":null}`, `{"enum":["a"]}`, `{}`, `null`, `3`} {
		var got FieldType
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("%s decoded as %#v, want an error", bad, got)
		}
	}
	if raw, err := json.Marshal(FieldType{Kind: FieldEnum}); err != nil || string(raw) != `{"Enum":[]}` {
		t.Errorf("empty enum encodes as %s, %v", raw, err)
	}
}
