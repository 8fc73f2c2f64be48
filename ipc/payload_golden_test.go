package ipc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const testUUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

// goldenPayloads pins every variant's wire form: testdata/payloads/<name>.json
// holds the exact bytes upstream's serde produces for the value.
var goldenPayloads = map[string]Payload{
	"raw_json":                    RawJSON{Value: json.RawMessage(`{"method":"ReloadCapsule","params":{"id":"fs"}}`)},
	"user_input":                  UserInput{Text: "hello", SessionID: "s1", Context: json.RawMessage(`{"action":"cancel_turn"}`)},
	"user_input_no_context":       UserInput{SessionID: DefaultSessionID},
	"agent_response":              AgentResponse{Text: "Use <b> & </b>, \"quoted\"\n", IsFinal: true, SessionID: "default"},
	"approval_required":           ApprovalRequired{RequestID: "a1", Action: "write_file", Resource: "/w/x.txt", Reason: "the tool is mutable"},
	"approval_response":           ApprovalResponse{RequestID: "a1", Decision: DecisionApproveSession, Reason: new("ok")},
	"approval_response_no_reason": ApprovalResponse{RequestID: "a1", Decision: DecisionDeny},
	"grant_required":              GrantRequired{RequestID: testUUID, Principal: "alice", CapsuleID: "fs"},
	"onboarding_required": OnboardingRequired{CapsuleID: "openai", Fields: []OnboardingField{
		{Key: "api_key", Prompt: "OpenAI API key", Description: new("Stored as a secret"), FieldType: FieldType{Kind: FieldSecret}},
		{Key: "model", Prompt: "Model", FieldType: FieldType{Kind: FieldEnum, Options: []string{"gpt-4o", "gpt-4o-mini"}}, Default: new("gpt-4o")},
		{Key: "stop", Prompt: "Stop words", FieldType: FieldType{Kind: FieldArray}, Placeholder: new("one per line")},
		{Key: "name", Prompt: "Name", FieldType: FieldType{Kind: FieldText}},
	}},
	"llm_request": LLMRequest{
		RequestID: testUUID,
		Model:     "gpt-4o",
		Messages: []Message{
			TextMessage(RoleSystem, "Be brief."),
			TextMessage(RoleUser, "List files"),
			{Role: RoleAssistant, Content: MessageContent{Kind: ContentToolCalls, ToolCalls: []ToolCall{
				{ID: "call_1", Name: "fs:list_directory", Arguments: json.RawMessage(`{"path":"."}`)},
			}}},
			{Role: RoleTool, Content: MessageContent{Kind: ContentToolResult, ToolResult: ToolCallSuccess("call_1", "a.txt")}},
			{Role: RoleUser, Content: MessageContent{Kind: ContentMultiPart, Parts: []ContentPart{
				{Type: PartText, Text: "What is this?"},
				{Type: PartImage, Data: "iVBORw0KGgo=", MediaType: "image/png"},
			}}},
		},
		Tools: []LLMToolDefinition{
			{Name: "list_directory", Description: new("List a directory"), InputSchema: json.RawMessage(`{"properties":{"path":{"type":"string"}},"type":"object"}`)},
			{Name: "now", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		System: "You are helpful.",
	},
	"llm_stream_event_text_delta":      LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamTextDelta, Text: "Hel"}},
	"llm_stream_event_tool_call_start": LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamToolCallStart, ID: "call_1", Name: "read_file"}},
	"llm_stream_event_tool_call_delta": LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamToolCallDelta, ID: "call_1", ArgsDelta: `{"path":`}},
	"llm_stream_event_tool_call_end":   LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamToolCallEnd, ID: "call_1"}},
	"llm_stream_event_reasoning_delta": LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamReasoningDelta, Text: "thinking"}},
	"llm_stream_event_usage":           LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamUsage, Usage: Usage{InputTokens: 120, OutputTokens: 7}}},
	"llm_stream_event_done":            LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamDone}},
	"llm_stream_event_error":           LLMStreamEvent{RequestID: testUUID, Event: StreamEvent{Kind: StreamError, Text: "rate limited"}},
	"llm_response": LLMResponse{RequestID: testUUID, Response: Completion{
		Message:    TextMessage(RoleAssistant, "Hi"),
		StopReason: StopEndTurn,
		Usage:      Usage{InputTokens: 12, OutputTokens: 3},
	}},
	"tool_execute_request":      ToolExecuteRequest{CallID: "call_1", ToolName: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)},
	"tool_execute_result":       ToolExecuteResult{CallID: "call_1", Result: ToolCallSuccess("call_1", `"line1\nline2"`)},
	"tool_execute_result_error": ToolExecuteResult{CallID: "call_2", Result: ToolCallError("call_2", "Invalid tool name: foo.bar")},
	"tool_cancel_request":       ToolCancelRequest{CallIDs: []string{"call_1", "call_2"}},
	"selection_required": SelectionRequired{RequestID: "sel1", Title: "Pick a model", Options: []SelectionOption{
		{ID: "gpt-4o", Label: "GPT-4o", Description: new("default")},
		{ID: "llama3", Label: "Llama 3"},
	}, CallbackTopic: "registry.v1.selection.callback"},
	"elicit_request":            ElicitRequest{RequestID: testUUID, CapsuleID: "http", Field: OnboardingField{Key: "token", Prompt: "API token", FieldType: FieldType{Kind: FieldSecret}}},
	"elicit_response":           ElicitResponse{RequestID: testUUID, Value: new("")},
	"elicit_response_values":    ElicitResponse{RequestID: testUUID, Values: []string{"a", "b"}},
	"elicit_response_cancelled": ElicitResponse{RequestID: testUUID},
	"connect":                   Connect{},
	"disconnect":                Disconnect{Reason: new("client closed")},
	"disconnect_no_reason":      Disconnect{},
	"custom":                    Custom{Data: json.RawMessage(`{"session_id":"s1","text":"x"}`)},
	"unknown":                   Unknown{},
}

func readGolden(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(b, "\n")
}

func TestGoldenPayloadsEncode(t *testing.T) {
	for name, value := range goldenPayloads {
		t.Run(name, func(t *testing.T) {
			want := readGolden(t, "payloads", name)
			got, err := EncodePayload(value)
			if err != nil {
				t.Fatalf("EncodePayload: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("EncodePayload:\n got %s\nwant %s", got, want)
			}
			if tag := PayloadType(want); tag != value.Type() {
				t.Errorf("PayloadType = %q, want %q", tag, value.Type())
			}
		})
	}
}

func TestGoldenPayloadsDecode(t *testing.T) {
	for name, want := range goldenPayloads {
		t.Run(name, func(t *testing.T) {
			raw := readGolden(t, "payloads", name)
			got, err := ParsePayload(raw)
			if err != nil {
				t.Fatalf("ParsePayload: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParsePayload:\n got %#v\nwant %#v", got, want)
			}
			again, err := EncodePayload(got)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("decode→encode:\n got %s\nwant %s", again, raw)
			}
		})
	}
}

// TestGoldenCoversEveryVariant keeps the golden set complete as variants
// are added.
func TestGoldenCoversEveryVariant(t *testing.T) {
	seen := map[Type]bool{}
	for name, p := range goldenPayloads {
		seen[p.Type()] = true
		if _, err := os.Stat(filepath.Join("testdata", "payloads", name+".json")); err != nil {
			t.Errorf("golden %s: %v", name, err)
		}
	}
	for tag := range decoders {
		if !seen[tag] {
			t.Errorf("no golden payload for %q", tag)
		}
	}
	if !seen[TypeUnknown] {
		t.Error("no golden payload for unknown")
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	if len(files) != len(goldenPayloads) {
		t.Errorf("%d golden files, %d golden values: each file needs its value", len(files), len(goldenPayloads))
	}
}
