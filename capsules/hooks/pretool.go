package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// callPrefix keys a tool call the PreToolUse hooks decided on: ~call/<call
// id> = callRecord. It lets the one re-publish of a call the approval layer
// held through without running the hooks again, and gives the call's
// PostToolUse hooks its name and arguments. Volatile: a restart ends every
// call.
const callPrefix = "~call/"

type callRecord struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// handleToolRequest is the interceptor on tool.v1.request.execute, ahead of
// the approval layer: it runs the PreToolUse hooks that match the tool, in
// order, and lets the call through (with the arguments a hook changed),
// or refuses it with the hook's reason, which the model reads.
func handleToolRequest(c *sdk.Call) error {
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(c.Payload()); err != nil || req.CallID == "" || ipc.ValidateToolName(req.ToolName) != nil {
		return nil // the router answers what it cannot route
	}
	key := callPrefix + req.CallID
	if raw, ok, err := c.KVGet(key); err == nil && ok {
		// Decided already, when it is the same call again: the approval
		// layer's re-publish of the call it held. The same call id with
		// other arguments is a new call, and the hooks see it.
		var rec callRecord
		if json.Unmarshal(raw, &rec) == nil && rec.Tool == req.ToolName && sameJSON(rec.Arguments, req.Arguments) {
			return nil
		}
	}
	hooks, cfg := hooksFor(c, PreToolUse, req.ToolName)
	if len(hooks) == 0 && len(cfg.PostToolUse) == 0 && !cfg.AllowWorkspace {
		return nil
	}
	args := req.Arguments
	changed := false
	session := ""
	if raw, ok, err := c.KVGet(sessionPrefix + req.CallID); err == nil && ok {
		session = string(raw)
		// A call id is used once: a record left behind is never read again.
		_ = c.KVDelete(sessionPrefix + req.CallID)
	}
	for _, h := range hooks {
		v, failed := run(c, h, cfg, Input{HookEventName: PreToolUse, SessionID: session, ToolName: req.ToolName, ToolInput: args})
		logVerdict(c, h, PreToolUse, v)
		switch {
		case failed:
			// A guard that could not decide does not let the call by.
			return refuse(c, req, fmt.Sprintf("%s was not run: its %s %s, and a PreToolUse hook that cannot decide refuses the call", req.ToolName, h.describe(PreToolUse), v.Problem))
		case v.Block:
			return refuse(c, req, fmt.Sprintf("%s was refused by a PreToolUse hook: %s", req.ToolName, v.Reason))
		case v.UpdatedInput != nil:
			args, changed = v.UpdatedInput, true
			c.Log(hostapi.LogInfo, fmt.Sprintf("hooks: %s changed the arguments of call %q of %s", h.describe(PreToolUse), req.CallID, req.ToolName))
		}
	}
	rec, err := json.Marshal(callRecord{Tool: req.ToolName, Arguments: args})
	if err == nil {
		err = c.KVSet(key, rec)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: call %q of %s not recorded (its PostToolUse hooks will not see its arguments): %v", req.CallID, req.ToolName, err))
	}
	if changed {
		req.Arguments = args
		out, err := req.MarshalJSON()
		if err != nil {
			return refuse(c, req, fmt.Sprintf("%s was not run: the arguments a PreToolUse hook gave cannot be sent: %v", req.ToolName, err))
		}
		c.Continue(out)
	}
	return nil
}

// refuse answers a call with an is_error result the model reads, on the
// consolidated result topic, as the answer to the caller's request.
func refuse(c *sdk.Call, req ipc.ToolExecuteRequest, msg string) error {
	c.Final(nil)
	c.Log(hostapi.LogInfo, fmt.Sprintf("hooks: call %q of %s refused: %s", req.CallID, req.ToolName, msg))
	out, err := ipc.ToolExecuteResult{CallID: req.CallID, Result: ipc.ToolCallError(req.CallID, msg)}.MarshalJSON()
	if err != nil {
		return fmt.Errorf("hooks: refusal of call %q: %w", req.CallID, err)
	}
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, out); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: call %q: refusal not registered as the failure reply: %v", req.CallID, err))
	}
	return c.PublishReply(ipc.ToolExecuteResultTopic, req.CallID, out)
}

// sessionPrefix keys the session of a call the agent announced, for its
// PreToolUse input (a tool call names no session): ~session/<call id>.
const sessionPrefix = "~session/"

// handleToolStarted notes the session of a call the agent announces
// (agent.v1.tool.started precedes the call), when PreToolUse hooks may
// run.
func handleToolStarted(c *sdk.Call) error {
	var ev ipc.AgentToolStarted
	if err := json.Unmarshal(c.Payload(), &ev); err != nil || ev.CallID == "" || !ipc.ValidSessionID(ev.SessionID) {
		return nil
	}
	if agents, err := c.Interceptors(ipc.UserPromptTopic); err != nil || !contains(agents, c.SourceID()) || c.SourceID() == c.CapsuleID() {
		return nil
	}
	if hooks, cfg := hooksFor(c, PreToolUse, ev.Name); len(hooks) == 0 && !cfg.AllowWorkspace {
		return nil
	}
	return c.KVSet(sessionPrefix+ev.CallID, []byte(ev.SessionID))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sameJSON reports whether a and b are the same JSON text up to
// insignificant white space.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
