package uplink

import (
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// ingress is what a client may publish: prompts, cancels, approval and
// elicitation answers, an editor's buffers (astrid acp), tool calls and the tool list, session and registry
// commands, the capsules' slash commands, and (for astrid mcp serve) their
// resources, prompts, completions, skills and context files. It equals the manifest's [publish] (a test holds them equal),
// which the kernel enforces again on every publish.
var ingress = []string{
	ipc.UserPromptTopic,
	ipc.ToolRequestExecuteTopic, ipc.ToolRequestCancelTopic, ipc.ToolRequestDescribeTopic,
	ipc.ApprovalResponseTopic("*"), ipc.ElicitResponseTopic("*"),
	ipc.EditorBufferReplyPattern,
	"session.v1.request.*",
	ipc.RegistryGetProvidersTopic, ipc.RegistryGetActiveModelTopic,
	ipc.RegistrySetActiveModelTopic, ipc.RegistryUnsetActiveModelTopic,
	"static.v1.request.commands",
	ipc.ResourceRequestDescribeTopic, ipc.ResourceReadTopic("*"),
	ipc.PromptRequestDescribeTopic, ipc.PromptGetTopic("*"), ipc.CompletionTopic("*"),
	"static.v1.request.skills", "static.v1.request.context",
}

// egress is what a client may subscribe to (always only its own
// principal's events): the manifest's [subscribe].
var egress = []string{
	ipc.ToolExecuteResultTopic, "tool.v1.response.describe.*",
	"agent.v1.*",
	ipc.ApprovalRequestTopic, ipc.ElicitRequestTopic, ipc.OnboardingTopic,
	ipc.EditorBufferPattern,
	"session.v1.response.*", ipc.RegistryResponsePattern, ipc.RegistryActiveModelChangedTopic,
	"static.v1.response.commands.*",
	ipc.ResourceDescribeResponseTopic("*"), ipc.ResourceReadResultTopic, ipc.ResourceUpdatedTopic("*"),
	ipc.PromptDescribeResponseTopic("*"), ipc.PromptGetResultTopic, ipc.CompletionResultTopic,
	"static.v1.response.skills.*", "static.v1.response.context.*", ipc.CapsulesLoadedTopic,
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

// CheckIngress reports an entry of byPrincipal (Settings.Ingress) that is
// not inside the uplink's allowlist: a principal's list may narrow what its
// clients publish, never widen it.
func CheckIngress(byPrincipal map[string][]string) error {
	for p, list := range byPrincipal {
		if len(list) == 0 {
			return fmt.Errorf("uplink: principal %s has an empty ingress list (leave it out for the whole allowlist)", p)
		}
		for _, pattern := range list {
			if !allowed(ingress, pattern) {
				return fmt.Errorf("uplink: %s=%s is outside what any client may publish (%v)", p, pattern, ingress)
			}
		}
	}
	return nil
}

// ingressOf is what principal's clients may publish: its list in
// Settings.Ingress, or the whole allowlist.
func (s Settings) ingressOf(principal string) []string {
	if list, ok := s.Ingress[principal]; ok {
		return list
	}
	return ingress
}

// mayPublish reports whether the client may publish on topic: inside its
// principal's list and, whatever that list says, inside the uplink's own.
func (c *client) mayPublish(topic string) bool {
	return allowed(c.ingress, topic) && allowed(ingress, topic)
}
