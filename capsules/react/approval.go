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

// The approval handlers watch the questions the approval layer asks about
// a turn's tool calls, to stop the tool phase's clock while a person
// decides. They only watch: they always let the event go on (an error
// here would count as a Deny in a chain and could hold up the answer), so
// they log instead of failing.

// maxApprovalIDBytes bounds an approval request id kept as a KV key part.
const maxApprovalIDBytes = 256

// handleApproval stops the clock of the turn whose call is held by an
// approval question (approval_required with a call_id).
func handleApproval(c *sdk.Call) error {
	var q ipc.ApprovalRequired
	if err := json.Unmarshal(c.Payload(), &q); err != nil || q.CallID == "" || q.RequestID == "" || len(q.RequestID) > maxApprovalIDBytes {
		return nil
	}
	session, ok := sessionOf(c, keyCall+q.CallID)
	if !ok {
		return nil
	}
	t, ok := loadTurn(c, session)
	if !ok || t.Phase != phaseTools || !slices.ContainsFunc(t.Calls, func(call toolCall) bool { return call.CallID == q.CallID && !call.Done }) {
		return nil
	}
	if !consolidates(c, c.SourceID()) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: ignored an approval question from %q, which does not hold the tool plumbing", session, c.SourceID()))
		return nil
	}
	if ended, err := expire(c, t, readLimits(c)); ended || err != nil {
		logFailure(c, err)
		return nil
	}
	if t.Approvals == nil {
		t.Approvals = map[string]string{}
	}
	if len(t.Approvals) == 0 {
		t.PausedAt = nowMS(c)
	}
	t.Approvals[q.RequestID] = q.CallID
	if err := c.KVSet(keyApproval+q.RequestID, []byte(session)); err != nil {
		logFailure(c, err)
	}
	logFailure(c, saveTurn(c, t))
	return nil
}

// handleApprovalResponse restarts the clock once the turn's last pending
// question is answered.
func handleApprovalResponse(c *sdk.Call) error {
	id := strings.TrimPrefix(c.Topic(), ipc.ApprovalResponseTopic(""))
	if id == "" || len(id) > maxApprovalIDBytes {
		return nil
	}
	session, ok := sessionOf(c, keyApproval+id)
	if !ok {
		return nil
	}
	t, ok := loadTurn(c, session)
	if !ok {
		return nil
	}
	if _, pending := t.Approvals[id]; !pending {
		return nil
	}
	resume(c, t, id, nowMS(c))
	logFailure(c, saveTurn(c, t))
	return nil
}

// resume drops approval question id from t; when none is left pending the
// clock runs again, the paused time not counted.
func resume(c *sdk.Call, t *turn, id string, now int64) {
	delete(t.Approvals, id)
	_ = c.KVDelete(keyApproval + id)
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
