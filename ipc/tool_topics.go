package ipc

import "strings"

// The tool convention's topics (seed 000). The kernel routes them like any
// other topic; only the router, the orchestrator, the prompt builder and the
// tool capsules give them meaning.
const (
	// ToolRequestExecuteTopic is where the orchestrator asks for a tool
	// call (a ToolExecuteRequest), to the router.
	ToolRequestExecuteTopic = "tool.v1.request.execute"
	// ToolExecuteResultTopic is where the router republishes every tool's
	// result (a ToolExecuteResult), for the orchestrator.
	ToolExecuteResultTopic = "tool.v1.execute.result"
	// ToolRequestCancelTopic carries a ToolCancelRequest to whatever holds
	// the named calls (the kernel's cancel listener).
	ToolRequestCancelTopic = "tool.v1.request.cancel"
	// ToolRequestDescribeTopic is where the prompt builder asks every tool
	// capsule to describe its tools (payload {}).
	ToolRequestDescribeTopic = "tool.v1.request.describe"

	// ToolResultPattern matches every tool's result topic, and not the
	// consolidated ToolExecuteResultTopic (one segment fewer), so the router
	// cannot loop on its own output.
	ToolResultPattern = "tool.v1.execute.*.result"
	// ToolDescribeResponsePattern matches every capsule's describe response.
	ToolDescribeResponsePattern = "tool.v1.response.describe.*"
)

const (
	toolExecutePrefix          = "tool.v1.execute."
	toolResultSuffix           = ".result"
	toolDescribeResponsePrefix = "tool.v1.response.describe."
)

// ToolExecuteTopic is where the router forwards a call of the named tool,
// and what the tool's capsule subscribes to: tool.v1.execute.<name>. The
// name must satisfy ValidateToolName, or the topic may gain segments.
func ToolExecuteTopic(name string) string {
	return toolExecutePrefix + name
}

// ToolResultTopic is where the named tool's capsule publishes its result:
// tool.v1.execute.<name>.result.
func ToolResultTopic(name string) string {
	return toolExecutePrefix + name + toolResultSuffix
}

// ToolNameFromExecuteTopic returns the tool name inside a tool's execute
// topic (tool.v1.execute.<name>), the topic whose exact interceptor makes a
// capsule the tool's provider. It reports false for any other topic,
// including the consolidated ToolExecuteResultTopic, and for a name that
// breaks ValidateToolName.
func ToolNameFromExecuteTopic(topic string) (string, bool) {
	name, ok := strings.CutPrefix(topic, toolExecutePrefix)
	if !ok || topic == ToolExecuteResultTopic || !validToolName(name) {
		return "", false
	}
	return name, true
}

// ToolNameFromResultTopic returns the tool name inside a result topic
// (tool.v1.execute.<name>.result), so that the router can check who may
// answer for it. It reports false for any other topic, including the
// consolidated ToolExecuteResultTopic and names that break ValidateToolName.
func ToolNameFromResultTopic(topic string) (string, bool) {
	rest, ok := strings.CutPrefix(topic, toolExecutePrefix)
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, toolResultSuffix)
	if !ok || !validToolName(name) {
		return "", false
	}
	return name, true
}

// ToolDescribeResponseTopic is where a capsule publishes its describe
// response: tool.v1.response.describe.<capsuleID>. The kernel stamps the
// real source_id on it, so the suffix is informative, not trusted.
func ToolDescribeResponseTopic(capsuleID string) string {
	return toolDescribeResponsePrefix + capsuleID
}
