package promptbuilder

import (
	_ "embed"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the prompt builder's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Topics of the protocol (spec/capsules-cli.md §4.1, Appendix A).
const (
	AssembleTopic      = "prompt_builder.v1.assemble"
	ResponseTopic      = "prompt_builder.v1.response.assemble"
	BeforeBuildTopic   = "prompt_builder.v1.hook.before_build"
	AfterBuildTopic    = "prompt_builder.v1.hook.after_build"
	hookResponsePrefix = "prompt_builder.v1.hook_response."
)

// HookResponseTopic is where hooks answer the before_build of requestID:
// prompt_builder.v1.hook_response.<request id>.
func HookResponseTopic(requestID string) string { return hookResponsePrefix + requestID }

// The static engine's context topics (internal/engine/static, which a
// built-in may not import; docs/static.md).
const (
	staticContextRequestTopic   = "static.v1.request.context"
	staticContextResponsePrefix = "static.v1.response.context."
)

// The session store's history request (capsules/session's protocol).
const (
	sessionGetMessagesTopic = "session.v1.request.get_messages"
	sessionGetMessagesOp    = "get_messages"
)

// New returns the prompt builder's code.
func New() *sdk.Capsule {
	c := sdk.New("Assembles the system prompt, tools and history for each model request")
	c.Handle(AssembleTopic, "handle_assemble", handleAssemble)
	c.Handle(ipc.CapsulesLoadedTopic, "handle_capsules_loaded", handleCapsulesLoaded)
	c.Publishes(ResponseTopic)
	c.Publishes(BeforeBuildTopic)
	c.Publishes(AfterBuildTopic)
	c.Publishes(ipc.ToolRequestDescribeTopic)
	c.Publishes(staticContextRequestTopic)
	c.Publishes(sessionGetMessagesTopic)
	c.Subscribes(hookResponsePrefix + "*")
	c.Subscribes(ipc.ToolDescribeResponsePattern)
	c.Subscribes(staticContextResponsePrefix + "*")
	c.Subscribes(ipc.SessionResponseTopic(sessionGetMessagesOp, "*"))
	return c
}
