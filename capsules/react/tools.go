package react

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// dispatch sends the streamed tool calls of t, all at once. A call whose
// arguments are not valid JSON is not sent: it is answered here with an
// error result the model will read (docs/rationale/agent.md).
func dispatch(c *sdk.Call, t *turn) error {
	now := nowMS(c)
	t.Phase, t.PhaseStart, t.Calls = phaseTools, now, nil
	invalid := map[string]string{} // call id → the model's text
	for _, s := range t.Streamed {
		call := toolCall{CallID: newCallID(c), ModelID: s.ID, LLMName: s.Name, Name: ipc.ToolNameFromLLM(s.Name), Started: now}
		args := strings.TrimSpace(s.Args)
		if args == "" {
			args = "{}"
		}
		var probe any
		if err := json.Unmarshal([]byte(args), &probe); err != nil {
			call.Done, call.IsError = true, true
			invalid[call.CallID] = args
			if err := c.KVSet(keyResult+call.CallID, []byte(invalidArgsMessage(args, err))); err != nil {
				return finish(c, t, ipc.OutcomeError, fmt.Sprintf("A tool result was not kept: %v", err))
			}
		} else {
			call.Args = json.RawMessage(args)
			if err := c.KVSet(keyCall+call.CallID, []byte(t.SessionID)); err != nil {
				return finish(c, t, ipc.OutcomeError, fmt.Sprintf("A tool call was not recorded: %v", err))
			}
		}
		t.Calls = append(t.Calls, call)
	}
	t.Streamed, t.Text = nil, ""
	// Saved before anything is sent: a result may come back as soon as its
	// request is out, and must find the call.
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	changed := false
	for i := range t.Calls {
		call := &t.Calls[i]
		shownArgs := call.Args
		if shownArgs == nil {
			shownArgs, _ = json.Marshal(invalid[call.CallID])
		}
		publishEvent(c, ipc.AgentToolStartedTopic, ipc.AgentToolStarted{SessionID: t.SessionID, CallID: call.CallID, Name: call.Name, Arguments: shownArgs, TurnID: t.TurnID})
		if call.Done {
			content, _, _ := c.KVGet(keyResult + call.CallID)
			publishFinished(c, t, call, string(content), now)
			continue
		}
		req, err := ipc.ToolExecuteRequest{CallID: call.CallID, ToolName: call.Name, Arguments: call.Args}.MarshalJSON()
		if err == nil {
			err = c.Request(ipc.ToolRequestExecuteTopic, req, hostapi.Request{ReplyTo: ipc.ToolExecuteResultTopic, CorrelationID: call.CallID, Timeout: requestTimeout})
		}
		if err != nil {
			msg := fmt.Sprintf("tool call %s was not sent: %v", call.Name, err)
			call.Done, call.IsError, changed = true, true, true
			dropKey(c, keyCall+call.CallID)
			if err := c.KVSet(keyResult+call.CallID, []byte(msg)); err != nil {
				return finish(c, t, ipc.OutcomeError, fmt.Sprintf("A tool result was not kept: %v", err))
			}
			publishFinished(c, t, call, msg, now)
		}
	}
	if changed {
		if err := saveTurn(c, t); err != nil {
			return finish(c, t, ipc.OutcomeError, err.Error())
		}
	}
	if allDone(t) {
		return finishRound(c, t)
	}
	return nil
}

// invalidArgsMessage is the error result of a call whose arguments are not
// JSON: why, and the start of what the model wrote, so it can correct it.
func invalidArgsMessage(args string, err error) string {
	return fmt.Sprintf("invalid JSON arguments: %v; the call was not made. The arguments began: %s", err, summary(args))
}

// summary is the first ipc.ToolSummaryRunes runes of s.
func summary(s string) string {
	n := 0
	for i := range s {
		if n == ipc.ToolSummaryRunes {
			return s[:i]
		}
		n++
	}
	return s
}

func allDone(t *turn) bool {
	return !slices.ContainsFunc(t.Calls, func(call toolCall) bool { return !call.Done })
}

// publishEvent publishes a frontend event; a failure is logged, not fatal
// to the turn (the final response still tells the outcome).
func publishEvent(c *sdk.Call, topic string, v any) {
	if err := c.PublishJSON(topic, v); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: %s not published: %v", topic, err))
	}
}

func publishFinished(c *sdk.Call, t *turn, call *toolCall, content string, now int64) {
	publishEvent(c, ipc.AgentToolFinishedTopic, ipc.AgentToolFinished{
		SessionID: t.SessionID, CallID: call.CallID, Name: call.Name, IsError: call.IsError,
		Summary: summary(content), DurationMS: max(now-call.Started, 0), TurnID: t.TurnID,
	})
}

// consolidates reports whether source may publish consolidated tool
// results or speak for a held call: the kernel, or a capsule intercepting
// tool.v1.request.execute, which only a tool_middleware holder may
// (DESIGN §4c) — the router and the approval layer.
func consolidates(c *sdk.Call, source string) bool {
	if source == ipc.KernelSourceID {
		return true
	}
	ids, err := c.Interceptors(ipc.ToolRequestExecuteTopic)
	return err == nil && slices.Contains(ids, source)
}

// handleToolResult records one call's result; the last of a round sends
// the round to the session and the model.
func handleToolResult(c *sdk.Call) error {
	var res ipc.ToolExecuteResult
	if err := res.UnmarshalJSON(c.Payload()); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: dropped a tool result that does not decode: %v", err))
		return nil
	}
	session, ok := sessionOf(c, keyCall+res.CallID)
	if !ok {
		return nil
	}
	t, ok := loadTurn(c, session)
	if !ok || t.Phase != phaseTools {
		return nil
	}
	i := slices.IndexFunc(t.Calls, func(call toolCall) bool { return call.CallID == res.CallID })
	if i < 0 || t.Calls[i].Done || t.Calls[i].Hooked {
		return nil
	}
	if !consolidates(c, c.SourceID()) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: ignored a tool result from %q, which does not hold the tool plumbing", session, c.SourceID()))
		return nil
	}
	if ended, err := expire(c, t, readLimits(c)); ended || err != nil {
		return err
	}
	now := nowMS(c)
	call := &t.Calls[i]
	call.IsError = res.Result.IsError
	if err := c.KVSet(keyResult+call.CallID, []byte(res.Result.Content)); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The result of %s was not kept: %v", call.Name, err))
	}
	// With an after-tool hook to ask, the call is done once it answers
	// (its routing key kept till then); without, now.
	call.Hooked = afterToolHooked(c)
	if !call.Hooked {
		call.Done = true
		dropKey(c, keyCall+call.CallID)
	}
	for id, callID := range t.Approvals {
		if callID == call.CallID {
			resume(c, t, id, now)
		}
	}
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	publishFinished(c, t, call, res.Result.Content, now)
	if call.Hooked {
		if err := askAfterTool(c, t, call, res.Result.Content, now); err != nil {
			return err
		}
	}
	if allDone(t) {
		return finishRound(c, t)
	}
	return nil
}

// finishRound appends the round (the model's calls and their results, so
// the history never holds a call without its answer) to the session and
// asks the model again over the history it returns.
func finishRound(c *sdk.Call, t *turn) error {
	calls := make([]ipc.ToolCall, 0, len(t.Calls))
	msgs := make([]ipc.Message, 0, len(t.Calls)+1)
	msgs = append(msgs, ipc.Message{}) // the assistant's calls, below
	for _, call := range t.Calls {
		args := call.Args
		if args == nil {
			// What the model sent is not JSON and cannot be stored as
			// arguments; the result says what it was.
			args = json.RawMessage(`{}`)
		}
		calls = append(calls, ipc.ToolCall{ID: call.ModelID, Name: call.LLMName, Arguments: args})
		content, ok, err := c.KVGet(keyResult + call.CallID)
		result := ipc.ToolCallResult{CallID: call.ModelID, Content: string(content), IsError: call.IsError}
		if err != nil || !ok {
			result = ipc.ToolCallError(call.ModelID, "the result was lost from the agent's memory")
		}
		msgs = append(msgs, ipc.Message{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: result}})
	}
	msgs[0] = ipc.Message{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: calls}}
	history, comp, err := appendTurn(c, t, msgs)
	if err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The tool results were not added to session %q: %v", t.SessionID, err))
	}
	for _, call := range t.Calls {
		dropKey(c, keyResult+call.CallID)
	}
	return generate(c, t, withPrefix(view(t, history, comp, t.ToolResultMax), t.Prefix))
}
