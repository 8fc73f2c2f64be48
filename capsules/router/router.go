// Package router is the built-in tool router capsule (seed 000): stateless
// middleware between whoever asks for a tool and the capsule that provides
// it, plus DESIGN §4's "who answers a tool": a result is consolidated only
// from the capsule that intercepts that tool's topic, and only for a call the
// router forwarded and has not yet answered — or, as a failure only, from the
// kernel, which answers a call whose provider's host was lost (DESIGN §9).
package router

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the router's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// pendingPrefix keys the calls forwarded and not yet answered, in the
// invoking principal's KV namespace: ~pending/<call id> = tool name. The
// '~' makes the record volatile (in the kernel's memory, never in
// state.db): a restart kills every pending call anyway, and a durable
// record cost two fsynced commits per tool call. Should a namespace hold
// more calls in flight than its volatile cap, the oldest record is evicted
// and logged, and that call's result is refused as unknown.
const pendingPrefix = "~pending/"

// forwardTimeout bounds the kernel's wait for a provider's answer: long,
// since a tool may wait for a person's approval of what it does.
const forwardTimeout = time.Hour

// New returns the router's code.
func New() *sdk.Capsule {
	c := sdk.New("Routes tool calls to the capsule that provides the tool")
	c.Handle(ipc.ToolRequestExecuteTopic, "handle_execute_request", handleRequest)
	c.Handle("tool.v1.execute.*.result", "handle_execute_result", handleResult)
	c.Handle(ipc.ToolRequestCancelTopic, "handle_cancel", handleCancel)
	c.Publishes(ipc.CancelRequestTopic)
	c.Publishes("tool.v1.execute.*")
	c.Publishes(ipc.ToolExecuteResultTopic)
	return c
}

// handleCancel turns the tool convention's cancel (tool.v1.request.cancel,
// from an orchestrator or a frontend) into the kernel's, which names the
// requests to interrupt by correlation id: a tool call's id is the
// correlation id of the request the router forwards, and the provider binds
// it as its cancel key. The kernel hears it on every host and interrupts
// only the calls of the principal this call acts for.
func handleCancel(c *sdk.Call) error {
	var req ipc.ToolCancelRequest
	if err := json.Unmarshal(c.Payload(), &req); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: dropped a cancel that is not a tool_cancel_request: %v", err))
		return nil
	}
	ids := slices.DeleteFunc(slices.Clone(req.CallIDs), func(id string) bool { return id == "" || len(id) > 256 })
	var firstErr error
	for chunk := range slices.Chunk(ids, ipc.MaxCancelKeys) {
		p, err := ipc.CancelRequest{CorrelationIDs: chunk}.MarshalJSON()
		if err == nil {
			err = c.Publish(ipc.CancelRequestTopic, p)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("router: pass on the cancel of %d calls: %w", len(chunk), err)
		}
	}
	return firstErr
}

func handleRequest(c *sdk.Call) error {
	// The request is decoded with the one tool codec (the provider decodes
	// it with the same) and forwarded as the requester spelled it:
	// encoding it again would only compact its arguments, which in a wasm
	// router is encoding/json's byte-at-a-time scanner.
	payload := c.Payload()
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(payload); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: dropped a request that is not a tool_execute_request: %v", err))
		return nil
	}
	if req.CallID == "" {
		c.Log(hostapi.LogWarn, "router: dropped a tool request without call_id")
		return nil
	}
	// Whatever happens below, the requester gets an answer.
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, errorResult(req.CallID, "Failed to route tool request: the router did not finish")); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: call %q: failure reply not registered: %v", req.CallID, err))
	}
	if err := ipc.ValidateToolName(req.ToolName); err != nil {
		return publishError(c, req.CallID, fmt.Sprintf("Invalid tool name: %v", err))
	}
	topic := ipc.ToolExecuteTopic(req.ToolName)
	owners, err := c.ExactInterceptors(topic)
	if err != nil {
		return publishError(c, req.CallID, fmt.Sprintf("Failed to route tool request: %v", err))
	}
	if len(owners) == 0 {
		return publishError(c, req.CallID, fmt.Sprintf("Unknown tool: no capsule provides %q", req.ToolName))
	}
	if err := c.KVSet(pendingPrefix+req.CallID, pendingValue(req.ToolName, owners)); err != nil {
		return publishError(c, req.CallID, fmt.Sprintf("Failed to route tool request: %v", err))
	}
	// The audit chain hears of the call before its provider does; a call
	// the chain cannot take does not run (docs/audit.md).
	if err := c.AuditRecord(hostapi.AuditRecord{
		Kind: hostapi.AuditToolStarted, Capsule: strings.Join(owners, ","), Subject: req.ToolName,
		Detail: map[string]string{"call_id": auditID(req.CallID)}, Digest: map[string][]byte{"args": req.Arguments},
	}); err != nil {
		// Left behind, the record is volatile and a result for it later
		// finds no forwarded call: the call was not forwarded.
		_ = c.KVDelete(pendingPrefix + req.CallID)
		return publishError(c, req.CallID, fmt.Sprintf("Failed to route tool request: the audit chain did not record it: %v", err))
	}
	// A request: if the provider cannot answer it (its queue is full, it
	// fails, its host is lost), the kernel does, on the result topic.
	timeout := forwardTimeout
	if replyTo, _ := c.Serving(); replyTo == "" {
		timeout = 0 // the caller asked without a request: the kernel's default
	}
	var err2 error
	if ipc.ValidateCorrelationID(req.CallID) == nil {
		err2 = c.Request(topic, payload, hostapi.Request{ReplyTo: ipc.ToolResultTopic(req.ToolName), CorrelationID: req.CallID, Timeout: timeout})
	} else {
		// A call id no request can carry (over 1 KiB, a control
		// character) is forwarded as a plain publish, as it always was.
		err2 = c.Publish(topic, payload)
	}
	if err := err2; err != nil {
		// Not deleted: the record is volatile, and a result for it later
		// finds no forwarded call and is refused; nothing runs twice.
		_ = c.KVDelete(pendingPrefix + req.CallID)
		return publishError(c, req.CallID, fmt.Sprintf("Failed to route tool request: %v", err))
	}
	return nil
}

func handleResult(c *sdk.Call) error {
	// tool.v1.execute.<name>.result: the interceptor pattern has five
	// segments, so name is exactly one segment.
	name := strings.TrimSuffix(strings.TrimPrefix(c.Topic(), "tool.v1.execute."), ".result")
	// A provider answers the calls forwarded to it. Who that was is
	// recorded with the call: a capsule unloaded mid-call still owes its
	// caller the failure reply the kernel publishes for it, while a
	// capsule that started providing the tool since then never took the
	// call and may not answer it.
	owners, err := c.ExactInterceptors(ipc.ToolExecuteTopic(name))
	if err != nil {
		owners = nil
	}
	out := c.Payload()
	var res ipc.ToolExecuteResult
	callID, innerID, ok := ipc.ToolResultCallIDs(out)
	if !ok || callID == "" || innerID == "" {
		if err := res.UnmarshalJSON(out); err != nil || res.CallID == "" {
			if !slices.Contains(owners, c.SourceID()) {
				return refuseStranger(c, name, owners)
			}
			c.Log(hostapi.LogWarn, fmt.Sprintf("router: dropped a malformed result for tool %q from %q", name, c.SourceID()))
			return nil
		}
		callID = res.CallID
	}
	pending, ok, err := c.KVGet(pendingPrefix + callID)
	if err != nil || !ok {
		if !slices.Contains(owners, c.SourceID()) {
			return refuseStranger(c, name, owners)
		}
		// The tool's own answer to a call not pending here: the router
		// of another host holds it (every daemon loads a router, and the
		// tool's host runs its own chain on the result too), or it came
		// after its caller was answered (a timeout, a lost host). Neither
		// is a refusal worth a warning; it goes no further.
		c.Log(hostapi.LogDebug, fmt.Sprintf("router: result for call %q from %q: no pending call of tool %q here (held by another host's router, or late)", callID, c.SourceID(), name))
		c.Final(nil)
		return nil
	}
	tool, forwardedTo := parsePending(pending)
	if !slices.Contains(forwardedTo, c.SourceID()) && !kernelFailure(c, out) {
		return refuseStranger(c, name, forwardedTo)
	}
	if f, failed := ipc.AsRequestFailed(out); failed {
		// The kernel answered for the provider: the caller reads why.
		out = errorResult(callID, ipc.FailureText(f, "tool "+name))
		res = ipc.ToolExecuteResult{}
	}
	if tool != name {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: refused a result for call %q from %q: no pending call of tool %q with that id", callID, c.SourceID(), name))
		c.Deny("no such pending call")
		return nil
	}
	if err := c.KVDelete(pendingPrefix + callID); err != nil {
		return err
	}
	if res.CallID != "" && res.Result.CallID == "" {
		res.Result.CallID = res.CallID
		if out, err = res.MarshalJSON(); err != nil {
			return err
		}
	}
	// The result reaches the caller only once the audit chain holds its
	// end (and so its start) on disk.
	if err := auditEnd(c, callID, name, out); err != nil {
		out = errorResult(callID, fmt.Sprintf("The result of tool %q was withheld: the audit chain did not record it: %v", name, err))
	}
	// The result is also this call's failure reply: should the publish be
	// refused (the rate limit), the failure reply, which the limiter never
	// refuses, still brings the caller its answer.
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, out); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: call %q: result not registered as the failure reply: %v", callID, err))
	}
	// The answer to the caller's request, which the call id correlates.
	return c.PublishReply(ipc.ToolExecuteResultTopic, callID, out)
}

// auditEnd records the end of call callID of tool name, whose result is
// out, and waits until the entry is on disk.
func auditEnd(c *sdk.Call, callID, name string, out []byte) error {
	outcome := "ok"
	var r ipc.ToolExecuteResult
	if err := r.UnmarshalJSON(out); err != nil || r.Result.IsError {
		outcome = "error"
	}
	return c.AuditRecord(hostapi.AuditRecord{
		Kind: hostapi.AuditToolEnded, Capsule: c.SourceID(), Subject: name, Outcome: outcome,
		Detail: map[string]string{"call_id": auditID(callID)}, Digest: map[string][]byte{"result": out},
	})
}

// auditID is a call id as the audit chain keeps it: at most 128 bytes.
func auditID(id string) string {
	if len(id) > 128 {
		return id[:128]
	}
	return id
}

// kernelFailure reports whether a result is the kernel's answer to the
// request the router forwarded, for a provider that cannot give one (it
// never took the call, failed, or its host was lost: DESIGN §4b, §9). Only
// the kernel publishes as ipc.KernelSourceID, and kernel events never
// cross hosts, so this is the calling host's own kernel. It may end a call
// with a failure, never with a success.
func kernelFailure(c *sdk.Call, out []byte) bool {
	if c.SourceID() != ipc.KernelSourceID {
		return false
	}
	_, failed := ipc.AsRequestFailed(out)
	return failed
}

// refuseStranger refuses a result from a capsule the call was not
// forwarded to.
func refuseStranger(c *sdk.Call, name string, owners []string) error {
	c.Log(hostapi.LogWarn, fmt.Sprintf("router: refused a result for tool %q from capsule %q, which does not provide it (providers: %v)", name, c.SourceID(), owners))
	c.Deny("result from a capsule that does not provide the tool")
	return nil
}

// pendingValue records a forwarded call: its tool and the capsules it was
// forwarded to, one per line after the tool's name (neither a tool name
// nor a capsule id holds a newline).
func pendingValue(tool string, owners []string) []byte {
	return []byte(tool + "\n" + strings.Join(owners, "\n"))
}

// parsePending reads what pendingValue wrote.
func parsePending(v []byte) (tool string, owners []string) {
	parts := strings.Split(string(v), "\n")
	return parts[0], parts[1:]
}

// errorResult is the is_error tool_execute_result of a call.
// (ToolExecuteResult's MarshalJSON never fails: no field of it can hold
// invalid JSON.)
func errorResult(callID, msg string) json.RawMessage {
	// MarshalJSON directly: through EncodePayload's interface the value
	// would be boxed, an allocation per request.
	out, _ := ipc.ToolExecuteResult{
		CallID: callID,
		Result: ipc.ToolCallResult{CallID: callID, Content: msg, IsError: true},
	}.MarshalJSON()
	return out
}

func publishError(c *sdk.Call, callID, msg string) error {
	c.Log(hostapi.LogWarn, "router: "+msg)
	out := errorResult(callID, msg)
	// As in handleResult: if this publish is refused, the failure reply
	// still says what went wrong.
	if err := c.SetFailureReply(ipc.ToolExecuteResultTopic, out); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("router: call %q: error result not registered as the failure reply: %v", callID, err))
	}
	return c.Publish(ipc.ToolExecuteResultTopic, out)
}
