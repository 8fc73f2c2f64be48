package ipc

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// A tool may ask the model of the MCP client that called it (astrid mcp
// serve: sampling/createMessage to that client) while the call is in
// flight: it publishes an AgentToolSample naming the call on
// AgentToolSampleTopic, and the frontend that made the call answers on
// AgentToolSampleReplyTopic(request id) with an AgentToolSampleReply. Only
// the frontend that makes tool calls (ToolCallerID, reserved against
// capsule ids) answers; only when the operator allows the capsule to
// sample (config.toml [mcp] sampling) and the client offers sampling is
// the client asked. docs/rationale/mcp.md says why.
const (
	AgentToolSampleTopic = "agent.v1.tool.sample"
	// AgentToolSampleReplyPattern matches every reply topic.
	AgentToolSampleReplyPattern = "agent.v1.tool.sample.reply.*"
)

// ToolCallerID is the frontend identity tool calls are made under
// (astrid -p, astrid mcp serve): the one a sample request's answer must
// come from.
const ToolCallerID = "astrid-cli"

// AgentToolSampleReplyTopic is where request id's answer comes.
func AgentToolSampleReplyTopic(id string) string { return "agent.v1.tool.sample.reply." + id }

// Bounds of a sample request and its answer.
const (
	MaxSampleMessages  = 64
	MaxSampleText      = 256 << 10 // the messages' text in all, and the answer's
	MaxSampleTokens    = 100_000
	maxSampleRequestID = 64
)

// AgentToolSample asks the calling client's model for a completion.
type AgentToolSample struct {
	// RequestID names the request (16 to 64 of [A-Za-z0-9_-], random):
	// its answer comes on AgentToolSampleReplyTopic(RequestID).
	RequestID string `json:"request_id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	// Messages are the conversation, user and assistant turns of text.
	Messages     []SampleMessage `json:"messages"`
	SystemPrompt string          `json:"system_prompt,omitempty"`
	MaxTokens    int             `json:"max_tokens"`
}

// SampleMessage is one turn of a sample request.
type SampleMessage struct {
	Role string `json:"role"` // user or assistant
	Text string `json:"text"`
}

// AgentToolSampleReply answers an AgentToolSample: the model's text, or
// Error saying why there is none.
type AgentToolSampleReply struct {
	RequestID  string `json:"request_id"`
	Text       string `json:"text,omitempty"`
	Model      string `json:"model,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Validate reports why s cannot be asked.
func (s AgentToolSample) Validate() error {
	if n := len(s.RequestID); n < 16 || n > maxSampleRequestID || !isIDChars(s.RequestID) {
		return fmt.Errorf("a sample request id is 16 to %d of [A-Za-z0-9_-]", maxSampleRequestID)
	}
	if s.CallID == "" || s.Name == "" {
		return errors.New("a sample request names its tool call and tool")
	}
	if n := len(s.Messages); n == 0 || n > MaxSampleMessages {
		return fmt.Errorf("a sample request has 1 to %d messages, not %d", MaxSampleMessages, n)
	}
	total := len(s.SystemPrompt)
	for i, m := range s.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("message %d: role %.20q is not user or assistant", i, m.Role)
		}
		total += len(m.Text)
		if !utf8.ValidString(m.Text) {
			return fmt.Errorf("message %d is not UTF-8", i)
		}
	}
	if total > MaxSampleText {
		return fmt.Errorf("a sample request's text is %d bytes; at most %d are allowed", total, MaxSampleText)
	}
	if !utf8.ValidString(s.SystemPrompt) {
		return errors.New("the system prompt is not UTF-8")
	}
	if s.MaxTokens < 1 || s.MaxTokens > MaxSampleTokens {
		return fmt.Errorf("max_tokens is 1 to %d, not %d", MaxSampleTokens, s.MaxTokens)
	}
	return nil
}

func isIDChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
