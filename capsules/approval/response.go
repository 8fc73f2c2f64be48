package approval

import (
	"time"

	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// answer is an approval_response, read tolerantly: tagged or not, bare or
// wrapped in {"data": …} (spec §1's compatibility lesson).
type answer struct {
	RequestID string  `json:"request_id"`
	Decision  string  `json:"decision"`
	Reason    *string `json:"reason"`
	Data      *answer `json:"data"`
}

// maxReasonRunes bounds the person's reason quoted in a refusal.
const maxReasonRunes = 200

// handleResponse settles a question. It always Continues: the orchestrator
// intercepts the same topic (to restart its tool-phase clock), and an
// answer this capsule ignores is no business of the chain's.
func handleResponse(c *sdk.Call) error {
	requestID := strings.TrimPrefix(c.Topic(), "astrid.v1.approval.response.")
	if !slices.Contains(approvers(c), c.SourceID()) && !relayedByUplink(c) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: ignored an answer to %q from %q, which is not an approver frontend (%s)", requestID, c.SourceID(), ApproversKey))
		return nil
	}
	var a answer
	if err := json.Unmarshal(c.Payload(), &a); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: ignored an answer to %q that does not decode: %v", requestID, err))
		return nil
	}
	if a.RequestID == "" && a.Decision == "" && a.Data != nil {
		a = *a.Data
	}
	if a.RequestID != "" && a.RequestID != requestID {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: ignored an answer on the topic of %q naming request %q", requestID, a.RequestID))
		return nil
	}
	// Only this principal's questions are in this namespace: an answer for
	// another principal's question, like one for an unknown or settled
	// id, finds nothing.
	p, ok, err := loadPending(c, requestID)
	if err != nil {
		// Logged, not returned: an error would end the chain as a Deny,
		// and the orchestrator behind this link would miss the answer.
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: answer to %q not handled: %v", requestID, err))
		return nil
	}
	if !ok {
		c.Log(hostapi.LogInfo, fmt.Sprintf("approval: ignored an answer to %q: no open question of principal %s has that id", requestID, c.Principal()))
		return nil
	}
	if err := settle(c, requestID, p.CallID); err != nil {
		return err
	}
	// The answer is on disk in the chain before it takes effect.
	if err := c.AuditRecord(hostapi.AuditRecord{
		Kind: hostapi.AuditApprovalAnswered, Capsule: p.Capsule, Subject: p.Tool, Outcome: clip(a.Decision, 64),
		Detail: map[string]string{"request_id": requestID, "call_id": clip(p.CallID, 128), "answered_by": c.SourceID()},
	}); err != nil {
		return refuseSettled(c, p, fmt.Sprintf("%s was not run: the audit chain did not record the answer: %v", p.Tool, err))
	}
	switch a.Decision {
	case ipc.DecisionApprove, ipc.DecisionApproveSession, ipc.DecisionApproveAlways:
		return release(c, p, requestID, a.Decision)
	}
	msg := p.Tool + " was not approved by the user"
	if a.Reason != nil && strings.TrimSpace(*a.Reason) != "" {
		msg += " (" + clip(strings.TrimSpace(*a.Reason), maxReasonRunes) + ")"
	}
	if a.Decision != ipc.DecisionDeny {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: answer %q to %q is not a decision; denied", a.Decision, requestID))
	}
	return refuseSettled(c, p, msg)
}

// release records decision's allowance (naming requestID, the question it
// answers) and sends the held call on, with a pass for its one re-publish.
func release(c *sdk.Call, p pending, requestID, decision string) error {
	// An allowance not kept still lets this call through: the person
	// approved it. The next call asks again.
	if err := allow(c, decision, requestID, p.Capsule, p.Tool); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: %s of %s/%s not kept: %v", decision, p.Capsule, p.Tool, err))
	}
	if err := c.KVSet(passPrefix+p.CallID, []byte(decision)); err != nil {
		return refuseSettled(c, p, fmt.Sprintf("%s was approved but not run: %v", p.Tool, err))
	}
	var err error
	if p.ReplyTo != "" {
		// Still the caller's request: should the router not take it, the
		// kernel answers the caller.
		err = c.Request(ipc.ToolRequestExecuteTopic, p.Request, hostapi.Request{ReplyTo: p.ReplyTo, CorrelationID: p.CallID, Timeout: time.Hour})
	} else {
		err = c.Publish(ipc.ToolRequestExecuteTopic, p.Request)
	}
	if err != nil {
		// A pass left behind lets only this call id through once more,
		// and the call was refused: nothing it could admit.
		_ = c.KVDelete(passPrefix + p.CallID)
		return refuseSettled(c, p, fmt.Sprintf("%s was approved but not run: %v", p.Tool, err))
	}
	return nil
}

// refuseSettled answers a settled question's call with an is_error result,
// leaving the chain to continue.
func refuseSettled(c *sdk.Call, p pending, msg string) error {
	err := refuse(c, p.CallID, p.Tool, msg)
	c.Continue(nil)
	return err
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// relayedByUplink reports whether the answer came from a loaded uplink
// capsule ([capabilities] uplink = true): it relays the answer of the
// person connected to it, under that person's principal, which the
// question's record is then checked against like any approver's.
func relayedByUplink(c *sdk.Call) bool {
	held, err := c.HoldsGrant(c.SourceID(), hostapi.GrantUplink)
	return err == nil && held
}
