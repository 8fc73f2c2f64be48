package kernel

import (
	"context"
	"reflect"
	"testing"

	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// The replay provider built to wasm plays the demo's first turn, in order
// and under the request's id, as it does natively (capsules/replay's
// tests); a request ending in the awaited tool result gets the answer.
func TestReplayProviderWasm(t *testing.T) {
	const client = "test-llm-client"
	k := bootOneWasm(t, dispatch.CapsuleACL{ID: client,
		Publish: []string{"llm.v1.request.generate.*"}, Subscribe: []string{"llm.v1.stream.*"}}, "../../capsules/replay", replay.Manifest)
	demo, err := replay.Parse(replay.DemoName, replay.Demo)
	if err != nil {
		t.Fatal(err)
	}

	caller := dispatch.Caller{Capsule: client, Principal: ipc.DefaultPrincipal}
	sub, err := k.Dispatcher.Subscribe(caller, ipc.LLMStreamTopic(replay.Provider), true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	generate := func(req ipc.LLMRequest) []ipc.StreamEvent {
		t.Helper()
		payload, err := req.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Dispatcher.Publish(caller, ipc.LLMGenerateTopic(replay.Provider), payload); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		var events []ipc.StreamEvent
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				t.Fatalf("stream not ended: %v (events: %+v)", err, events)
			}
			var ev ipc.LLMStreamEvent
			if err := ev.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
				t.Fatal(err)
			}
			if ev.RequestID != req.RequestID {
				t.Fatalf("an event of request %q while %q streams", ev.RequestID, req.RequestID)
			}
			events = append(events, ev.Event)
			if ev.Event.Kind == ipc.StreamDone || ev.Event.Kind == ipc.StreamError {
				return events
			}
		}
	}

	msgs := []ipc.Message{ipc.TextMessage(ipc.RoleUser, "What is in this workspace?")}
	if got, want := generate(ipc.LLMRequest{RequestID: "w-1", Messages: msgs}), demo.Turns[1].Events; !reflect.DeepEqual(got, want) {
		t.Fatalf("first turn:\n got %+v\nwant %+v", got, want)
	}
	msgs = append(msgs, ipc.Message{Role: ipc.RoleTool, Content: ipc.MessageContent{
		Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallSuccess("replay_read_1", "# A project")}})
	if got, want := generate(ipc.LLMRequest{RequestID: "w-2", Messages: msgs}), demo.Turns[0].Events; !reflect.DeepEqual(got, want) {
		t.Fatalf("answer turn:\n got %+v\nwant %+v", got, want)
	}
}
