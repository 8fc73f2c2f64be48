package approval

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// handleRequest is the interceptor on tool.v1.request.execute, ahead of the
// router: it lets a call through (Continue) or holds it for a question
// (Final). It returns without waiting for the answer.
func handleRequest(c *sdk.Call) error {
	payload := c.Payload()
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(payload); err != nil || req.CallID == "" {
		// Nothing to hold or answer: the router drops it and says why.
		return nil
	}
	// A call id that cannot be part of a KV key is no problem until the
	// call must be kept for a question.
	keepable := checkCallID(req.CallID)
	// Whatever goes wrong below, the caller hears of it.
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, refusal(req.CallID, req.ToolName+" was not run: the approval layer did not finish")); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: call %q: failure reply not registered: %v", req.CallID, err))
	}
	// The one re-publish of an approved call: only this capsule's own, and
	// only once (the pass is spent here).
	if keepable == nil && c.SourceID() == c.CapsuleID() {
		if pass, ok, err := c.KVGet(passPrefix + req.CallID); err != nil {
			return err
		} else if ok {
			if string(pass) == cancelledPass {
				c.Final(nil) // cancelled since it was approved
			}
			return c.KVDelete(passPrefix + req.CallID)
		}
	}
	if keepable != nil {
		// Not kept, so never asked about: nothing to find.
	} else if asked, ok, err := c.KVGet(callPrefix + req.CallID); err != nil {
		return err
	} else if ok {
		// The same call again while its question is open: the question
		// stands, and one answer settles the call once (an allowance
		// given meanwhile must not run it a second time).
		c.Final(nil)
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: call %q requested again while question %s is open; ignored", req.CallID, asked))
		return nil
	}
	if ipc.ValidateToolName(req.ToolName) != nil {
		return nil // the router answers "Invalid tool name"
	}
	providers, err := c.Interceptors(ipc.ToolExecuteTopic(req.ToolName))
	if err != nil {
		return err
	}
	if len(providers) == 0 {
		return nil // the router answers "Unknown tool"
	}
	provider := providers[0]
	v, err := classify(c, req.ToolName, provider)
	if err != nil {
		return err
	}
	// An agent's limits (astrid agent create) hold whatever the model
	// was offered: a read-only agent runs no mutable tool, and an agent
	// limited to some capsules no other capsule's tool. No question can
	// lift them.
	if policy, err := c.AgentPolicy(); err != nil {
		c.Final(nil)
		return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: the limits of principal %s could not be read: %v", req.ToolName, c.Principal(), err))
	} else if !policy.MayUse(provider, v.mutable) {
		why := "agent " + c.Principal() + " may not use capsule " + provider + "'s tools"
		if policy.MayUse(provider, false) {
			why = "it changes things and agent " + c.Principal() + " is read-only"
		}
		return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: %s", req.ToolName, why))
	}
	if !v.mutable || v.asksItself {
		// Read-only, or the provider asks the person itself for each
		// call (its manifest's asks_approval): asking here too would
		// put two questions before every call, and an allowance here
		// would cover every command the tool could run.
		return nil
	}
	if ok, err := allowed(c, provider, req.ToolName, req.CallID, req.Arguments); err != nil || ok {
		if u := (unrecordedError{}); errors.As(err, &u) {
			c.Final(nil)
			return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: %v", req.ToolName, err))
		}
		return err
	}
	c.Final(nil)
	if keepable != nil {
		return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: the approval layer cannot keep its call to ask about it: %v", req.ToolName, keepable))
	}
	return ask(c, req, payload, provider, v)
}

// ask keeps the call and publishes the question about it.
func ask(c *sdk.Call, req ipc.ToolExecuteRequest, payload []byte, provider string, v verdict) error {
	id, err := newRequestID(c)
	if err != nil {
		return err
	}
	secs := timeoutSecs(c)
	p := pending{
		CallID: req.CallID, Tool: req.ToolName, Capsule: provider, Request: json.RawMessage(payload),
		Deadline: c.Now().UnixNano() + int64(secs*1e9), TimeoutSecs: secs,
	}
	if replyTo, corr := c.Serving(); corr == req.CallID {
		p.ReplyTo = replyTo
	}
	if err := savePending(c, id, p); err != nil {
		return err
	}
	// The chain hears of the question before the person does.
	if err := c.AuditRecord(hostapi.AuditRecord{
		Kind: hostapi.AuditApprovalAsked, Capsule: provider, Subject: req.ToolName,
		Detail: map[string]string{"request_id": id, "call_id": clip(req.CallID, 128)}, Digest: map[string][]byte{"args": req.Arguments},
	}); err != nil {
		_ = settle(c, id, req.CallID)
		return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: the audit chain did not record the question: %v", req.ToolName, err))
	}
	q, err := ipc.ApprovalRequired{
		RequestID: id, Action: req.ToolName, Resource: resource(req.Arguments),
		Reason: reason(req.ToolName, provider, v), CallID: req.CallID,
	}.MarshalJSON()
	if err == nil {
		err = c.Publish(ipc.ApprovalRequestTopic, q)
	}
	if err != nil {
		_ = settle(c, id, req.CallID)
		return refuse(c, req.CallID, req.ToolName, fmt.Sprintf("%s was not run: the question could not be asked: %v", req.ToolName, err))
	}
	return nil
}

// refusal is the is_error result of a call that will not run.
func refusal(callID, msg string) []byte {
	out, _ := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallError(callID, msg)}.MarshalJSON()
	return out
}

// refuse answers a held call with an is_error result on the consolidated
// topic (the only thing this capsule publishes there), registered first as
// the failure reply so that a refused publish (the rate limit) still
// brings the caller its answer.
func refuse(c *sdk.Call, callID, tool, msg string) error {
	c.Final(nil)
	c.Log(hostapi.LogInfo, fmt.Sprintf("approval: call %q of %s refused: %s", callID, tool, msg))
	out := refusal(callID, msg)
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, out); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("approval: call %q: refusal not registered as the failure reply: %v", callID, err))
	}
	// The answer to the caller's request, which the call id correlates.
	return c.PublishReply(ipc.ToolExecuteResultTopic, callID, out)
}
