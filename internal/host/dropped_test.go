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
