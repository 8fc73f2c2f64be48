package session_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func boot(t *testing.T) *sdktest.Kernel {
	t.Helper()
	return sdktest.New(t, sdktest.Capsule{Manifest: session.Manifest, New: session.New})
}

func text(role ipc.Role, s string) ipc.Message { return ipc.TextMessage(role, s) }

// getMessages asks for a session's history and decodes the reply, failing
// the test on an error reply.
func getMessages(t *testing.T, k *sdktest.Kernel, principal string, req map[string]any) []ipc.Message {
	t.Helper()
	corr := req["correlation_id"].(string)
	raw := k.SessionAsk(principal, session.GetMessagesTopic, req, session.ReplyTopic(session.OpGetMessages, corr))
	var got struct {
		CorrelationID string        `json:"correlation_id"`
		Messages      []ipc.Message `json:"messages"`
		Error         string        `json:"error"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("reply %s does not decode: %v", raw, err)
	}
	if got.Error != "" || got.CorrelationID != corr || got.Messages == nil {
		t.Fatalf("reply %s: want the messages for %q", raw, corr)
	}
	return got.Messages
}

func errorReply(t *testing.T, k *sdktest.Kernel, topic, op string, req map[string]any) string {
	t.Helper()
	raw := k.SessionAsk(ipc.DefaultPrincipal, topic, req, session.ReplyTopic(op, req["correlation_id"].(string)))
	var got session.ErrorReply
	if err := json.Unmarshal(raw, &got); err != nil || got.Error == "" {
		t.Fatalf("reply %s: want an error (%v)", raw, err)
	}
	return got.Error
}

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, session.Manifest, session.New())
}

// Appends are kept in order, across calls and message kinds, and an empty
// append changes nothing.
func TestAppendThenGetReturnsMessagesInOrder(t *testing.T) {
	k := boot(t)
	first := []ipc.Message{text(ipc.RoleUser, "read README"), {Role: ipc.RoleAssistant, Content: ipc.MessageContent{
		Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)}}}}}
	second := []ipc.Message{{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallSuccess("c1", "# Astrid")}},
		text(ipc.RoleAssistant, "It is about Astrid.")}
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": first})
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{}})
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": second})
	got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "c-1"})
	want := append(append([]ipc.Message{}, first...), second...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages:\n got %+v\nwant %+v", got, want)
	}
	// A session never written reads as empty, not as an error.
	if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "never", "correlation_id": "c-2"}); len(got) != 0 {
		t.Fatalf("an unknown session has messages: %+v", got)
	}
}

// A missing session_id is "default".
func TestMissingSessionIDIsDefault(t *testing.T) {
	k := boot(t)
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"messages": []ipc.Message{text(ipc.RoleUser, "hi")}})
	got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": ipc.DefaultSessionID, "correlation_id": "c-1"})
	if len(got) != 1 {
		t.Fatalf("default session: %+v", got)
	}
}

// append_before_read: the reply holds the appended messages, and a
// request queued behind it (an append published right after) is not in
// that reply but in the next read: append and read are one step.
func TestAppendBeforeReadIsAtomic(t *testing.T) {
	k := boot(t)
	replies := k.SessionListen(ipc.DefaultPrincipal, "session.v1.response.*")
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "one")}})
	k.SessionPublish(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]any{"session_id": "s1", "correlation_id": "r1",
		"append_before_read": true, "messages": []ipc.Message{text(ipc.RoleAssistant, "two")}})
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "three")}})
	k.SessionPublish(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]any{"session_id": "s1", "correlation_id": "r2"})
	for _, want := range []struct {
		corr  string
		texts []string
	}{{"r1", []string{"one", "two"}}, {"r2", []string{"one", "two", "three"}}} {
		topic, raw := replies.Next()
		var got session.MessagesReply
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if topic != session.ReplyTopic(session.OpGetMessages, want.corr) || got.CorrelationID != want.corr {
			t.Fatalf("reply on %s for %q, want %s", topic, got.CorrelationID, want.corr)
		}
		var texts []string
		for _, m := range got.Messages {
			s, _ := m.Text()
			texts = append(texts, s)
		}
		if !reflect.DeepEqual(texts, want.texts) {
			t.Fatalf("%s: messages %q, want %q", want.corr, texts, want.texts)
		}
	}
	// Without append_before_read the messages field is not appended.
	got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "r3", "messages": []ipc.Message{text(ipc.RoleUser, "not stored")}})
	if len(got) != 3 {
		t.Fatalf("a plain read appended: %d messages", len(got))
	}
}

// clear names a new empty session whose parent is the old one, keeps the
// old one, and never hands out the same id twice.
func TestClearChainsParentAndKeepsTheOld(t *testing.T) {
	k := boot(t)
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "old", "messages": []ipc.Message{text(ipc.RoleUser, "kept")}})
	clear := func(corr, from string) session.ClearReply {
		raw := k.SessionAsk(ipc.DefaultPrincipal, session.ClearTopic, map[string]any{"session_id": from, "correlation_id": corr},
			session.ReplyTopic(session.OpClear, corr))
		var r session.ClearReply
		if err := json.Unmarshal(raw, &r); err != nil || r.NewSessionID == "" || r.CorrelationID != corr || r.OldSessionID != from {
			t.Fatalf("clear reply %s (%v)", raw, err)
		}
		if err := session.ValidateID(r.NewSessionID); err != nil {
			t.Fatalf("new session id: %v", err)
		}
		return r
	}
	a := clear("k1", "old")
	b := clear("k2", "old")
	if a.NewSessionID == b.NewSessionID || a.NewSessionID == "old" {
		t.Fatalf("clear handed out %q twice (or the old id)", a.NewSessionID)
	}
	if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": a.NewSessionID, "correlation_id": "g1"}); len(got) != 0 {
		t.Fatalf("new session is not empty: %+v", got)
	}
	if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "old", "correlation_id": "g2"}); len(got) != 1 {
		t.Fatalf("old session lost: %+v", got)
	}
	// The chain is walkable: the new record names its parent.
	c := clear("k3", a.NewSessionID)
	if c.OldSessionID != a.NewSessionID {
		t.Fatalf("clear of the new session: %+v", c)
	}
}

// Two principals share session ids without sharing history (the host's
// per-principal KV), and a second session does not see the first.
func TestSessionsAndPrincipalsAreIsolated(t *testing.T) {
	k := boot(t)
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "alice's secret")}})
	k.SessionPublish("bob", session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "bob's")}})
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "s2", "messages": []ipc.Message{text(ipc.RoleUser, "other session")}})
	for _, tc := range []struct{ principal, id, want string }{
		{"alice", "s1", "alice's secret"}, {"bob", "s1", "bob's"}, {"alice", "s2", "other session"},
	} {
		got := getMessages(t, k, tc.principal, map[string]any{"session_id": tc.id, "correlation_id": "q-" + tc.principal + "-" + tc.id})
		if len(got) != 1 {
			t.Fatalf("%s/%s: %d messages, want 1: %+v", tc.principal, tc.id, len(got), got)
		}
		if s, _ := got[0].Text(); s != tc.want {
			t.Fatalf("%s/%s: %q, want %q", tc.principal, tc.id, s, tc.want)
		}
	}
	if got := getMessages(t, k, "bob", map[string]any{"session_id": "s2", "correlation_id": "q-bob-s2"}); len(got) != 0 {
		t.Fatalf("bob sees alice's second session: %+v", got)
	}
}

// A session id that could escape its key (dots, slashes) or is otherwise
// not [A-Za-z0-9_-]{1,64} is refused with an error naming the problem, and
// nothing is written under it.
func TestBadSessionIDIsAnsweredWithAClearError(t *testing.T) {
	k := boot(t)
	for i, id := range []string{"a.b", "../etc", "a/b", "a b", "é", strings.Repeat("x", 65), "*", "a\x00b"} {
		corr := "bad-" + string(rune('a'+i))
		for _, op := range []struct{ topic, op string }{{session.GetMessagesTopic, session.OpGetMessages}, {session.ClearTopic, session.OpClear}} {
			msg := errorReply(t, k, op.topic, op.op, map[string]any{"session_id": id, "correlation_id": corr, "append_before_read": true,
				"messages": []ipc.Message{text(ipc.RoleUser, "x")}})
			if !strings.Contains(msg, "session id") {
				t.Errorf("%s %q: error %q does not say what is wrong", op.op, id, msg)
			}
		}
	}
	// A bad id's append is dropped: the ids that differ only by the bad
	// bytes hold nothing.
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "a.b", "messages": []ipc.Message{text(ipc.RoleUser, "x")}})
	for _, id := range []string{"a", "b", "ab", "a_b"} {
		if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": id, "correlation_id": "chk-" + id}); len(got) != 0 {
			t.Fatalf("%q holds %+v", id, got)
		}
	}
	// A payload that does not decode, with a usable correlation id, is
	// answered too.
	raw := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, `{"correlation_id":"dec","session_id":7}`,
		session.ReplyTopic(session.OpGetMessages, "dec"))
	var e session.ErrorReply
	if err := json.Unmarshal(raw, &e); err != nil || !strings.Contains(e.Error, "does not decode") || e.CorrelationID != "dec" {
		t.Fatalf("undecodable request: %s", raw)
	}
}

// A correlation id that is missing or cannot name one reply topic segment
// has nowhere to be answered: it is logged and dropped, never published on
// some other topic. The capsule's calls for a principal run in order, so
// the first reply heard after publishing the bad requests and then a good
// one must be the good one's.
func TestBadCorrelationIDIsDropped(t *testing.T) {
	k := boot(t)
	replies := k.SessionListen(ipc.DefaultPrincipal, "session.v1.response.*")
	for _, corr := range []any{nil, "", "a.b", "a*", "*", "a b", strings.Repeat("c", 300)} {
		for _, topic := range []string{session.GetMessagesTopic, session.ClearTopic} {
			req := map[string]any{"session_id": "s1"}
			if corr != nil {
				req["correlation_id"] = corr
			}
			k.SessionPublish(ipc.DefaultPrincipal, topic, req)
		}
	}
	k.SessionPublish(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]any{"session_id": "s1", "correlation_id": "good"})
	topic, raw := replies.Next()
	if topic != session.ReplyTopic(session.OpGetMessages, "good") {
		t.Fatalf("first reply on %s (%s), want the good request's", topic, raw)
	}
}

// A record written by a newer schema, or one that does not decode, is read
// as empty (and logged) rather than misread, and the next append starts it
// afresh at this schema.
func TestUnknownRecordsStartFresh(t *testing.T) {
	for name, stored := range map[string]string{
		"future":     `{"schema_version": 3, "messages": [{"role": "user", "content": "from the future"}]}`,
		"unreadable": `{"schema_version": 1, "messages": 7}`,
	} {
		t.Run(name, func(t *testing.T) {
			k := sdktest.New(t, sdktest.Capsule{Manifest: session.Manifest, New: session.New,
				KV: map[string]map[string]string{ipc.DefaultPrincipal: {session.Key("s1"): stored}}})
			if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "g1"}); len(got) != 0 {
				t.Fatalf("read %+v from a record this schema does not know", got)
			}
			k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "now")}})
			got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "g2"})
			if len(got) != 1 {
				t.Fatalf("after an append: %+v", got)
			}
		})
	}
}

// A record without schema_version (written before versions) or of v1 is
// read, and written back as the current version with its times.
func TestUnversionedRecordIsRead(t *testing.T) {
	for name, stored := range map[string]string{
		"unversioned": `{"messages": [{"role": "user", "content": "old"}]}`,
		"v1":          `{"schema_version": 1, "parent_session_id": "p", "messages": [{"role": "user", "content": "old"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			k := sdktest.New(t, sdktest.Capsule{Manifest: session.Manifest, New: session.New,
				KV: map[string]map[string]string{ipc.DefaultPrincipal: {session.Key("s1"): stored}}})
			if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "g1"}); len(got) != 1 {
				t.Fatalf("old record: %+v", got)
			}
			k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, "new")}})
			meta := ask[session.MetaReply](t, k, ipc.DefaultPrincipal, session.GetMetaTopic, session.OpGetMeta, map[string]any{"session_id": "s1", "correlation_id": "m1"})
			if meta.Session == nil || meta.Session.MessageCount != 2 || meta.Session.CreatedAt == 0 || meta.Session.UpdatedAt < meta.Session.CreatedAt {
				t.Fatalf("after an append: %+v", meta.Session)
			}
		})
	}
}

func ask[T any](t *testing.T, k *sdktest.Kernel, principal, topic, op string, req map[string]any) T {
	t.Helper()
	raw := k.SessionAsk(principal, topic, req, session.ReplyTopic(op, req["correlation_id"].(string)))
	var got T
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s reply %s: %v", op, raw, err)
	}
	if strings.Contains(string(raw), `"error"`) {
		t.Fatalf("%s reply is an error: %s", op, raw)
	}
	return got
}

// list pages through a principal's sessions in id order with summaries;
// get_meta describes one (null when absent) and names a cleared session's
// parent; delete removes only the named session.
func TestListGetMetaDelete(t *testing.T) {
	k := boot(t)
	long := strings.Repeat("é", 100)
	for _, id := range []string{"b", "a", "c"} {
		k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": id, "messages": []ipc.Message{
			text(ipc.RoleAssistant, "not the preview"), text(ipc.RoleUser, "  first\n\tquestion of "+id+" "+long), text(ipc.RoleUser, "second")}})
	}
	k.SessionPublish("bob", session.AppendTopic, map[string]any{"session_id": "z", "messages": []ipc.Message{text(ipc.RoleUser, "bob")}})

	page := ask[session.ListReply](t, k, "alice", session.ListTopic, session.OpList, map[string]any{"correlation_id": "l1", "limit": 2})
	if page.Total != 3 || len(page.Sessions) != 2 || page.Sessions[0].SessionID != "a" || page.Sessions[1].SessionID != "b" || page.NextCursor != "b" {
		t.Fatalf("first page: %+v", page)
	}
	s := page.Sessions[0]
	if s.MessageCount != 3 || utf8.RuneCountInString(s.Preview) != session.PreviewRunes || !strings.HasPrefix(s.Preview, "first question of a é") || !strings.HasSuffix(s.Preview, "…") {
		t.Fatalf("summary: %+v (%d runes)", s, utf8.RuneCountInString(s.Preview))
	}
	page = ask[session.ListReply](t, k, "alice", session.ListTopic, session.OpList, map[string]any{"correlation_id": "l2", "limit": 2, "cursor": page.NextCursor})
	if len(page.Sessions) != 1 || page.Sessions[0].SessionID != "c" || page.NextCursor != "" {
		t.Fatalf("second page: %+v", page)
	}
	if bob := ask[session.ListReply](t, k, "bob", session.ListTopic, session.OpList, map[string]any{"correlation_id": "l3"}); bob.Total != 1 || bob.Sessions[0].SessionID != "z" || bob.Sessions[0].Preview != "bob" {
		t.Fatalf("bob's list: %+v", bob)
	}

	cleared := ask[session.ClearReply](t, k, "alice", session.ClearTopic, session.OpClear, map[string]any{"session_id": "a", "correlation_id": "c1"})
	meta := ask[session.MetaReply](t, k, "alice", session.GetMetaTopic, session.OpGetMeta, map[string]any{"session_id": cleared.NewSessionID, "correlation_id": "m1"})
	if meta.Session == nil || meta.Session.ParentSessionID != "a" || meta.Session.MessageCount != 0 {
		t.Fatalf("cleared session's meta: %+v", meta.Session)
	}
	if meta := ask[session.MetaReply](t, k, "bob", session.GetMetaTopic, session.OpGetMeta, map[string]any{"session_id": "a", "correlation_id": "m2"}); meta.Session != nil {
		t.Fatalf("bob sees alice's session: %+v", meta.Session)
	}

	if del := ask[session.DeleteReply](t, k, "bob", session.DeleteTopic, session.OpDelete, map[string]any{"session_id": "b", "correlation_id": "d0"}); del.Deleted {
		t.Fatal("bob deleted alice's session")
	}
	if del := ask[session.DeleteReply](t, k, "alice", session.DeleteTopic, session.OpDelete, map[string]any{"session_id": "b", "correlation_id": "d1"}); !del.Deleted {
		t.Fatal("delete of an existing session says it deleted nothing")
	}
	if del := ask[session.DeleteReply](t, k, "alice", session.DeleteTopic, session.OpDelete, map[string]any{"session_id": "b", "correlation_id": "d2"}); del.Deleted {
		t.Fatal("a second delete says it deleted something")
	}
	page = ask[session.ListReply](t, k, "alice", session.ListTopic, session.OpList, map[string]any{"correlation_id": "l4"})
	var ids []string
	for _, s := range page.Sessions {
		ids = append(ids, s.SessionID)
	}
	if want := []string{"a", "c", cleared.NewSessionID}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("after delete: %q, want %q", ids, want)
	}
	if msg := errorReply(t, k, session.DeleteTopic, session.OpDelete, map[string]any{"session_id": "a/../c", "correlation_id": "d3"}); !strings.Contains(msg, "session id") {
		t.Fatalf("bad id on delete: %q", msg)
	}
}

// A list with one message that is not a message is refused whole: nothing
// is written half. A fire-and-forget append is dropped (logged); an
// append_before_read is answered with the decode error.
func TestMalformedMessagesWriteNothing(t *testing.T) {
	k := boot(t)
	bad := `[{"role": "user", "content": "fine"}, {"role": "user", "content": 5}]`
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, `{"session_id": "s1", "messages": `+bad+`}`)
	raw := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic,
		`{"session_id": "s1", "correlation_id": "r1", "append_before_read": true, "messages": `+bad+`}`,
		session.ReplyTopic(session.OpGetMessages, "r1"))
	var e session.ErrorReply
	if err := json.Unmarshal(raw, &e); err != nil || !strings.Contains(e.Error, "does not decode") {
		t.Fatalf("append_before_read of a malformed list: %s", raw)
	}
	if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "r2"}); len(got) != 0 {
		t.Fatalf("half a list was written: %+v", got)
	}
}

// A request wrapped as {"data": {...}} (what SDK ≤ 0.5 delivered, spec §1)
// is read like the bare one.
func TestWrappedRequestIsRead(t *testing.T) {
	k := boot(t)
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"data": map[string]any{"session_id": "w", "messages": []ipc.Message{text(ipc.RoleUser, "wrapped")}}})
	raw := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]any{"data": map[string]any{"session_id": "w", "correlation_id": "w1"}},
		session.ReplyTopic(session.OpGetMessages, "w1"))
	var got session.MessagesReply
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Messages) != 1 {
		t.Fatalf("wrapped request: %s (%v)", raw, err)
	}
}

// A session that would outgrow one KV value (1 MiB) is not written: the
// append_before_read that would overflow it is answered with the error and
// the session keeps what it had.
func TestOverfullSessionIsRefusedWhole(t *testing.T) {
	k := boot(t)
	big := strings.Repeat("w", 600<<10)
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{text(ipc.RoleUser, big)}})
	msg := errorReply(t, k, session.GetMessagesTopic, session.OpGetMessages, map[string]any{"session_id": "s1", "correlation_id": "r1",
		"append_before_read": true, "messages": []ipc.Message{text(ipc.RoleAssistant, big)}})
	if !strings.Contains(msg, "write") {
		t.Fatalf("overflow error %q does not say the write failed", msg)
	}
	if got := getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "r2"}); len(got) != 1 {
		t.Fatalf("after a refused append: %d messages", len(got))
	}
}

// search finds a case-insensitive substring in text messages only, counts
// its matches, cuts a snippet around the first, stays within the
// principal, and refuses an empty query.
func TestSearch(t *testing.T) {
	k := boot(t)
	long := strings.Repeat("ä ", 100)
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{
		text(ipc.RoleUser, long+"Where is the ÜBER config? "+long), text(ipc.RoleAssistant, "the über config is in home."),
		{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallSuccess("c1", "über über")}}}})
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "s2", "messages": []ipc.Message{text(ipc.RoleUser, "nothing here")}})
	k.SessionPublish("bob", session.AppendTopic, map[string]any{"session_id": "b1", "messages": []ipc.Message{text(ipc.RoleUser, "über")}})

	got := ask[session.SearchReply](t, k, "alice", session.SearchTopic, session.OpSearch, map[string]any{"correlation_id": "q1", "query": " Über Config "})
	if len(got.Hits) != 1 || got.NextCursor != "" {
		t.Fatalf("hits: %+v", got)
	}
	h := got.Hits[0]
	if h.SessionID != "s1" || h.MatchCount != 2 {
		t.Fatalf("hit: %+v (tool results must not count)", h)
	}
	if n := utf8.RuneCountInString(h.Snippet); n > session.SnippetRunes || !strings.Contains(h.Snippet, "ÜBER config") ||
		!strings.HasPrefix(h.Snippet, "…") || !strings.HasSuffix(h.Snippet, "…") {
		t.Fatalf("snippet %q (%d runes)", h.Snippet, n)
	}
	if msg := errorReply(t, k, session.SearchTopic, session.OpSearch, map[string]any{"correlation_id": "q2", "query": "  "}); !strings.Contains(msg, "empty") {
		t.Fatalf("empty query: %q", msg)
	}
	if got := ask[session.SearchReply](t, k, "bob", session.SearchTopic, session.OpSearch, map[string]any{"correlation_id": "q3", "query": "config"}); len(got.Hits) != 0 {
		t.Fatalf("bob finds alice's sessions: %+v", got)
	}
}

// A search reads at most MaxSearchScan records per call and hands back a
// cursor to go on from; following it finds every hit once. (The sessions
// are seeded in KV: as many fire-and-forget appends would overflow the
// capsule's call queue.)
func TestSearchPagesThroughManySessions(t *testing.T) {
	const sessions = session.MaxSearchScan + 30
	seed := map[string]string{}
	want := 0
	for i := range sessions {
		body := "hay"
		if i%10 == 0 {
			body, want = "a needle", want+1
		}
		seed[session.Key(fmt.Sprintf("s%04d", i))] = `{"schema_version": 1, "messages": [{"role": "user", "content": "` + body + `"}]}`
	}
	k := sdktest.New(t, sdktest.Capsule{Manifest: session.Manifest, New: session.New, KV: map[string]map[string]string{ipc.DefaultPrincipal: seed}})
	seen := map[string]bool{}
	cursor, calls := "", 0
	for {
		got := ask[session.SearchReply](t, k, ipc.DefaultPrincipal, session.SearchTopic, session.OpSearch,
			map[string]any{"correlation_id": "p" + strconv.Itoa(calls), "query": "needle", "limit": session.MaxSearchLimit, "cursor": cursor})
		calls++
		for _, h := range got.Hits {
			if seen[h.SessionID] {
				t.Fatalf("%s found twice", h.SessionID)
			}
			seen[h.SessionID] = true
		}
		if got.NextCursor == "" {
			break
		}
		if calls == 1 && (len(got.Hits) != session.MaxSearchScan/10 || got.NextCursor != fmt.Sprintf("s%04d", session.MaxSearchScan-1)) {
			t.Fatalf("first call: %d hits, cursor %q: it did not stop after %d records", len(got.Hits), got.NextCursor, session.MaxSearchScan)
		}
		cursor = got.NextCursor
	}
	if len(seen) != want || calls != 2 {
		t.Fatalf("found %d of %d sessions in %d calls, want 2 calls", len(seen), want, calls)
	}
}

// update sets title, archived and meta (absent fields kept, an empty
// string clears), refuses an unknown session and an oversized meta; list
// and search leave archived sessions out unless asked.
func TestUpdateAndArchived(t *testing.T) {
	k := boot(t)
	for _, id := range []string{"a", "b"} {
		k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": id, "messages": []ipc.Message{text(ipc.RoleUser, "findme "+id)}})
	}
	update := func(corr string, fields map[string]any) *session.Summary {
		t.Helper()
		fields["correlation_id"] = corr
		return ask[session.MetaReply](t, k, ipc.DefaultPrincipal, session.UpdateTopic, session.OpUpdate, fields).Session
	}
	s := update("u1", map[string]any{"session_id": "a", "title": "Plans", "meta": `{"pinned":true}`})
	if s == nil || s.Title != "Plans" || s.Meta != `{"pinned":true}` || s.Archived || s.MessageCount != 1 {
		t.Fatalf("after update: %+v", s)
	}
	s = update("u2", map[string]any{"session_id": "a", "archived": true, "title": ""})
	if s.Title != "" || s.Meta != `{"pinned":true}` || !s.Archived {
		t.Fatalf("after archive and title clear: %+v", s)
	}
	list := ask[session.ListReply](t, k, ipc.DefaultPrincipal, session.ListTopic, session.OpList, map[string]any{"correlation_id": "l1"})
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != "b" || list.Total != 2 {
		t.Fatalf("list without archived: %+v", list)
	}
	list = ask[session.ListReply](t, k, ipc.DefaultPrincipal, session.ListTopic, session.OpList, map[string]any{"correlation_id": "l2", "include_archived": true})
	if len(list.Sessions) != 2 || !list.Sessions[0].Archived {
		t.Fatalf("list with archived: %+v", list)
	}
	found := ask[session.SearchReply](t, k, ipc.DefaultPrincipal, session.SearchTopic, session.OpSearch, map[string]any{"correlation_id": "q1", "query": "findme"})
	if len(found.Hits) != 1 || found.Hits[0].SessionID != "b" {
		t.Fatalf("search without archived: %+v", found)
	}
	found = ask[session.SearchReply](t, k, ipc.DefaultPrincipal, session.SearchTopic, session.OpSearch, map[string]any{"correlation_id": "q2", "query": "findme", "include_archived": true})
	if len(found.Hits) != 2 {
		t.Fatalf("search with archived: %+v", found)
	}
	if msg := errorReply(t, k, session.UpdateTopic, session.OpUpdate, map[string]any{"session_id": "nope", "correlation_id": "u3", "title": "x"}); !strings.Contains(msg, "no session") {
		t.Fatalf("update of an unknown session: %q", msg)
	}
	if msg := errorReply(t, k, session.UpdateTopic, session.OpUpdate, map[string]any{"session_id": "b", "correlation_id": "u4", "meta": strings.Repeat("m", session.MaxMetaBytes+1)}); !strings.Contains(msg, "limit") {
		t.Fatalf("oversized meta: %q", msg)
	}
	if msg := errorReply(t, k, session.UpdateTopic, session.OpUpdate, map[string]any{"session_id": "b", "correlation_id": "u5", "workspace": strings.Repeat("w", session.MaxWorkspaceBytes+1)}); !strings.Contains(msg, "limit") {
		t.Fatalf("oversized workspace: %q", msg)
	}
	// The refused updates changed nothing.
	if meta := ask[session.MetaReply](t, k, ipc.DefaultPrincipal, session.GetMetaTopic, session.OpGetMeta, map[string]any{"session_id": "b", "correlation_id": "m1"}); meta.Session.Meta != "" || meta.Session.Workspace != "" {
		t.Fatalf("b after a refused update: %+v", meta.Session)
	}
	// A workspace is kept and reported; every write stamps milliseconds.
	s = update("u6", map[string]any{"session_id": "b", "workspace": "/home/ada/project"})
	if s.Workspace != "/home/ada/project" || s.UpdatedAtMs/1000 != s.UpdatedAt {
		t.Fatalf("after the workspace update: %+v", s)
	}
}

// Every write is announced after it is made: an append to a new session
// as created, to an existing one as updated (with the new count), clear's
// new session as created, update as updated, delete as deleted; an empty
// append and a read announce nothing.
func TestEventsFollowWrites(t *testing.T) {
	k := boot(t)
	events := k.SessionListen(ipc.DefaultPrincipal, "session.v1.event.*")
	one := []ipc.Message{text(ipc.RoleUser, "hi")}
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": one})
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": []ipc.Message{}})
	getMessages(t, k, ipc.DefaultPrincipal, map[string]any{"session_id": "s1", "correlation_id": "g1"})
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": one})
	cleared := ask[session.ClearReply](t, k, ipc.DefaultPrincipal, session.ClearTopic, session.OpClear, map[string]any{"session_id": "s1", "correlation_id": "c1"})
	ask[session.MetaReply](t, k, ipc.DefaultPrincipal, session.UpdateTopic, session.OpUpdate, map[string]any{"session_id": "s1", "correlation_id": "u1", "title": "T"})
	ask[session.DeleteReply](t, k, ipc.DefaultPrincipal, session.DeleteTopic, session.OpDelete, map[string]any{"session_id": "s1", "correlation_id": "d1"})
	for i, want := range []struct {
		kind, id string
		count    int
		title    string
	}{
		{session.EventCreated, "s1", 1, ""}, {session.EventUpdated, "s1", 2, ""},
		{session.EventCreated, cleared.NewSessionID, 0, ""}, {session.EventUpdated, "s1", 2, "T"}, {session.EventDeleted, "s1", -1, ""},
	} {
		topic, raw := events.Next()
		var ev session.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if topic != session.EventTopic(want.kind) || ev.Kind != want.kind || ev.SessionID != want.id {
			t.Fatalf("event %d: %s %s, want %s %s", i, topic, raw, want.kind, want.id)
		}
		switch {
		case want.count < 0 && ev.Summary != nil:
			t.Fatalf("event %d: a deleted session has a summary: %s", i, raw)
		case want.count >= 0 && (ev.Summary == nil || ev.Summary.MessageCount != want.count || ev.Summary.Title != want.title):
			t.Fatalf("event %d: summary %s, want %d messages, title %q", i, raw, want.count, want.title)
		}
	}
}

// A scoped listener hears only its own principal's events: bob's first
// event is about his append, not alice's earlier one.
func TestEventsStayWithTheirPrincipal(t *testing.T) {
	k := boot(t)
	bob := k.SessionListen("bob", "session.v1.event.*")
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "alice-only", "messages": []ipc.Message{text(ipc.RoleUser, "secret")}})
	getMessages(t, k, "alice", map[string]any{"session_id": "alice-only", "correlation_id": "g1"})
	k.SessionPublish("bob", session.AppendTopic, map[string]any{"session_id": "bobs", "messages": []ipc.Message{text(ipc.RoleUser, "mine")}})
	_, raw := bob.Next()
	var ev session.Event
	if err := json.Unmarshal(raw, &ev); err != nil || ev.SessionID != "bobs" {
		t.Fatalf("bob heard %s (%v)", raw, err)
	}
}

// The agent tools read the calling principal's history: list_threads and
// search_conversations find alice's session (not bob's), get_thread returns
// its last messages, and a bad or unknown id is an error result.
func TestAgentTools(t *testing.T) {
	k := boot(t)
	k.SessionPublish("alice", session.AppendTopic, map[string]any{"session_id": "trip", "messages": []ipc.Message{
		text(ipc.RoleUser, "plan a trip to Lisbon"), text(ipc.RoleAssistant, "Day one: Alfama."), text(ipc.RoleUser, "and day two?")}})
	k.SessionPublish("bob", session.AppendTopic, map[string]any{"session_id": "bobs", "messages": []ipc.Message{text(ipc.RoleUser, "Lisbon too")}})
	getMessages(t, k, "bob", map[string]any{"session_id": "bobs", "correlation_id": "sync"})

	res := k.CallToolAs("alice", "list_threads", `{}`)
	var list session.ListReply
	if res.IsError || json.Unmarshal([]byte(res.Content), &list) != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionID != "trip" || list.Sessions[0].MessageCount != 3 {
		t.Fatalf("list_threads: %+v", res)
	}
	res = k.CallToolAs("alice", "search_conversations", `{"query": "lisbon"}`)
	var found session.SearchReply
	if res.IsError || json.Unmarshal([]byte(res.Content), &found) != nil || len(found.Hits) != 1 || found.Hits[0].SessionID != "trip" {
		t.Fatalf("search_conversations: %+v", res)
	}
	res = k.CallToolAs("alice", "get_thread", `{"session_id": "trip", "limit": 2}`)
	var thread struct {
		Messages []ipc.Message `json:"messages"`
	}
	if res.IsError || json.Unmarshal([]byte(res.Content), &thread) != nil || len(thread.Messages) != 2 {
		t.Fatalf("get_thread: %+v", res)
	}
	if s, _ := thread.Messages[1].Text(); s != "and day two?" {
		t.Fatalf("get_thread's last message %q", s)
	}
	for _, args := range []string{`{"session_id": "bobs"}`, `{"session_id": "../trip"}`} {
		if res := k.CallToolAs("alice", "get_thread", args); !res.IsError {
			t.Fatalf("get_thread %s: %+v", args, res)
		}
	}
	// Only reading: none of the tools is mutable.
	for _, tool := range k.Tools() {
		if strings.Contains("list_threads get_thread search_conversations", tool.Name) && tool.Mutable {
			t.Fatalf("%s is mutable", tool.Name)
		}
	}
}
