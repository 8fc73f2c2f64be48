package kernel

import (
	"context"
	"reflect"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// oddManifest is a capsule whose tool answers in a form the codec does not
// write: keys out of order, spaces, and an empty inner call id.
var oddManifest = []byte(`
[package]
name = "test-odd"
version = "0.1.0"

[subscribe]
"tool.v1.execute.odd" = { wit = "opaque", handler = "tool_execute_odd" }

[publish]
"tool.v1.execute.odd.result" = "opaque"
`)

func newOdd() *sdk.Capsule {
	c := sdk.New("answers in an unusual but valid form")
	c.Handle("tool.v1.execute.odd", "tool_execute_odd", func(call *sdk.Call) error {
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		odd := `{ "result" : {"is_error":false, "content":"odd \"answer\"", "call_id":""}, "call_id" : "` + req.CallID + `", "type":"tool_execute_result" }`
		return call.Publish("tool.v1.execute.odd.result", []byte(odd))
	})
	c.Publishes("tool.v1.execute.odd.result")
	return c
}

// TestRouterRewritesRequestsAndResultsNotInCodecForm: a request and a
// result in valid forms the codec does not write must still be understood,
// and a result whose inner call id is empty reaches the caller re-encoded
// in the codec's form with that id filled in.
func TestRouterRewritesRequestsAndResultsNotInCodecForm(t *testing.T) {
	k, _ := bootTest(t, append(Builtins(), Builtin{Manifest: oddManifest, New: newOdd}))
	caller := dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}
	results, err := k.Dispatcher.Subscribe(caller, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	// A request with its keys out of order and spaces between them.
	req := `{ "arguments" : {}, "tool_name" : "odd", "call_id" : "odd-1", "type" : "tool_execute_request" }`
	if canon, err := (ipc.ToolExecuteRequest{CallID: "odd-1", ToolName: "odd", Arguments: []byte(`{}`)}).MarshalJSON(); err != nil || string(canon) == req {
		t.Fatalf("the test request is in the codec's form (%v); it must not be", err)
	}
	if _, err := k.Dispatcher.Publish(caller, ipc.ToolRequestExecuteTopic, []byte(req), dispatch.RequestOf(dispatch.Request{ReplyTo: ipc.ToolExecuteResultTopic, CorrelationID: "odd-1", Timeout: testTimeout})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for {
		d, err := results.Recv(ctx)
		if err != nil {
			t.Fatalf("no result for the odd call: %v", err)
		}
		var res ipc.ToolExecuteResult
		if err := res.UnmarshalJSON(d.Envelope.Payload); err != nil || res.CallID != "odd-1" {
			continue
		}
		want := ipc.ToolExecuteResult{CallID: "odd-1", Result: ipc.ToolCallResult{CallID: "odd-1", Content: `odd "answer"`}}
		if !reflect.DeepEqual(res, want) {
			t.Fatalf("result %+v, want %+v", res, want)
		}
		if canon, _ := want.MarshalJSON(); string(d.Envelope.Payload) != string(canon) {
			t.Fatalf("the router passed on %s, not the codec's form %s", d.Envelope.Payload, canon)
		}
		return
	}
}
