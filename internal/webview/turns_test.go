package webview

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
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

// A compaction of the turn's session shows on the turn, as the line the
// other frontends print; another turn's does not.
func TestRecorderShowsCompactions(t *testing.T) {
	r := newRecorder(2)
	t0 := time.Unix(1000, 0).UTC()
	prompt(t, r, "alice", "s1", "t1", "go on", t0)
	r.observe(envelope(t, ipc.AgentCompactedTopic, "alice", t0, ipc.AgentCompacted{SessionID: "s1", TurnID: "t1", OK: true, Messages: 40, TokensBefore: 9000, TokensAfter: 2000, Window: 10000}))
	r.observe(envelope(t, ipc.AgentCompactedTopic, "alice", t0, ipc.AgentCompacted{SessionID: "s1", TurnID: "t1", Reason: "the model returned an empty summary"}))
	r.observe(envelope(t, ipc.AgentResponseTopic, "alice", t0, ipc.AgentResponse{SessionID: "s1", TurnID: "t1", IsFinal: true, Outcome: ipc.OutcomeAnswer}))
	s := r.snapshot()
	if len(s.Recent) != 1 || len(s.Recent[0].Compactions) != 2 ||
		!strings.Contains(s.Recent[0].Compactions[0], "the first 40 messages were summarized") ||
		!strings.Contains(s.Recent[0].Compactions[1], "empty summary") {
		t.Fatalf("turns %+v", s)
	}
}

// The view reads each turn topic on its own route, so a fast call's
// events come in any order: its finish before its start, the turn's final
// response before either. Every order shows the call finished, in the
// ended turn, and leaves nothing running.
func TestRecorderTakesEventsInAnyOrder(t *testing.T) {
	t0 := time.Unix(1000, 0).UTC()
	started := func(r *recorder) {
		r.observe(envelope(t, ipc.AgentToolStartedTopic, "alice", t0.Add(time.Second), ipc.AgentToolStarted{
			SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"README.md"}`)}))
	}
	finished := func(r *recorder) {
		r.observe(envelope(t, ipc.AgentToolFinishedTopic, "alice", t0.Add(2*time.Second), ipc.AgentToolFinished{
			SessionID: "s1", TurnID: "t1", CallID: "c1", Name: "read_file", DurationMS: 42, Summary: "# A project"}))
	}
	final := func(r *recorder) {
		r.observe(envelope(t, ipc.AgentResponseTopic, "alice", t0.Add(3*time.Second), ipc.AgentResponse{SessionID: "s1", TurnID: "t1", IsFinal: true, Outcome: ipc.OutcomeAnswer}))
	}
	for name, order := range map[string][]func(*recorder){
		"start, finish, final": {started, finished, final},
		"finish, start, final": {finished, started, final},
		"start, final, finish": {started, final, finished},
		"final, finish, start": {final, finished, started},
		"finish, final, start": {finished, final, started},
	} {
		r := newRecorder(4)
		prompt(t, r, "alice", "s1", "t1", "read the README", t0)
		for _, f := range order {
			f(r)
		}
		s := r.snapshot()
		if len(s.Running) != 0 || len(s.Recent) != 1 || len(s.Recent[0].Tools) != 1 {
			t.Fatalf("%s: running %+v, recent %+v", name, s.Running, s.Recent)
		}
		c := s.Recent[0].Tools[0]
		if !c.Finished || c.IsError || c.DurationMS != 42 || c.Arguments != `{"file_path":"README.md"}` || c.Summary != "# A project" {
			t.Errorf("%s: call %+v", name, c)
		}
	}
}

// A write's and an edit's call carry their change, bounded, for the page
// to show as a diff; other calls and unreadable arguments carry none.
func TestToolCallChange(t *testing.T) {
	long := strings.Repeat("line\n", maxChangeLines+5)
	for _, c := range []struct {
		tool, args string
		want       *Change
	}{
		{"replace_in_file", `{"file_path":"a.go","old_string":"x := 1","new_string":"x := 2\ny := 3"}`, &Change{Path: "a.go", Removed: []string{"x := 1"}, Added: []string{"x := 2", "y := 3"}}},
		{"write_file", `{"file_path":"n.txt","content":"hello\n"}`, &Change{Path: "n.txt", Added: []string{"hello"}}},
		{"read_file", `{"file_path":"a.go"}`, nil},
		{"write_file", `{"file_path":"a.go","content":` + strconv.Quote(long) + `}`, &Change{Path: "a.go", Added: slices.Repeat([]string{"line"}, maxChangeLines), LeftOut: 5}},
		{"write_file", `{"file_path":`, nil},
	} {
		got := changeOf(c.tool, json.RawMessage(c.args))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("changeOf(%s, %s) = %+v, want %+v", c.tool, c.args, got, c.want)
		}
	}
}

// A value a capsule asks for is pending once per (principal, capsule,
// key) until a call or turn of that principal ends after it was asked;
// another principal's events leave it; the list is bounded.
func TestRecorderShowsPendingOnboarding(t *testing.T) {
	r := newRecorder(2)
	t0 := time.Now().UTC()
	ask := func(principal, key string, at time.Time) {
		r.observe(envelope(t, ipc.OnboardingTopic, principal, at, ipc.OnboardingRequired{CapsuleID: "weather",
			Fields: []ipc.OnboardingField{{Key: key, Prompt: "value of " + key, FieldType: ipc.FieldType{Kind: ipc.FieldText}}}}))
	}
	ask("alice", "API_KEY", t0)
	ask("alice", "API_KEY", t0.Add(time.Millisecond)) // asked again: one entry
	ask("bob", "API_KEY", t0)
	if got := r.snapshot().Onboarding; len(got) != 2 || got[0].Principal != "alice" || got[1].Principal != "bob" || got[0].Prompt != "value of API_KEY" || !got[0].Asked.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("pending %+v", got)
	}
	r.observe(envelope(t, ipc.AgentToolFinishedTopic, "bob", t0.Add(time.Second), ipc.AgentToolFinished{SessionID: "s", TurnID: "t", CallID: "c", Name: "weather"}))
	if got := r.snapshot().Onboarding; len(got) != 1 || got[0].Principal != "alice" {
		t.Fatalf("after bob's call ended: %+v", got)
	}
	// A call that ended before the question was asked does not settle it.
	r.observe(envelope(t, ipc.AgentToolFinishedTopic, "alice", t0.Add(-time.Second), ipc.AgentToolFinished{SessionID: "s", TurnID: "t", CallID: "c0", Name: "weather"}))
	if len(r.snapshot().Onboarding) != 1 {
		t.Fatal("an earlier call's end settled a later question")
	}
	r.observe(envelope(t, ipc.AgentResponseTopic, "alice", t0.Add(time.Second), ipc.AgentResponse{SessionID: "s", TurnID: "t", IsFinal: true, Outcome: ipc.OutcomeAnswer}))
	if got := r.snapshot().Onboarding; len(got) != 0 {
		t.Fatalf("after alice's turn ended: %+v", got)
	}
	for i := range maxPending + 5 {
		ask("carol", "K"+strconv.Itoa(i), t0)
	}
	if got := r.snapshot().Onboarding; len(got) != maxPending || got[0].Key != "K5" {
		t.Fatalf("bounded list: %d entries, first %+v", len(got), got[0])
	}
	ask("dave", "OLD", t0.Add(-pendingFor))
	if slices.ContainsFunc(r.snapshot().Onboarding, func(p PendingValue) bool { return p.Principal == "dave" }) {
		t.Fatal("a question older than pendingFor is still shown")
	}
}
