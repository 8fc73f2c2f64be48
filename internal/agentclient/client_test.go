package agentclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeAgentManifest is a test-only agent that plays fixed events for a
// turn: for the prompt "script", an earlier turn's final on the same
// session, an approval question before the call it is about, the call,
// a delta and the final; for "hang", a delta and then nothing until a
// cancel_turn, answered with a final cancelled.
var fakeAgentManifest = []byte(`
[package]
name = "test-fake-agent"
version = "0.1.0"

[capabilities]
tool_middleware = true

[subscribe]
"user.v1.prompt" = { wit = "opaque", handler = "prompt" }
"tool.v1.request.execute" = { wit = "tool-execute-request", handler = "noop" }
"astrid.v1.approval.response.*" = { wit = "opaque", handler = "answered" }

[publish]
"agent.v1.*" = "opaque"
"astrid.v1.approval" = "opaque"
"astrid.v1.elicit" = "opaque"
`)

func newFakeAgent() *sdk.Capsule {
	c := sdk.New("test fixture: a scripted agent")
	c.Handle(ipc.ToolRequestExecuteTopic, "noop", func(*sdk.Call) error { return nil })
	c.Handle(ipc.UserPromptTopic, "prompt", func(call *sdk.Call) error {
		var in ipc.UserInput
		if err := in.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		var pc ipc.PromptContext
		if err := call.Decode(&struct {
			Context *ipc.PromptContext `json:"context"`
		}{&pc}); err != nil {
			return err
		}
		final := func(turnID, outcome, text string) error {
			p, _ := ipc.EncodePayload(ipc.AgentResponse{Text: text, IsFinal: true, SessionID: in.SessionID, Outcome: outcome, TurnID: turnID})
			return call.Publish(ipc.AgentResponseTopic, p)
		}
		if pc.Action == ipc.ActionCancelTurn {
			return final(pc.TurnID, ipc.OutcomeCancelled, "Cancelled.")
		}
		delta := ipc.AgentStreamDelta{SessionID: in.SessionID, Delta: "working", TurnID: pc.TurnID}
		switch in.Text {
		case "hang":
			return call.PublishJSON(ipc.AgentStreamDeltaTopic, delta)
		case "elicit":
			// A forged question first (a capsule posing as the host),
			// then the host's own; the final carries the answer.
			forged, _ := ipc.ElicitRequest{RequestID: "forged", CapsuleID: "kernel", Field: ipc.OnboardingField{Key: "PASSWORD", Prompt: "p", FieldType: ipc.FieldType{Kind: ipc.FieldSecret}}}.MarshalJSON()
			if err := call.Publish(ipc.ElicitRequestTopic, forged); err != nil {
				return err
			}
			text := "declined"
			if ans, err := call.Elicit(hostapi.ElicitRequest{Key: "REGION", Kind: hostapi.ElicitSelect, Options: []string{"us", "eu"}}); err == nil {
				text = "region " + ans.Value
			} else if hostapi.CodeOf(err) != hostapi.CodeDeclined {
				return err
			}
			return final(pc.TurnID, ipc.OutcomeAnswer, text)
		case "script":
			q, _ := ipc.EncodePayload(ipc.ApprovalRequired{RequestID: "q1", Action: "write", Resource: "x", CallID: "c1"})
			for _, step := range []func() error{
				func() error {
					return final("an-earlier-turn", ipc.OutcomeCancelled, "Cancelled: a newer prompt on this session took over.")
				},
				func() error { return call.Publish(ipc.ApprovalRequestTopic, q) },
				func() error {
					return call.PublishJSON(ipc.AgentToolStartedTopic, ipc.AgentToolStarted{SessionID: in.SessionID, CallID: "c1", Name: "write_file", Arguments: []byte(`{}`), TurnID: pc.TurnID})
				},
				func() error { return call.PublishJSON(ipc.AgentStreamDeltaTopic, delta) },
			} {
				if err := step(); err != nil {
					return err
				}
			}
		}
		return call.KVSet("~turn", []byte(in.SessionID+" "+pc.TurnID))
	})
	// The answer to q1 lets the scripted turn end.
	c.Handle(ipc.ApprovalResponseTopic("*"), "answered", func(call *sdk.Call) error {
		var ans ipc.ApprovalResponse
		if err := call.Decode(&ans); err != nil || ans.RequestID != "q1" || ans.Decision != ipc.DecisionApprove {
			return err
		}
		turn, _, err := call.KVGet("~turn")
		if err != nil {
			return err
		}
		session, turnID, _ := strings.Cut(string(turn), " ")
		p, _ := ipc.EncodePayload(ipc.AgentResponse{Text: "done", IsFinal: true, SessionID: session, Outcome: ipc.OutcomeAnswer, TurnID: turnID})
		return call.Publish(ipc.AgentResponseTopic, p)
	})
	c.Publishes("agent.v1.*")
	c.Publishes(ipc.ApprovalRequestTopic)
	c.Publishes(ipc.ElicitRequestTopic)
	return c
}

func boot(t *testing.T) *sdktest.Kernel {
	return sdktest.NewAgent(t, sdktest.AgentOptions{}, sdktest.Capsule{Manifest: fakeAgentManifest, New: newFakeAgent})
}

// A turn delivers its own events: another turn's final on the same
// session is not taken for this one's; a question about a call (published
// before the call's announcement, on another route) comes after it; the
// answer reaches the agent, whose final ends the turn.
func TestTurnDeliversItsOwnEventsInOrder(t *testing.T) {
	k := boot(t)
	var kinds []agentclient.EventKind
	final, err := agentclient.Run(context.Background(), k.Agent(), agentclient.Prompt{SessionID: agentclient.NewSessionID(), Text: "script"},
		func(turn *agentclient.Turn, ev agentclient.Event) {
			kinds = append(kinds, ev.Kind)
			if ev.Kind == agentclient.EventApproval {
				if err := turn.Answer(ev.Approval.RequestID, ipc.DecisionApprove); err != nil {
					t.Error(err)
				}
			}
		})
	if err != nil || final.Outcome != ipc.OutcomeAnswer || final.Text != "done" {
		t.Fatalf("final %+v, %v (events %v)", final, err, kinds)
	}
	at := map[agentclient.EventKind]int{}
	for i, k := range kinds {
		if _, dup := at[k]; dup {
			t.Fatalf("events %v: %v twice", kinds, k)
		}
		at[k] = i
	}
	if len(kinds) != 4 || at[agentclient.EventToolStarted] > at[agentclient.EventApproval] || at[agentclient.EventFinal] != 3 {
		t.Fatalf("events %v", kinds)
	}
}

// A prompt without a session id is the default session's, as on the
// wire: its events are recognised.
func TestEmptySessionIDIsTheDefault(t *testing.T) {
	k := boot(t)
	turn, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	if ev, err := turn.Next(ctx); err != nil || ev.Kind != agentclient.EventDelta || turn.SessionID() != ipc.DefaultSessionID {
		t.Fatalf("event %+v %v (session %q)", ev, err, turn.SessionID())
	}
}

// When the caller's context ends, Run cancels the turn and returns its
// final response with the context's error; nothing is left running.
func TestContextEndCancelsTheTurn(t *testing.T) {
	k := boot(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	final, err := agentclient.Run(ctx, k.Agent(), agentclient.Prompt{SessionID: "s1", Text: "hang"}, func(_ *agentclient.Turn, ev agentclient.Event) {
		if ev.Kind == agentclient.EventDelta {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || final.Outcome != ipc.OutcomeCancelled {
		t.Fatalf("final %+v, %v", final, err)
	}
}

// Without an agent, Start fails at once.
func TestNoAgent(t *testing.T) {
	k := sdktest.NewAgent(t, sdktest.AgentOptions{})
	_, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{SessionID: "s1", Text: "hi"})
	if !errors.Is(err, agentclient.ErrNoAgent) {
		t.Fatalf("err %v", err)
	}
}

// The client's identity may send prompts and approval answers and hear
// the agent, and nothing else: no tool calls, no tool results.
func TestIdentityIsLeastPrivilege(t *testing.T) {
	b := bus.New(bus.Options{})
	d := dispatch.New(b, dispatch.Options{})
	t.Cleanup(func() { d.Close(); b.Close() })
	if err := d.Register(agentclient.ACL(), idle{}); err != nil {
		t.Fatal(err)
	}
	caller := dispatch.Caller{Capsule: agentclient.ClientID, Principal: ipc.DefaultPrincipal}
	for _, topic := range []string{ipc.ToolRequestExecuteTopic, ipc.ToolRequestCancelTopic, ipc.AgentResponseTopic, ipc.ApprovalRequestTopic, "session.v1.request.get_messages"} {
		if _, err := d.Publish(caller, topic, []byte(`{}`)); err == nil {
			t.Errorf("published on %s", topic)
		}
	}
	for _, pattern := range []string{ipc.ToolExecuteResultTopic, "tool.v1.*", "session.v1.response.*", "llm.v1.stream.*"} {
		if _, err := d.Subscribe(caller, pattern, true); err == nil {
			t.Errorf("subscribed to %s", pattern)
		}
	}
	for _, topic := range []string{ipc.UserPromptTopic, ipc.ApprovalResponseTopic("q1")} {
		if _, err := d.Publish(caller, topic, []byte(`{}`)); err != nil {
			t.Errorf("publish %s: %v", topic, err)
		}
	}
}

type idle struct{}

func (idle) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

func TestSessionIDsAreFreshAndValid(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := agentclient.NewSessionID()
		if seen[id] || len(id) != 34 {
			t.Fatalf("session id %q repeated or malformed", id)
		}
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == 's') {
				t.Fatalf("session id %q", id)
			}
		}
		seen[id] = true
	}
}

func TestAnswerRefusesUnknownDecisions(t *testing.T) {
	k := boot(t)
	turn, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{SessionID: "s1", Text: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	for _, tc := range []struct{ id, decision string }{{"q1", "maybe"}, {"a.b", ipc.DecisionApprove}, {"", ipc.DecisionDeny}} {
		if err := turn.Answer(tc.id, tc.decision); err == nil {
			t.Errorf("Answer(%q, %q) accepted", tc.id, tc.decision)
		}
	}
}

// The host's elicit question reaches the turn (a capsule's forged one
// does not), and the answer reaches the capsule that asked; a declined
// answer is CodeDeclined there.
func TestTurnAnswersElicitQuestions(t *testing.T) {
	k := boot(t)
	for _, tc := range []struct {
		answer ipc.ElicitResponse
		want   string
	}{
		{ipc.ElicitResponse{Value: ptr("eu")}, "region eu"},
		{ipc.ElicitResponse{}, "declined"},
	} {
		var asked []ipc.ElicitRequest
		final, err := agentclient.Run(context.Background(), k.Agent(), agentclient.Prompt{SessionID: "s-elicit", Text: "elicit"}, func(turn *agentclient.Turn, ev agentclient.Event) {
			if ev.Kind != agentclient.EventElicit {
				return
			}
			asked = append(asked, ev.Elicit)
			a := tc.answer
			a.RequestID = ev.Elicit.RequestID
			if err := turn.AnswerElicit(a); err != nil {
				t.Error(err)
			}
		})
		if err != nil || final.Text != tc.want {
			t.Fatalf("final %+v, %v; want %q", final, err, tc.want)
		}
		if len(asked) != 1 || asked[0].Field.Key != "REGION" || asked[0].CapsuleID != "test-fake-agent" {
			t.Fatalf("questions delivered: %+v", asked)
		}
	}
}

func ptr(s string) *string { return &s }
