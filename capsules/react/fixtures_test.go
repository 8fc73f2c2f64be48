package react_test

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The fixtures of these tests: small capsules that stand in for the parts
// of the agent stack that are not under test, or that misbehave on
// purpose. None is product code.

// fixtureAssemblerManifest is a test-only prompt builder: it answers
// prompt_builder.v1.assemble as the contract says (docs/agent.md), with
// the tools of the describe fan-out and the messages passed through. Its
// [env] mode makes it silent or failing; prefix sets its
// user_context_prefix.
var fixtureAssemblerManifest = []byte(`
[package]
name = "test-fixture-assembler"
version = "0.1.0"

[subscribe]
"prompt_builder.v1.assemble" = { wit = "opaque", handler = "assemble" }
"tool.v1.response.describe.*" = { wit = "opaque" }

[publish]
"prompt_builder.v1.response.assemble" = "opaque"
"tool.v1.request.describe" = "opaque"
`)

// fixtureSystemPrompt is the system prompt the fixture assembler gives.
const fixtureSystemPrompt = "You are a test fixture."

func newFixtureAssembler() *sdk.Capsule {
	c := sdk.New("test fixture: a minimal prompt builder")
	c.Handle(react.AssembleTopic, "assemble", func(call *sdk.Call) error {
		var req struct {
			RequestID string            `json:"request_id"`
			SessionID string            `json:"session_id"`
			Messages  []json.RawMessage `json:"messages"`
		}
		if err := call.Decode(&req); err != nil {
			return err
		}
		resp := react.AssembleResponse{RequestID: req.RequestID, SessionID: req.SessionID}
		switch mode, _ := call.Config("mode"); mode {
		case "silent":
			return nil
		case "error":
			resp.Error = "the fixture was told to fail"
			return call.PublishJSON(react.AssembledTopic, resp)
		case "garbage":
			return call.PublishJSON(react.AssembledTopic, map[string]any{"request_id": req.RequestID, "session_id": req.SessionID, "messages": 5, "tools": "all of them"})
		}
		cat, err := sdk.DescribeTools(call, 500*time.Millisecond)
		if err != nil {
			return err
		}
		for _, t := range cat.Tools {
			name, err := ipc.LLMToolName(t.Name)
			if err != nil {
				continue
			}
			desc := t.Description
			raw, err := json.Marshal(ipc.LLMToolDefinition{Name: name, Description: &desc, InputSchema: t.InputSchema})
			if err != nil {
				return err
			}
			resp.Tools = append(resp.Tools, raw)
		}
		resp.SystemPrompt = fixtureSystemPrompt
		resp.UserContextPrefix, _ = call.Config("prefix")
		resp.Messages = req.Messages
		return call.PublishJSON(react.AssembledTopic, resp)
	})
	c.Subscribes(ipc.ToolDescribeResponsePattern)
	c.Publishes(ipc.ToolRequestDescribeTopic)
	c.Publishes(react.AssembledTopic)
	return c
}

// fixtureLLMManifest is a set of test-only providers that misbehave: mute
// never answers, halt stops mid-stream, garbage sends an event that is not
// one, empty sends only Done, double goes on streaming (text and a tool
// call) after its Done; echo answers with what it was asked (the
// system prompt, the tool names and the last user message), as JSON text.
var fixtureLLMManifest = []byte(`
[package]
name = "test-fixture-llm"
version = "0.1.0"

[subscribe]
"llm.v1.request.generate.mute" = { wit = "opaque", handler = "mute" }
"llm.v1.request.generate.halt" = { wit = "opaque", handler = "halt" }
"llm.v1.request.generate.garbage" = { wit = "opaque", handler = "garbage" }
"llm.v1.request.generate.empty" = { wit = "opaque", handler = "empty" }
"llm.v1.request.generate.echo" = { wit = "opaque", handler = "echo" }
"llm.v1.request.generate.double" = { wit = "opaque", handler = "double" }

[publish]
"llm.v1.stream.*" = "opaque"
`)

// echoed is what the echo provider answers.
type echoed struct {
	System   string   `json:"system"`
	Tools    []string `json:"tools"`
	LastUser string   `json:"last_user"`
	Model    string   `json:"model"`
}

func newFixtureLLM() *sdk.Capsule {
	c := sdk.New("test fixture: misbehaving providers")
	stream := func(call *sdk.Call, provider string, events ...string) error {
		var req ipc.LLMRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		id, _ := json.Marshal(req.RequestID)
		for _, ev := range events {
			if err := call.Publish(ipc.LLMStreamTopic(provider), []byte(`{"type":"llm_stream_event","request_id":`+string(id)+`,"event":`+ev+`}`)); err != nil {
				return err
			}
		}
		return nil
	}
	c.Handle(ipc.LLMGenerateTopic("mute"), "mute", func(*sdk.Call) error { return nil })
	c.Handle(ipc.LLMGenerateTopic("halt"), "halt", func(call *sdk.Call) error {
		return stream(call, "halt", `{"TextDelta":"partial"}`)
	})
	c.Handle(ipc.LLMGenerateTopic("garbage"), "garbage", func(call *sdk.Call) error {
		return stream(call, "garbage", `{"TextDelta":"fine so far"}`, `{"Nonsense":42}`)
	})
	c.Handle(ipc.LLMGenerateTopic("empty"), "empty", func(call *sdk.Call) error {
		return stream(call, "empty", `"Done"`)
	})
	c.Handle(ipc.LLMGenerateTopic("double"), "double", func(call *sdk.Call) error {
		return stream(call, "double", `{"TextDelta":"one"}`, `"Done"`,
			`{"TextDelta":"stale"}`, `{"ToolCallStart":{"id":"x1","name":"probe"}}`, `"Done"`)
	})
	c.Handle(ipc.LLMGenerateTopic("echo"), "echo", func(call *sdk.Call) error {
		var req ipc.LLMRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		e := echoed{System: req.System, Model: req.Model, Tools: []string{}}
		for _, t := range req.Tools {
			e.Tools = append(e.Tools, t.Name)
		}
		for _, m := range req.Messages {
			if s, ok := m.Text(); ok && m.Role == ipc.RoleUser {
				e.LastUser = s
			}
		}
		text, _ := json.Marshal(e)
		delta, _ := json.Marshal(map[string]string{"TextDelta": string(text)})
		return stream(call, "echo", string(delta), `"Done"`)
	})
	c.Publishes("llm.v1.stream.*")
	return c
}

// fixtureToolsManifest provides hang, a tool that accepts a call and
// stays silent until it is cancelled (or a minute passes), and probe, which
// answers at once. The capsule runs one call per principal at a time, so a
// probe answered after a hang means the hang ended.
var fixtureToolsManifest = []byte(`
[package]
name = "test-fixture-tools"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.hang" = { wit = "tool-execute-request", handler = "hang" }
"tool.v1.execute.probe" = { wit = "tool-execute-request", handler = "tool_execute_probe" }
"test.v1.never" = { wit = "opaque" }

[publish]
"tool.v1.response.describe.test-fixture-tools" = "opaque"
"tool.v1.execute.probe.result" = "tool-execute-result"
`)

func newFixtureTools() *sdk.Capsule {
	c := sdk.New("test fixture: a tool that never answers, and a probe")
	sdk.Tool(c, "probe", "answers at once", func(*sdk.Call, struct{}) (string, error) { return "alive", nil })
	c.Handle(ipc.ToolExecuteTopic("hang"), "hang", func(call *sdk.Call) error {
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		if err := call.SetCancelKey(req.CallID); err != nil {
			return err
		}
		sub, err := call.Subscribe("test.v1.never")
		if err != nil {
			return err
		}
		_, err = call.Recv(sub, hostapi.MaxRecvTimeout)
		if err != nil && !strings.Contains(err.Error(), "cancel") && hostapi.CodeOf(err) != hostapi.CodeTimeout {
			return err
		}
		return nil
	})
	c.Subscribes("test.v1.never")
	return c
}
