package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// The session store built to wasm keeps history, appends-and-reads in one
// step, chains a cleared session and refuses a bad id, as it does natively
// (capsules/session's tests).
func TestSessionStoreWasm(t *testing.T) {
	const client = "test-session-client"
	k := bootOneWasm(t, dispatch.CapsuleACL{ID: client,
		Publish: []string{"session.v1.append", "session.v1.request.*"}, Subscribe: []string{"session.v1.response.*"}}, "../../capsules/session", session.Manifest)
	caller := dispatch.Caller{Capsule: client, Principal: ipc.DefaultPrincipal}
	sub, err := k.Dispatcher.Subscribe(caller, "session.v1.response.*", true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publish := func(topic string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Dispatcher.Publish(caller, topic, b); err != nil {
			t.Fatal(err)
		}
	}
	next := func(wantTopic string) json.RawMessage {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("no reply: %v", err)
		}
		if d.Envelope.Topic != wantTopic {
			t.Fatalf("reply on %s, want %s", d.Envelope.Topic, wantTopic)
		}
		return ipc.GuestBytes(d.Envelope.Payload)
	}

	publish(session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "one")}})
	publish(session.GetMessagesTopic, map[string]any{"session_id": "s1", "correlation_id": "r1", "append_before_read": true,
		"messages": []ipc.Message{ipc.TextMessage(ipc.RoleAssistant, "two")}})
	var got session.MessagesReply
	if err := json.Unmarshal(next(session.ReplyTopic(session.OpGetMessages, "r1")), &got); err != nil || len(got.Messages) != 2 {
		t.Fatalf("get_messages: %+v (%v)", got, err)
	}
	if s, _ := got.Messages[1].Text(); s != "two" {
		t.Fatalf("second message %q", s)
	}

	publish(session.ClearTopic, map[string]any{"session_id": "s1", "correlation_id": "c1"})
	var cleared session.ClearReply
	if err := json.Unmarshal(next(session.ReplyTopic(session.OpClear, "c1")), &cleared); err != nil ||
		cleared.OldSessionID != "s1" || session.ValidateID(cleared.NewSessionID) != nil {
		t.Fatalf("clear: %+v (%v)", cleared, err)
	}

	publish(session.ListTopic, map[string]any{"correlation_id": "l1"})
	var list session.ListReply
	if err := json.Unmarshal(next(session.ReplyTopic(session.OpList, "l1")), &list); err != nil || list.Total != 2 ||
		list.Sessions[0].SessionID != "s1" || list.Sessions[0].MessageCount != 2 || list.Sessions[0].Preview != "one" {
		t.Fatalf("list: %+v (%v)", list, err)
	}

	publish(session.GetMessagesTopic, map[string]any{"session_id": "../s1", "correlation_id": "bad"})
	var e session.ErrorReply
	if err := json.Unmarshal(next(session.ReplyTopic(session.OpGetMessages, "bad")), &e); err != nil || !strings.Contains(e.Error, "session id") {
		t.Fatalf("bad id: %+v (%v)", e, err)
	}
}
