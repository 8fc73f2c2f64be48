package host

import (
	"fmt"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// The [subscribe] payload types of the tool convention: an interceptor
// bound to a tool call owes its caller a result; one bound to a tool's
// result (the router) owes it the consolidated result.
const (
	toolRequestWIT = "tool-execute-request"
	toolResultWIT  = "tool-execute-result"
)

// answersToolCalls lists the capsule's interceptor patterns of the tool
// convention by their wit: the router's and approval's
// tool.v1.request.execute and a tool's tool.v1.execute.<name> (requests),
// the router's tool.v1.execute.*.result (results).
func answersToolCalls(m *manifest.Manifest) map[string]string {
	out := map[string]string{}
	for _, e := range m.Subscribe {
		if e.Handler != "" && (e.WIT == toolRequestWIT || e.WIT == toolResultWIT) {
			out[e.Pattern] = e.WIT
		}
	}
	return out
}

// AnswerDropped answers, on the capsule's behalf, a tool call the
// dispatcher dropped before the capsule saw it (its queue was full): the
// caller gets an is_error result saying why at once, instead of waiting for
// its timeout (DESIGN §4, every refusal answered). The answer goes where the
// capsule's own would have: the consolidated result for a call taken from
// tool.v1.request.execute, the tool's result topic for tool.v1.execute.<name>;
// it is a failure reply, so the rate limit does not refuse it and the ACL
// still must allow it. It reports whether an answer was published; events
// that are not tool calls have no caller waiting on a reply the kernel can
// know, and are only counted.
func (c *Capsule) AnswerDropped(d dispatch.Dropped) bool {
	var callID, topic, content string
	switch c.toolCalls[d.Pattern] {
	case toolRequestWIT:
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(ipc.GuestBytes(d.Payload)); err != nil || req.CallID == "" {
			return false
		}
		callID, topic = req.CallID, ipc.ToolExecuteResultTopic
		if name, ok := ipc.ToolNameFromExecuteTopic(d.Envelope.Topic); ok {
			topic = ipc.ToolResultTopic(name)
		}
		content = fmt.Sprintf("tool %s was not run: %s; the kernel refused the call rather than let it wait, try again later", req.ToolName, d.Reason)
	case toolResultWIT:
		// A tool's result the consolidator never saw: its caller is told
		// on the consolidated topic that the result was lost (the tool
		// may well have acted).
		name, ok := ipc.ToolNameFromResultTopic(d.Envelope.Topic)
		if !ok {
			return false
		}
		var res ipc.ToolExecuteResult
		if err := res.UnmarshalJSON(ipc.GuestBytes(d.Payload)); err != nil || res.CallID == "" {
			return false
		}
		callID, topic = res.CallID, ipc.ToolExecuteResultTopic
		content = fmt.Sprintf("tool %s: its answer was lost: %s; the tool may have run, check what it did before calling it again", name, d.Reason)
	default:
		return false
	}
	res := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallResult{CallID: callID, Content: content, IsError: true}}
	payload, err := res.MarshalJSON()
	if err != nil {
		return false
	}
	caller := dispatch.Caller{Capsule: c.id, Principal: d.Envelope.Principal, Continues: true}
	if _, err := c.deps.Dispatcher.PublishFailure(caller, topic, payload); err != nil {
		c.log.Warn("the answer to a dropped tool call was not published", "call_id", callID, "topic", topic, "err", err)
		return false
	}
	return true
}
