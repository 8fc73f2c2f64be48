package hooks

import (
	_ "embed"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// ID is the capsule's id (its manifest's package name).
const ID = "astrid-capsule-hooks"

// The prompt builder's before_build protocol (capsules/promptbuilder, which
// a capsule may not import; docs/ARCHITECTURE.md).
const (
	beforeBuildTopic   = "prompt_builder.v1.hook.before_build"
	hookResponsePrefix = "prompt_builder.v1.hook_response."
)

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Runs the operator's command hooks around prompts and tool calls")
	c.Handle(ipc.ToolRequestExecuteTopic, "handle_tool_request", handleToolRequest)
	c.Handle(ipc.UserPromptTopic, "handle_prompt", handlePrompt)
	c.Handle(beforeBuildTopic, "handle_before_build", handleBeforeBuild)
	c.Handle(ipc.AgentToolStartedTopic, "handle_tool_started", handleToolStarted)
	c.Handle(ipc.AgentAfterToolTopic, "handle_after_tool", handleAfterTool)
	c.Handle(ipc.AgentResponseTopic, "handle_response", handleResponse)
	c.Publishes(ipc.ToolExecuteResultTopic)
	c.Publishes(ipc.AgentResponseTopic)
	c.Publishes(ipc.UserPromptTopic)
	c.Publishes(hookResponsePrefix + "*")
	c.Publishes(ipc.AgentAfterToolReplyTopic)
	return c
}
