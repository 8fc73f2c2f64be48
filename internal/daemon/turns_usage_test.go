package daemon

import (
	"encoding/json"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// Each principal's ended turns, their tokens and (for priced models)
// their cost are summed from the final responses; a response that is not
// final, and a prompt, count nothing.
func TestStatusSumsEachPrincipalsTurns(t *testing.T) {
	tr := &turns{running: map[turnKey]bool{}, used: map[string]turnUsage{}, ended: make(chan struct{}, 1)}
	cost := func(v float64) *float64 { return &v }
	send := func(principal, topic string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		tr.observe(&ipc.Envelope{Topic: topic, Principal: principal, Payload: b})
	}
	send("alice", ipc.UserPromptTopic, ipc.UserInput{Text: "hi", SessionID: "s1"})
	send("alice", ipc.AgentResponseTopic, ipc.AgentResponse{Text: "partial", SessionID: "s1"})
	send("alice", ipc.AgentResponseTopic, ipc.AgentResponse{IsFinal: true, SessionID: "s1", Usage: &ipc.Usage{InputTokens: 100, OutputTokens: 10, CachedTokens: 40}, CostUSD: cost(0.25)})
	send("alice", ipc.AgentResponseTopic, ipc.AgentResponse{IsFinal: true, SessionID: "s2", Usage: &ipc.Usage{InputTokens: 50, OutputTokens: 5}, CostUSD: cost(0.5)})
	send("bob", ipc.AgentResponseTopic, ipc.AgentResponse{IsFinal: true, SessionID: "s3", Usage: &ipc.Usage{InputTokens: 7, OutputTokens: 3}})
	send("carol", ipc.AgentResponseTopic, ipc.AgentResponse{IsFinal: true, SessionID: "s4", Outcome: ipc.OutcomeBusy})

	s := Status{Principals: map[string]PrincipalUsage{"alice": {Calls: 9}}}
	tr.usage(&s)
	a, b, c := s.Principals["alice"], s.Principals["bob"], s.Principals["carol"]
	if a.Calls != 9 || a.Turns != 2 || a.InputTokens != 150 || a.OutputTokens != 15 || a.CachedTokens != 40 || a.CostUSD == nil || *a.CostUSD != 0.75 {
		t.Errorf("alice: %+v (cost %v)", a, a.CostUSD)
	}
	if b.Turns != 1 || b.InputTokens != 7 || b.OutputTokens != 3 || b.CostUSD != nil {
		t.Errorf("bob, whose model has no price: %+v", b)
	}
	if c.Turns != 1 || c.InputTokens != 0 {
		t.Errorf("carol, whose turn used nothing: %+v", c)
	}
}
