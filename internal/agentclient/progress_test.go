package agentclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// progressAgentManifest is a test-only agent whose turn announces one call
// of the tool "slow", forges a progress event about it itself, sends the
// call to the tool, and ends the turn when the tool's result comes.
var progressAgentManifest = []byte(`
[package]
name = "test-progress-agent"
version = "0.1.0"

[capabilities]
tool_middleware = true

[subscribe]
"user.v1.prompt" = { wit = "opaque", handler = "prompt" }
"tool.v1.execute.slow.result" = { wit = "opaque", handler = "result" }

[publish]
"agent.v1.*" = "opaque"
"tool.v1.execute.slow" = "opaque"
`)

func newProgressAgent() *sdk.Capsule {
	c := sdk.New("test fixture: an agent calling one slow tool")
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
		for _, step := range []func() error{
			func() error {
				return call.PublishJSON(ipc.AgentToolStartedTopic, ipc.AgentToolStarted{SessionID: in.SessionID, CallID: "c2", Name: "slow", Arguments: []byte(`{}`), TurnID: pc.TurnID})
			},
			// Not the tool's provider: dropped.
			func() error {
				return call.PublishJSON(ipc.AgentToolProgressTopic, ipc.AgentToolProgress{CallID: "c2", Name: "slow", Progress: 9, Message: "forged by the agent"})
			},
			func() error { return call.KVSet("~turn", []byte(in.SessionID+" "+pc.TurnID)) },
			func() error {
				return call.PublishJSON(ipc.ToolExecuteTopic("slow"), ipc.ToolExecuteRequest{CallID: "c2", ToolName: "slow"})
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	c.Handle(ipc.ToolResultTopic("slow"), "result", func(call *sdk.Call) error {
		turn, _, err := call.KVGet("~turn")
		if err != nil {
			return err
		}
		session, turnID, _ := strings.Cut(string(turn), " ")
		return call.PublishJSON(ipc.AgentResponseTopic, ipc.AgentResponse{Text: "done", IsFinal: true, SessionID: session, Outcome: ipc.OutcomeAnswer, TurnID: turnID})
	})
	c.Publishes("agent.v1.*")
	c.Publishes(ipc.ToolExecuteTopic("slow"))
	return c
}

// slowToolManifest provides the tool "slow": it reports progress about
// another call, under another tool's name, and its own, then answers.
var slowToolManifest = []byte(`
[package]
name = "test-slow-tool"
version = "0.1.0"

[subscribe]
"tool.v1.execute.slow" = { wit = "opaque", handler = "slow" }

[publish]
"agent.v1.tool.progress" = "opaque"
"tool.v1.execute.slow.result" = "opaque"
`)

func newSlowTool() *sdk.Capsule {
	c := sdk.New("test fixture: a tool that reports progress")
	c.Handle(ipc.ToolExecuteTopic("slow"), "slow", func(call *sdk.Call) error {
		var req ipc.ToolExecuteRequest
		if err := call.Decode(&req); err != nil {
			return err
		}
		for _, p := range []ipc.AgentToolProgress{
			{CallID: "c-not-this-turns", Name: "slow", Progress: 1},
			{CallID: req.CallID, Name: "other", Progress: 1},
			{CallID: req.CallID, Name: "slow", Progress: 1, Total: 2, Message: "half"},
		} {
			if err := call.PublishJSON(ipc.AgentToolProgressTopic, p); err != nil {
				return err
			}
		}
		return call.PublishJSON(ipc.ToolResultTopic("slow"), ipc.ToolExecuteResult{CallID: req.CallID, Result: ipc.ToolCallResult{CallID: req.CallID, Content: "ok"}})
	})
	c.Publishes(ipc.AgentToolProgressTopic)
	c.Publishes(ipc.ToolResultTopic("slow"))
	return c
}

// A turn delivers a tool's progress about its own call, from the tool's
// provider, and drops progress about a call it did not announce, under
// another tool's name, or from a capsule that does not provide the tool.
func TestTurnDeliversOnlyItsCallsProgress(t *testing.T) {
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: progressAgentManifest, New: newProgressAgent},
		sdktest.Capsule{Manifest: slowToolManifest, New: newSlowTool})
	var got []ipc.AgentToolProgress
	final, err := agentclient.Run(context.Background(), k.Agent(), agentclient.Prompt{SessionID: agentclient.NewSessionID(), Text: "go"},
		func(_ *agentclient.Turn, ev agentclient.Event) {
			if ev.Kind == agentclient.EventToolProgress {
				got = append(got, ev.ToolProgress)
			}
		})
	if err != nil || final.Text != "done" {
		t.Fatalf("final %+v, %v", final, err)
	}
	want := ipc.AgentToolProgress{CallID: "c2", Name: "slow", Progress: 1, Total: 2, Message: "half"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("progress delivered %+v, want only %+v", got, want)
	}
	if s := got[0].Text(); s != "slow: 1/2 half" {
		t.Fatalf("Text() = %q", s)
	}
}
