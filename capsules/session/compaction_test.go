package session_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
)

// A compaction is recorded with get_messages and returned with the
// history, which keeps every message; one that does not fit the session
// (an empty or oversized summary, upto outside its messages, no session)
// is refused with the reason and changes nothing.
func TestCompactionRecord(t *testing.T) {
	k := boot(t)
	n := 0
	ask := func(req map[string]any) (session.MessagesReply, string) {
		t.Helper()
		n++
		corr := fmt.Sprintf("c%d", n)
		req["correlation_id"] = corr
		body := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, req, session.ReplyTopic(session.OpGetMessages, corr))
		var r session.MessagesReply
		var e session.ErrorReply
		_ = json.Unmarshal(body, &e)
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		return r, e.Error
	}
	msgs := []ipc.Message{ipc.TextMessage(ipc.RoleUser, "one"), ipc.TextMessage(ipc.RoleAssistant, "1"), ipc.TextMessage(ipc.RoleUser, "two")}
	if _, errText := ask(map[string]any{"session_id": "s1", "append_before_read": true, "messages": msgs}); errText != "" {
		t.Fatal(errText)
	}
	for _, tc := range []struct {
		name string
		comp map[string]any
		want string
	}{
		{"empty summary", map[string]any{"summary": "", "upto": 2}, "the summary is empty"},
		{"upto zero", map[string]any{"summary": "s", "upto": 0}, "outside the session's 1..3 messages"},
		{"upto past the end", map[string]any{"summary": "s", "upto": 4}, "outside the session's 1..3 messages"},
		{"huge summary", map[string]any{"summary": strings.Repeat("s", session.MaxSummaryBytes+1), "upto": 2}, "the limit is"},
	} {
		r, errText := ask(map[string]any{"session_id": "s1", "compaction": tc.comp})
		if !strings.Contains(errText, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.name, errText, tc.want)
		}
		if r.Compaction != nil {
			t.Errorf("%s: a compaction came back: %+v", tc.name, r.Compaction)
		}
	}
	if _, errText := ask(map[string]any{"session_id": "nobody", "compaction": map[string]any{"summary": "s", "upto": 1}}); !strings.Contains(errText, "has no messages") {
		t.Fatalf("a compaction of no session: %q", errText)
	}
	r, errText := ask(map[string]any{"session_id": "s1", "compaction": map[string]any{"summary": "They said one.", "upto": 2}})
	if errText != "" || r.Compaction == nil || r.Compaction.Summary != "They said one." || r.Compaction.Upto != 2 || len(r.Messages) != 3 {
		t.Fatalf("recorded: %+v, %q", r, errText)
	}
	if r, _ = ask(map[string]any{"session_id": "s1"}); r.Compaction == nil || r.Compaction.Upto != 2 {
		t.Fatalf("a plain read lost the compaction: %+v", r)
	}
}
