package webview

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// A tool's progress shows on the principal's running call it names: not on
// another principal's call of the same id, not under another tool's name,
// and the last report stays after the call finished.
func TestRecorderShowsAToolsProgress(t *testing.T) {
	r := newRecorder(2)
	t0 := time.Unix(1000, 0).UTC()
	prompt(t, r, "alice", "s1", "t1", "wait a while", t0)
	prompt(t, r, "bob", "s1", "t1", "wait too", t0)
	for _, p := range []string{"alice", "bob"} {
		r.observe(envelope(t, ipc.AgentToolStartedTopic, p, t0, ipc.AgentToolStarted{
			SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "everything:slow", Arguments: json.RawMessage(`{}`)}))
	}
	progress := func(principal, name string, n float64) {
		r.observe(envelope(t, ipc.AgentToolProgressTopic, principal, t0, ipc.AgentToolProgress{CallID: "c1", Name: name, Progress: n, Total: 5}))
	}
	progress("alice", "everything:slow", 2)
	progress("alice", "other", 3)
	progress("bob", "everything:slow", 4)
	r.observe(envelope(t, ipc.AgentToolFinishedTopic, "alice", t0, ipc.AgentToolFinished{SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "everything:slow", DurationMS: 5}))
	progress("alice", "everything:slow", 5)
	got := map[string]string{}
	for _, turn := range r.snapshot().Running {
		got[turn.Principal] = turn.Tools[0].Progress
	}
	if got["alice"] != "everything:slow: 2/5" || got["bob"] != "everything:slow: 4/5" {
		t.Fatalf("progress shown %q", got)
	}
}
