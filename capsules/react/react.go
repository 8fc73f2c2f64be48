package react

import (
	_ "embed"
	"time"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the agent loop's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// The topics of the turn's other parties.
const (
	// AssembleTopic asks the prompt builder for a turn's prompt.
	AssembleTopic = "prompt_builder.v1.assemble"
	// AssembledTopic is the prompt builder's answer.
	AssembledTopic = "prompt_builder.v1.response.assemble"
	// sessionGetMessagesTopic is the session store's append-and-read.
	sessionGetMessagesTopic = "session.v1.request.get_messages"
	// sessionReplyPrefix + correlation id is its scoped answer.
	sessionReplyPrefix = "session.v1.response.get_messages."
)

// requestTimeout bounds the kernel's wait for an answer to the turn's
// requests (a prompt, a model request, a tool call); the turn's own phase
// limits end it sooner. Long, since a tool call may wait for a person.
const requestTimeout = time.Hour

// New returns the agent loop's code.
func New() *sdk.Capsule {
	c := sdk.New("The agent loop: prompt, model, tools, answer")
	c.Handle(ipc.UserPromptTopic, "handle_prompt", handlePrompt)
	c.Handle(AssembledTopic, "handle_assembled", handleAssembled)
	c.Handle("llm.v1.stream.*", "handle_stream", handleStream)
	c.Handle(ipc.ToolExecuteResultTopic, "handle_tool_result", handleToolResult)
	c.Handle(ipc.AgentAfterToolReplyTopic, "handle_after_tool", handleAfterTool)
	c.Handle(ipc.ApprovalRequestTopic, "handle_approval", handleApproval)
	c.Handle(ipc.ApprovalResponseTopic("*"), "handle_approval_response", handleApprovalResponse)
	c.Handle(ipc.ElicitPendingTopic, "handle_elicit_pending", handleElicitPending)
	c.Handle(ipc.ElicitSettledTopic, "handle_elicit_settled", handleElicitSettled)
	c.Handle(ipc.WatchdogTickTopic, "handle_tick", handleTick)
	c.Subscribes(sessionReplyPrefix + "*")
	c.Subscribes(registryReplyPrefix + "*")
	c.Publishes(ipc.RegistryGetActiveModelTopic)
	c.Publishes(sessionGetMessagesTopic)
	c.Publishes(AssembleTopic)
	c.Publishes("llm.v1.request.generate.*")
	c.Publishes(ipc.ToolRequestExecuteTopic)
	c.Publishes(ipc.ToolRequestCancelTopic)
	c.Publishes(ipc.AgentResponseTopic)
	c.Publishes(ipc.AgentStreamDeltaTopic)
	c.Publishes(ipc.AgentToolStartedTopic)
	c.Publishes(ipc.AgentToolFinishedTopic)
	c.Publishes(ipc.AgentCompactedTopic)
	c.Publishes(ipc.AgentAfterToolTopic)
	return c
}
