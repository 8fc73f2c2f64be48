package sdk

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// SampleWait bounds the wait for a sample's answer (the call's own
// deadline may end it sooner).
const SampleWait = 2 * time.Minute

// Sample asks the model of the MCP client that called the tool c serves
// (astrid mcp serve) for a completion of q's messages, and waits for the
// answer. q's request id, call id and tool name are filled in from c. It
// is refused unless the operator allows the capsule to sample (config.toml
// [mcp] sampling) and the client offers sampling; a call not made through
// astrid mcp serve has nobody to answer and waits out SampleWait. The
// capsule's manifest publishes ipc.AgentToolSampleTopic and subscribes to
// ipc.AgentToolSampleReplyPattern. Only the tool-calling frontend's answer
// (ipc.ToolCallerID) counts.
func Sample(c *Call, q ipc.AgentToolSample) (ipc.AgentToolSampleReply, error) {
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(c.Payload()); err != nil {
		return ipc.AgentToolSampleReply{}, errors.New("sample: only a tool call may sample (its payload is no tool_execute_request)")
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: request id: %w", err)
	}
	q.RequestID, q.CallID, q.Name = "s"+hex.EncodeToString(id), req.CallID, req.ToolName
	if err := q.Validate(); err != nil {
		return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: %w", err)
	}
	payload, err := json.Marshal(q)
	if err != nil {
		return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: %w", err)
	}
	sub, err := c.Subscribe(ipc.AgentToolSampleReplyTopic(q.RequestID))
	if err != nil {
		return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: %w", err)
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.Publish(ipc.AgentToolSampleTopic, payload); err != nil {
		return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: %w", err)
	}
	deadline := c.Now().Add(SampleWait)
	for {
		left := deadline.Sub(c.Now())
		if left <= 0 {
			return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: no answer within %s (only a call through astrid mcp serve is answered)", SampleWait)
		}
		msg, err := c.Recv(sub, left)
		if errors.Is(err, hostapi.ErrTimeout) {
			continue
		}
		if err != nil {
			return ipc.AgentToolSampleReply{}, fmt.Errorf("sample: waiting for the answer: %w", err)
		}
		var r ipc.AgentToolSampleReply
		if msg.SourceID != ipc.ToolCallerID || json.Unmarshal(ipc.GuestBytes(msg.Payload), &r) != nil || r.RequestID != q.RequestID {
			continue
		}
		if r.Error != "" {
			return r, fmt.Errorf("sample: %s", r.Error)
		}
		return r, nil
	}
}
