package uplink

import "github.com/astrid-go/astrid/ipc"

// ingress is what a client may publish: prompts, cancels, approval and
// elicitation answers, tool calls and the tool list, session and registry
// commands. It equals the manifest's [publish] (a test holds them equal),
// which the kernel enforces again on every publish.
var ingress = []string{
	ipc.UserPromptTopic,
	ipc.ToolRequestExecuteTopic, ipc.ToolRequestCancelTopic, ipc.ToolRequestDescribeTopic,
	ipc.ApprovalResponseTopic("*"), ipc.ElicitResponseTopic("*"),
	"session.v1.request.*",
	ipc.RegistryGetProvidersTopic, ipc.RegistryGetActiveModelTopic,
	ipc.RegistrySetActiveModelTopic, ipc.RegistryUnsetActiveModelTopic,
}

// egress is what a client may subscribe to (always only its own
// principal's events): the manifest's [subscribe].
var egress = []string{
	ipc.ToolExecuteResultTopic, "tool.v1.response.describe.*",
	"agent.v1.*",
	ipc.ApprovalRequestTopic, ipc.ElicitRequestTopic,
	"session.v1.response.*", ipc.RegistryResponsePattern, ipc.RegistryActiveModelChangedTopic,
}

// Allowlists returns the ingress (publish) and egress (subscribe) lists,
// for the test that holds them equal to the manifest.
func Allowlists() (publish, subscribe []string) {
	return append([]string(nil), ingress...), append([]string(nil), egress...)
}

// allowed reports whether subject (a topic, or a pattern taken as a topic,
// as the dispatcher's ACL does) is under one of list's patterns.
func allowed(list []string, subject string) bool {
	if ipc.ValidatePattern(subject) != nil {
		return false
	}
	for _, p := range list {
		if ipc.MatchRoute(p, subject) {
			return true
		}
	}
	return false
}
