package host

import (
	"encoding/json"
	"fmt"
	"strings"

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

// The request topics of the other conventions whose requester waits for an
// answer the kernel can give: a model provider owes its requester a stream
// that ends (llm.v1.request.generate.<provider> → llm.v1.stream.<provider>),
// the agent owes a frontend the final response of the turn a prompt starts.
const (
	generatePrefix = "llm.v1.request.generate."
	promptTopic    = "user.v1.prompt"
	// assembleTopic asks the prompt builder for a turn's prompt; its
	// answer, on assembleAnswerTopic, may carry an error.
	assembleTopic       = "prompt_builder.v1.assemble"
	assembleAnswerTopic = "prompt_builder.v1.response.assemble"
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

// AnswerDropped answers, on the capsule's behalf, a request the dispatcher
// dropped before the capsule saw it (its queue was full), so that the
// requester hears why at once instead of waiting for its timeout (DESIGN §4,
// every refusal answered). It knows five conventions, and answers where
// the capsule's own answer would have gone:
//
//   - a tool call (tool.v1.request.execute, tool.v1.execute.<name>) gets an
//     is_error result naming the call; a tool's result the consolidator
//     never saw gets one saying the answer was lost;
//   - a model request (llm.v1.request.generate.<p>) gets an error event on
//     llm.v1.stream.<p> for its request id;
//   - a prompt that starts a turn (user.v1.prompt) gets a final
//     agent.v1.response with outcome "busy" for its session and turn;
//   - a request for a turn's prompt (prompt_builder.v1.assemble) gets an
//     answer with an error for its request and session;
//   - an event of a model stream (llm.v1.stream.<p>) dropped at the queue
//     of the capsule following it: that capsule alone is told, past its
//     full queue, with an error event for the request from the kernel
//     (noticeLostStreamEvent), once per request.
//
// The answer is a failure reply: the rate limit does not refuse it, the ACL
// still must allow it. It reports whether an answer was published; any
// other event has no requester the kernel can know, and is only counted.
func (c *Capsule) AnswerDropped(d dispatch.Dropped) bool {
	if strings.HasPrefix(d.Envelope.Topic, streamPrefix) {
		return c.noticeLostStreamEvent(d)
	}
	topic, payload, ok := c.dropAnswer(d)
	if !ok {
		return false
	}
	caller := dispatch.Caller{Capsule: c.id, Principal: d.Envelope.Principal, Continues: true, Scope: d.Envelope.Scope}
	if _, err := c.deps.Dispatcher.PublishFailure(caller, topic, "", payload); err != nil {
		c.log.Warn("the answer to a dropped request was not published", "topic", topic, "err", err)
		return false
	}
	return true
}

// dropAnswer builds the answer to d, if d is a request of a known
// convention that this capsule takes.
func (c *Capsule) dropAnswer(d dispatch.Dropped) (topic string, payload []byte, ok bool) {
	if wit, isTool := c.toolCalls[d.Pattern]; isTool {
		return toolDropAnswer(wit, d)
	}
	switch {
	case strings.HasPrefix(d.Envelope.Topic, generatePrefix):
		return generateDropAnswer(d)
	case d.Envelope.Topic == promptTopic:
		return promptDropAnswer(d)
	case d.Envelope.Topic == assembleTopic:
		return assembleDropAnswer(d)
	}
	return "", nil, false
}

func toolDropAnswer(wit string, d dispatch.Dropped) (string, []byte, bool) {
	var callID, topic, content string
	switch wit {
	case toolRequestWIT:
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(ipc.GuestBytes(d.Payload)); err != nil || req.CallID == "" {
			return "", nil, false
		}
		callID, topic = req.CallID, ipc.ToolExecuteResultTopic
		if name, ok := ipc.ToolNameFromExecuteTopic(d.Envelope.Topic); ok {
			topic = ipc.ToolResultTopic(name)
		}
		content = fmt.Sprintf("tool %s was not run: %s; try again later", req.ToolName, d.Reason)
	case toolResultWIT:
		// A tool's result the consolidator never saw: its caller is told
		// on the consolidated topic that the result was lost (the tool
		// may well have acted).
		name, ok := ipc.ToolNameFromResultTopic(d.Envelope.Topic)
		if !ok {
			return "", nil, false
		}
		var res ipc.ToolExecuteResult
		if err := res.UnmarshalJSON(ipc.GuestBytes(d.Payload)); err != nil || res.CallID == "" {
			return "", nil, false
		}
		callID, topic = res.CallID, ipc.ToolExecuteResultTopic
		content = fmt.Sprintf("tool %s: its answer was lost: %s; the tool may have run, check what it did before calling it again", name, d.Reason)
	default:
		return "", nil, false
	}
	res := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallResult{CallID: callID, Content: content, IsError: true}}
	payload, err := res.MarshalJSON()
	return topic, payload, err == nil
}

// generateDropAnswer ends a dropped model request's stream with an error,
// which the agent turns into the turn's end at once.
func generateDropAnswer(d dispatch.Dropped) (string, []byte, bool) {
	provider := strings.TrimPrefix(d.Envelope.Topic, generatePrefix)
	var req struct {
		RequestID string `json:"request_id"`
	}
	if ipc.ValidateTopic(ipc.LLMStreamTopic(provider)) != nil || json.Unmarshal(ipc.GuestBytes(d.Payload), &req) != nil || req.RequestID == "" {
		return "", nil, false
	}
	ev := ipc.StreamEvent{Kind: ipc.StreamError, Text: fmt.Sprintf("provider %s did not take the request: %s; try again later", provider, d.Reason)}
	payload, err := ipc.LLMStreamEvent{RequestID: req.RequestID, Event: ev}.MarshalJSON()
	return ipc.LLMStreamTopic(provider), payload, err == nil
}

// promptDropAnswer ends the turn a dropped prompt would have started. A
// dropped cancel_turn is not answered: the turn it names is still running
// and will end with its own final response, which a made-up one would hide.
func promptDropAnswer(d dispatch.Dropped) (string, []byte, bool) {
	in, ok := ipc.DecodePayload(ipc.GuestBytes(d.Payload)).(ipc.UserInput)
	if !ok {
		return "", nil, false
	}
	var pc ipc.PromptContext
	if len(in.Context) > 0 {
		_ = json.Unmarshal(in.Context, &pc) // a context that does not parse starts a turn without one
	}
	if pc.Action == ipc.ActionCancelTurn {
		return "", nil, false
	}
	resp := ipc.AgentResponse{
		Text:      fmt.Sprintf("The agent did not take this prompt: %s. Nothing ran; try again later.", d.Reason),
		IsFinal:   true,
		SessionID: in.SessionID,
		Outcome:   ipc.OutcomeBusy,
		TurnID:    pc.TurnID,
	}
	payload, err := ipc.EncodePayload(resp)
	return ipc.AgentResponseTopic, payload, err == nil
}

// assembleDropAnswer ends the turn whose prompt the prompt builder did not
// take, with an error naming why, instead of leaving it to the agent's
// prompt timeout (30 s).
func assembleDropAnswer(d dispatch.Dropped) (string, []byte, bool) {
	var req struct {
		RequestID string `json:"request_id"`
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(ipc.GuestBytes(d.Payload), &req) != nil || req.RequestID == "" || req.SessionID == "" {
		return "", nil, false
	}
	payload, err := json.Marshal(map[string]string{
		"request_id": req.RequestID, "session_id": req.SessionID,
		"error": fmt.Sprintf("it did not take the request: %s; try again later", d.Reason),
	})
	return assembleAnswerTopic, payload, err == nil
}
