package ipc

import "encoding/json"

// The after-tool hook (issue 34.3): once a tool call's result is in, the
// agent asks the capsules intercepting AgentAfterToolTopic about it (a
// request answered on AgentAfterToolReplyTopic, correlated by the call
// id) and gives the model what they answer after the result, before it
// reads the round. The hooks capsule runs the operator's PostToolUse
// hooks there (Claude Code's additionalContext, and decision "block" with
// its reason, fed back to the model). The request carries a tool's result,
// so it is tool plumbing (DESIGN §4c): its topic is in the tool namespace,
// and intercepting or reading it needs tool_middleware (manifest's
// plumbing rule), where agent.v1.* is read by every frontend.
const (
	AgentAfterToolTopic      = "tool.v1.hook.after_tool"
	AgentAfterToolReplyTopic = "agent.v1.hook_response.after_tool"
)

// AgentAfterTool is the after-tool request: the call and its result.
type AgentAfterTool struct {
	SessionID string          `json:"session_id"`
	TurnID    string          `json:"turn_id,omitempty"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	IsError   bool            `json:"is_error"`
	// Content is the result the model reads, at most
	// AfterToolContentBytes of it (cut on a rune boundary).
	Content    string `json:"content"`
	DurationMS int64  `json:"duration_ms"`
}

// AgentAfterToolAnswer answers AgentAfterTool: Context, when not empty,
// is given to the model after the call's result (at most
// AfterToolContextBytes of it).
type AgentAfterToolAnswer struct {
	CallID  string `json:"call_id"`
	Context string `json:"context,omitempty"`
}

// Bounds of the after-tool hook.
const (
	AfterToolContentBytes = 64 << 10
	AfterToolContextBytes = 32 << 10
)
