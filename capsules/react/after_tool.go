package react

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The after-tool hook (ipc.AgentAfterToolTopic): a call's result is put to
// the capsules holding the tool plumbing that intercept it (the hooks
// capsule runs the operator's PostToolUse hooks there), and what they
// answer is given to the model after the result. The round goes to the
// model once every call's hook has answered; the kernel's failure reply
// (the hook capsule gone, or past requestTimeout) counts as an answer
// with nothing to add.

// afterToolHooked reports whether a capsule holding the tool plumbing
// intercepts the after-tool hook, so a result must wait for it.
func afterToolHooked(c *sdk.Call) bool {
	ids, err := c.Interceptors(ipc.AgentAfterToolTopic)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ids, func(id string) bool { return id != c.CapsuleID() && consolidates(c, id) })
}

// askAfterTool sends call's after-tool request; when it cannot be sent the
// call is done without it (logged), and the turn saved so.
func askAfterTool(c *sdk.Call, t *turn, call *toolCall, content string, now int64) error {
	req, err := json.Marshal(ipc.AgentAfterTool{SessionID: t.SessionID, TurnID: t.TurnID, CallID: call.CallID, Name: call.Name,
		Arguments: call.Args, IsError: call.IsError, Content: cutUTF8(content, ipc.AfterToolContentBytes), DurationMS: max(now-call.Started, 0)})
	if err == nil {
		err = c.Request(ipc.AgentAfterToolTopic, req, hostapi.Request{ReplyTo: ipc.AgentAfterToolReplyTopic, CorrelationID: call.CallID, Timeout: requestTimeout})
	}
	if err == nil {
		return nil
	}
	c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: the after-tool hook of %s was not asked (the result goes to the model as it is): %v", t.SessionID, call.Name, err))
	call.Hooked, call.Done = false, true
	dropKey(c, keyCall+call.CallID)
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	return nil
}

// handleAfterTool takes an after-tool answer: its context is added to the
// call's result, and the last answer of a round sends the round on.
func handleAfterTool(c *sdk.Call) error {
	var ans ipc.AgentAfterToolAnswer
	if f, ok := ipc.AsRequestFailed(c.Payload()); ok {
		if c.SourceID() != ipc.KernelSourceID {
			return nil
		}
		ans.CallID = f.CorrelationID
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: call %q: the after-tool hook did not answer (the result goes to the model as it is): %s", f.CorrelationID, f.Message))
	} else {
		if err := json.Unmarshal(c.Payload(), &ans); err != nil || ans.CallID == "" {
			c.Log(hostapi.LogWarn, "react: dropped an after-tool answer that does not decode")
			return nil
		}
		if !consolidates(c, c.SourceID()) {
			c.Log(hostapi.LogWarn, fmt.Sprintf("react: ignored an after-tool answer from %q, which does not hold the tool plumbing", c.SourceID()))
			return nil
		}
	}
	session, ok := sessionOf(c, keyCall+ans.CallID)
	if !ok {
		return nil
	}
	t, ok := loadTurn(c, session)
	if !ok || t.Phase != phaseTools {
		return nil
	}
	i := slices.IndexFunc(t.Calls, func(call toolCall) bool { return call.CallID == ans.CallID })
	if i < 0 || !t.Calls[i].Hooked || t.Calls[i].Done {
		return nil
	}
	call := &t.Calls[i]
	if add := strings.TrimSpace(ans.Context); add != "" {
		content, _, err := c.KVGet(keyResult + call.CallID)
		if err == nil {
			err = c.KVSet(keyResult+call.CallID, []byte(string(content)+"\n\n"+cutUTF8(add, ipc.AfterToolContextBytes)))
		}
		if err != nil {
			return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The hook's answer about %s was not kept: %v", call.Name, err))
		}
	}
	call.Hooked, call.Done = false, true
	dropKey(c, keyCall+call.CallID)
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	if allDone(t) {
		return finishRound(c, t)
	}
	return nil
}

// cutUTF8 is s cut to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
