package host

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

const plumbingCapsule = `
[package]
name = "plumber"
version = "0.1.0"

[capabilities]
tool_middleware = true

[subscribe]
"tool.v1.request.execute" = { wit = "tool-execute-request", handler = "on_request" }
"tool.v1.execute.*.result" = { wit = "tool-execute-result", handler = "on_result" }
"notes.v1.note" = { wit = "opaque", handler = "on_note" }

[publish]
"tool.v1.execute.result" = "tool-execute-result"
`

// A dropped tool request and a dropped tool result are each answered on
// the consolidated topic, as the capsule, naming the call; any other
// dropped event is only counted.
func TestAnswerDropped(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, plumbingCapsule)
	obs := busRoute(t, f, ipc.ToolExecuteResultTopic)
	req, _ := ipc.ToolExecuteRequest{CallID: "c1", ToolName: "write_file", Arguments: json.RawMessage(`{}`)}.MarshalJSON()
	res, _ := ipc.ToolExecuteResult{CallID: "c2", Result: ipc.ToolCallResult{CallID: "c2", Content: "ok"}}.MarshalJSON()
	for _, tc := range []struct {
		pattern, topic string
		payload        []byte
		callID, says   string
	}{
		{"tool.v1.request.execute", ipc.ToolRequestExecuteTopic, req, "c1", "tool write_file was not run: full"},
		{"tool.v1.execute.*.result", ipc.ToolResultTopic("write_file"), res, "c2", "tool write_file: its answer was lost: full"},
	} {
		d := dispatch.Dropped{Capsule: "plumber", Pattern: tc.pattern, Envelope: &ipc.Envelope{Topic: tc.topic, Payload: tc.payload, Principal: "alice"}, Payload: tc.payload, Reason: "full"}
		if !c.AnswerDropped(d) {
			t.Fatalf("%s: not answered", tc.pattern)
		}
		got, err := obs.Recv(ctxTimeout(t))
		if err != nil {
			t.Fatal(err)
		}
		var r ipc.ToolExecuteResult
		if err := r.UnmarshalJSON(ipc.GuestBytes(got.Envelope.Payload)); err != nil || r.CallID != tc.callID || !r.Result.IsError || !strings.Contains(r.Result.Content, tc.says) {
			t.Fatalf("%s: answered %s (%v)", tc.pattern, got.Envelope.Payload, err)
		}
		if got.Envelope.SourceID != "plumber" || got.Envelope.Principal != "alice" {
			t.Fatalf("%s: answered as %s for %s", tc.pattern, got.Envelope.SourceID, got.Envelope.Principal)
		}
	}
	note := dispatch.Dropped{Capsule: "plumber", Pattern: "notes.v1.note", Envelope: &ipc.Envelope{Topic: "notes.v1.note", Payload: []byte(`{}`)}, Payload: []byte(`{}`), Reason: "full"}
	if c.AnswerDropped(note) {
		t.Fatal("a dropped event that is no tool call was answered")
	}
}

const agentishCapsule = `
[package]
name = "agentish"
version = "0.1.0"

[subscribe]
"user.v1.prompt" = { wit = "opaque", handler = "on_prompt" }
"llm.v1.request.generate.local" = { wit = "opaque", handler = "on_generate" }
"prompt_builder.v1.assemble" = { wit = "opaque", handler = "on_assemble" }

[publish]
"agent.v1.response" = "opaque"
"llm.v1.stream.local" = "opaque"
"prompt_builder.v1.response.assemble" = "opaque"
`

// A dropped model request ends its stream with an error for its request
// id, and a dropped prompt ends the turn it would have started, each as
// the capsule that should have answered; a dropped cancel_turn is not
// answered (the turn it names still runs and ends on its own), nor is a
// request without the id its requester waits on.
func TestAnswerDroppedModelRequestsAndPrompts(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, agentishCapsule)
	obs := busRoute(t, f, "*.v1.*")
	drop := func(topic, payload string) dispatch.Dropped {
		return dispatch.Dropped{Capsule: "agentish", Pattern: topic, Envelope: &ipc.Envelope{Topic: topic, Payload: []byte(payload), Principal: "alice"}, Payload: []byte(payload), Reason: "its queue is full"}
	}
	next := func(what string) *ipc.Envelope {
		t.Helper()
		got, err := obs.Recv(ctxTimeout(t))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got.Envelope.SourceID != "agentish" || got.Envelope.Principal != "alice" {
			t.Fatalf("%s: answered as %s for %s", what, got.Envelope.SourceID, got.Envelope.Principal)
		}
		return got.Envelope
	}

	if !c.AnswerDropped(drop("llm.v1.request.generate.local", `{"request_id":"r1","messages":[]}`)) {
		t.Fatal("a dropped model request was not answered")
	}
	env := next("model request")
	var ev ipc.LLMStreamEvent
	if err := ev.UnmarshalJSON(ipc.GuestBytes(env.Payload)); err != nil || env.Topic != "llm.v1.stream.local" || ev.RequestID != "r1" || ev.Event.Kind != ipc.StreamError || !strings.Contains(ev.Event.Text, "provider local did not take the request: its queue is full") {
		t.Fatalf("model request answered on %s with %s (%v)", env.Topic, env.Payload, err)
	}

	if !c.AnswerDropped(drop("user.v1.prompt", `{"type":"user_input","text":"hi","session_id":"s1","context":{"turn_id":"t7"}}`)) {
		t.Fatal("a dropped prompt was not answered")
	}
	env = next("prompt")
	resp, ok := ipc.DecodePayload(ipc.GuestBytes(env.Payload)).(ipc.AgentResponse)
	if !ok || env.Topic != ipc.AgentResponseTopic || !resp.IsFinal || resp.Outcome != ipc.OutcomeBusy || resp.SessionID != "s1" || resp.TurnID != "t7" || !strings.Contains(resp.Text, "did not take this prompt: its queue is full") {
		t.Fatalf("prompt answered on %s with %s", env.Topic, env.Payload)
	}

	if !c.AnswerDropped(drop("prompt_builder.v1.assemble", `{"request_id":"r9","session_id":"s1","messages":[]}`)) {
		t.Fatal("a dropped prompt request was not answered")
	}
	env = next("prompt request")
	var asm struct {
		RequestID string `json:"request_id"`
		SessionID string `json:"session_id"`
		Error     string `json:"error"`
	}
	if err := json.Unmarshal(ipc.GuestBytes(env.Payload), &asm); err != nil || env.Topic != "prompt_builder.v1.response.assemble" || asm.RequestID != "r9" || asm.SessionID != "s1" || !strings.Contains(asm.Error, "did not take the request: its queue is full") {
		t.Fatalf("prompt request answered on %s with %s (%v)", env.Topic, env.Payload, err)
	}

	for _, d := range []dispatch.Dropped{
		drop("prompt_builder.v1.assemble", `{"request_id":"r9"}`),
		drop("user.v1.prompt", `{"type":"user_input","text":"","session_id":"s1","context":{"action":"cancel_turn"}}`),
		drop("llm.v1.request.generate.local", `{"messages":[]}`),
		drop("llm.v1.request.generate.local", `not json`),
		drop("user.v1.prompt", `{"type":"agent_response","text":"x"}`),
	} {
		if c.AnswerDropped(d) {
			t.Fatalf("answered %s %s", d.Envelope.Topic, d.Payload)
		}
	}
}
