package ipc

import "strings"

// IsReplyTopic reports whether topic, by the topic catalogue's conventions,
// carries an answer to a request already made — a model's stream
// (llm.v1.stream.<p>), a tool's result (tool.v1.execute.<name>.result) or
// the consolidated one (tool.v1.execute.result), and every
// <domain>.v1.response… and …hook_response… topic — rather than a request
// that starts work. The dispatcher gives answers headroom in a full queue
// when a handler publishes them (dispatch.Options.IsReply): dropping them
// would leave work already taken to its timeout.
func IsReplyTopic(topic string) bool {
	if strings.HasPrefix(topic, "llm.v1.stream.") || topic == ToolExecuteResultTopic {
		return true
	}
	if _, ok := ToolNameFromResultTopic(topic); ok {
		return true
	}
	_, rest, ok := strings.Cut(topic, ".v1.")
	if !ok {
		return false
	}
	seg, _, _ := strings.Cut(rest, ".")
	return seg == "response" || seg == "hook_response"
}
