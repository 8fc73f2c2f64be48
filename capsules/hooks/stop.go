package hooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// relayTimeout is the wait the relayed prompt asks for: the most a
// request may (an hour); the frontend's own wait is replaced by it.
const relayTimeout = time.Hour

// relay sends the prompt on to the agent as this capsule's own request
// with the frontend's reply address and correlation id, so the agent's
// final response, a reply, is delivered to the frontend and to this
// capsule (the dispatcher addresses a relayed request's reply to everyone
// who sent it), which runs the Stop hooks on it. The frontend's request
// stops here. It reports false when the prompt was no request (nothing to
// correlate a reply with): it then goes on as it is, and no Stop hook
// runs for its turn.
func relay(c *sdk.Call) (bool, error) {
	replyTo, corr := c.Serving()
	if replyTo != ipc.AgentResponseTopic || corr == "" {
		c.Log(hostapi.LogInfo, "hooks: a prompt sent without a reply address: no Stop hook runs for its turn")
		return false, nil
	}
	if err := c.Request(ipc.UserPromptTopic, c.Payload(), hostapi.Request{ReplyTo: replyTo, CorrelationID: corr, Timeout: relayTimeout}); err != nil {
		return false, fmt.Errorf("hooks: relay the prompt to the agent: %w", err)
	}
	c.Final(nil)
	return true, nil
}

// handleResponse runs the Stop hooks when a turn this capsule relayed
// ends (its final response, addressed here as well as to the frontend).
// A Stop hook cannot make the turn go on (decision "block" is logged):
// the frontend already has the response.
func handleResponse(c *sdk.Call) error {
	var r ipc.AgentResponse
	if err := json.Unmarshal(ipc.GuestBytes(c.Payload()), &r); err != nil || !r.IsFinal {
		return nil
	}
	if c.SourceID() != ipc.KernelSourceID {
		if agents, err := c.Interceptors(ipc.UserPromptTopic); err != nil || !contains(agents, c.SourceID()) || c.SourceID() == c.CapsuleID() {
			return nil
		}
	}
	switch r.Outcome {
	case ipc.OutcomeCancelled, ipc.OutcomeBusy:
		return nil // the person stopped it, or it never ran
	}
	hooks, cfg := hooksFor(c, Stop, "")
	active := false
	for _, h := range hooks {
		v, _ := run(c, h, cfg, Input{HookEventName: Stop, SessionID: r.SessionID, StopHookActive: &active})
		logVerdict(c, h, Stop, v)
		if v.Block {
			c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: %s asked the turn on session %q to go on; a Stop hook cannot here (the answer is already shown): %s", h.describe(Stop), r.SessionID, v.Reason))
		}
	}
	return nil
}
