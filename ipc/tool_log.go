package ipc

import "slices"

// AgentToolLog is a log message about a tool call in flight, on
// AgentToolLogTopic. Like AgentToolProgress it names the call, not a
// session: a frontend passes it on for a call it made (astrid mcp serve
// as notifications/message, honouring the client's logging/setLevel) and
// drops any other. It only informs; nothing waits on it.
type AgentToolLog struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Level is one of ToolLogLevels (RFC 5424's, as MCP has them).
	Level string `json:"level"`
	// Logger names the part of the provider that logged, if it says.
	Logger string `json:"logger,omitempty"`
	// Message is the provider's words (at most MaxToolLogMessage bytes).
	Message string `json:"message"`
}

// ToolLogLevels are the levels of an AgentToolLog, least severe first.
var ToolLogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// MaxToolLogMessage bounds AgentToolLog.Message.
const MaxToolLogMessage = 4 << 10

// ToolLogLevel is level when it is one of ToolLogLevels, else "info": a
// provider's unknown level does not make its message unreadable.
func ToolLogLevel(level string) string {
	if slices.Contains(ToolLogLevels, level) {
		return level
	}
	return "info"
}
