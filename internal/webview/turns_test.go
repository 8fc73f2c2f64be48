package webview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// envelope builds an event of a turn as the bus carries it.
func envelope(t *testing.T, topic, principal string, at time.Time, payload any) *ipc.Envelope {
	t.Helper()
	var raw json.RawMessage
	var err error
	switch p := payload.(type) {
	case ipc.AgentResponse:
		raw, err = ipc.EncodePayload(p)
	case ipc.UserInput:
		raw, err = ipc.EncodePayload(p)
	default:
		raw, err = json.Marshal(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &ipc.Envelope{Topic: topic, Principal: principal, Timestamp: at.UnixNano(), Payload: raw}
}

func prompt(t *testing.T, r *recorder, principal, session, turn, text string, at time.Time) {
	t.Helper()
	ctx, _ := json.Marshal(ipc.PromptContext{TurnID: turn})
	r.observe(envelope(t, ipc.UserPromptTopic, principal, at, ipc.UserInput{Text: text, SessionID: session, Context: ctx}))
}

// A turn runs from its prompt to its final response, its tool calls with
// their timings in between; a cancel, a partial response and another
// principal's events do not touch it; the recent list keeps the newest.
func TestRecorderFollowsTurns(t *testing.T) {
	r := newRecorder(2)
	t0 := time.Unix(1000, 0).UTC()
	prompt(t, r, "alice", "s1", "t1", "read the README", t0)
	r.observe(envelope(t, ipc.AgentToolStartedTopic, "alice", t0.Add(time.Second), ipc.AgentToolStarted{
		SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"README.md"}`)}))
	cancel, _ := json.Marshal(ipc.PromptContext{Action: ipc.ActionCancelTurn, TurnID: "t1"})
	r.observe(envelope(t, ipc.UserPromptTopic, "alice", t0, ipc.UserInput{SessionID: "s1", Context: cancel}))
	r.observe(envelope(t, ipc.AgentResponseTopic, "alice", t0, ipc.AgentResponse{SessionID: "s1", TurnID: "t1", Text: "partial"}))
	r.observe(envelope(t, ipc.AgentResponseTopic, "bob", t0, ipc.AgentResponse{SessionID: "s1", TurnID: "t1", IsFinal: true, Outcome: ipc.OutcomeAnswer}))

	s := r.snapshot()
	if len(s.Running) != 1 || len(s.Recent) != 0 {
		t.Fatalf("running %d, recent %d; want 1 and 0", len(s.Running), len(s.Recent))
	}
	run := s.Running[0]
	if run.Prompt != "read the README" || len(run.Tools) != 1 || run.Tools[0].Name != "read_file" || run.Tools[0].Finished {
		t.Fatalf("running turn %+v", run)
	}
	r.observe(envelope(t, ipc.AgentToolFinishedTopic, "alice", t0.Add(2*time.Second), ipc.AgentToolFinished{
		SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", DurationMS: 42, Summary: "# A project"}))
	r.observe(envelope(t, ipc.AgentResponseTopic, "alice", t0.Add(3*time.Second), ipc.AgentResponse{SessionID: "s1", TurnID: "t1", IsFinal: true, Outcome: ipc.OutcomeAnswer}))
	s = r.snapshot()
	if len(s.Running) != 0 || len(s.Recent) != 1 {
		t.Fatalf("after the final response: running %d, recent %d", len(s.Running), len(s.Recent))
	}
	done := s.Recent[0]
	if done.Outcome != ipc.OutcomeAnswer || done.DurationMS != 3000 || !done.Tools[0].Finished || done.Tools[0].DurationMS != 42 || done.Tools[0].Summary != "# A project" {
		t.Fatalf("ended turn %+v", done)
	}

	for i, turn := range []string{"t2", "t3", "t4"} {
		at := t0.Add(time.Duration(10+i) * time.Second)
		prompt(t, r, "alice", "s1", turn, "next", at)
		r.observe(envelope(t, ipc.AgentResponseTopic, "alice", at, ipc.AgentResponse{SessionID: "s1", TurnID: turn, IsFinal: true, Outcome: ipc.OutcomeCancelled}))
	}
	s = r.snapshot()
	if len(s.Recent) != 2 || s.Recent[0].TurnID != "t4" || s.Recent[1].TurnID != "t3" {
		t.Fatalf("recent %+v, want t4 then t3", s.Recent)
	}
}

// Whatever the bus carries, the recorder stays bounded: running turns that
// never end, tool calls past maxToolsPerTurn, long texts.
func TestRecorderIsBounded(t *testing.T) {
	r := newRecorder(5)
	t0 := time.Unix(1000, 0).UTC()
	for i := range maxRunningTurns + 10 {
		prompt(t, r, "p", "s", "t"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)), strings.Repeat("long ", 100), t0.Add(time.Duration(i)*time.Millisecond))
	}
	s := r.snapshot()
	if len(s.Running) != maxRunningTurns {
		t.Fatalf("%d running turns kept, want %d", len(s.Running), maxRunningTurns)
	}
	if n := len([]rune(s.Running[0].Prompt)); n != maxTextRunes+1 {
		t.Fatalf("prompt of %d runes kept", n)
	}
	for i := range maxToolsPerTurn + 3 {
		r.observe(envelope(t, ipc.AgentToolStartedTopic, "q", t0, ipc.AgentToolStarted{SessionID: "s", CallID: string(rune('a' + i%26)), Name: "x"}))
	}
	for _, turn := range r.snapshot().Running {
		if turn.Principal == "q" && (len(turn.Tools) != maxToolsPerTurn || turn.ToolsLeftOut != 3) {
			t.Fatalf("tools %d, left out %d", len(turn.Tools), turn.ToolsLeftOut)
		}
	}
}
