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

// The approval and elicit handlers watch the questions asked about a
// turn's tool calls (the approval layer's, and the kernel's notices of
// elicit questions), to stop the tool phase's clock while a person
// decides or types. They only watch: they always let the event go on (an error
// here would count as a Deny in a chain and could hold up the answer), so
// they log instead of failing.

// maxApprovalIDBytes bounds an approval request id kept as a KV key part.
const maxApprovalIDBytes = 256

// handleApproval stops the clock of the turn whose call is held by an
// approval question (approval_required with a call_id).
func handleApproval(c *sdk.Call) error {
	var q ipc.ApprovalRequired
	if err := json.Unmarshal(c.Payload(), &q); err != nil {
		return nil
	}
	hold(c, q.RequestID, q.CallID, "an approval question", consolidates(c, c.SourceID()))
	return nil
}

// handleElicitPending stops the clock of the turn whose call waits for a
// person to answer an elicit question: the kernel's notice, never a
// capsule's (a tool could otherwise stop its own clock for good).
func handleElicitPending(c *sdk.Call) error {
	var n ipc.ElicitNotice
	if err := json.Unmarshal(c.Payload(), &n); err != nil {
		return nil
	}
	hold(c, n.RequestID, n.CallID, "an elicit notice", c.SourceID() == ipc.KernelSourceID)
	return nil
}

// hold stops the clock of the turn of callID while question requestID is
// pending; trusted says whether its source may (else it is logged and
// ignored).
func hold(c *sdk.Call, requestID, callID, what string, trusted bool) {
	if callID == "" || requestID == "" || len(requestID) > maxApprovalIDBytes {
		return
	}
	session, ok := sessionOf(c, keyCall+callID)
	if !ok {
		return
	}
	t, ok := loadTurn(c, session)
	if !ok || t.Phase != phaseTools || !slices.ContainsFunc(t.Calls, func(call toolCall) bool { return call.CallID == callID && !call.Done }) {
		return
	}
	if !trusted {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: ignored %s from %q, which may not stop a tool call's clock", session, what, c.SourceID()))
		return
	}
	if ended, err := expire(c, t, readLimits(c)); ended || err != nil {
		logFailure(c, err)
		return
	}
	if t.Approvals == nil {
		t.Approvals = map[string]string{}
	}
	if len(t.Approvals) == 0 {
		t.PausedAt = nowMS(c)
	}
	t.Approvals[requestID] = callID
	if err := c.KVSet(keyApproval+requestID, []byte(session)); err != nil {
		logFailure(c, err)
	}
	logFailure(c, saveTurn(c, t))
}

// handleApprovalResponse restarts the clock once the turn's last pending
// question is answered.
func handleApprovalResponse(c *sdk.Call) error {
	release(c, strings.TrimPrefix(c.Topic(), ipc.ApprovalResponseTopic("")))
	return nil
}

// handleElicitSettled restarts the clock once the turn's last pending
// question is settled (the kernel's notice only).
func handleElicitSettled(c *sdk.Call) error {
	var n ipc.ElicitNotice
	if c.SourceID() != ipc.KernelSourceID || json.Unmarshal(c.Payload(), &n) != nil {
		return nil
	}
	release(c, n.RequestID)
	return nil
}

// release settles question id of whichever turn it holds.
func release(c *sdk.Call, id string) {
	if id == "" || len(id) > maxApprovalIDBytes {
		return
	}
	session, ok := sessionOf(c, keyApproval+id)
	if !ok {
		return
	}
	t, ok := loadTurn(c, session)
	if !ok {
		return
	}
	if _, pending := t.Approvals[id]; !pending {
		return
	}
	resume(c, t, id, nowMS(c))
	logFailure(c, saveTurn(c, t))
}

// resume drops approval question id from t; when none is left pending the
// clock runs again, the paused time not counted.
func resume(c *sdk.Call, t *turn, id string, now int64) {
	delete(t.Approvals, id)
	dropKey(c, keyApproval+id)
	if len(t.Approvals) == 0 && t.PausedAt > 0 {
		t.PhaseStart += max(now-t.PausedAt, 0)
		t.PausedAt = 0
	}
}

func logFailure(c *sdk.Call, err error) {
	if err != nil {
		c.Log(hostapi.LogWarn, "react: "+err.Error())
	}
}
