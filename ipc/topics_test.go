package ipc

import "testing"

// TestWellKnownTopics pins every constructor to upstream's string (spec
// bus.md §1.2 and the agent stack's catalogue), and checks each is a valid
// topic.
func TestWellKnownTopics(t *testing.T) {
	cases := []struct{ got, want string }{
		{ElicitRequestTopic, "astrid.v1.elicit"},
		{ElicitResponseTopic("e1"), "astrid.v1.elicit.response.e1"},
		{ApprovalRequestTopic, "astrid.v1.approval"},
		{ApprovalResponseTopic("7c9e6679-7425-40de-944b-e07fc1f90ae7"), "astrid.v1.approval.response.7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{AuditEntryTopic, "astrid.v1.audit.entry"},
		{OnboardingTopic, "astrid.v1.onboarding.required"},
		{UserPromptTopic, "user.v1.prompt"},
		{AgentResponseTopic, "agent.v1.response"},
		{AgentStreamDeltaTopic, "agent.v1.stream.delta"},
		{AgentSessionChangedTopic, "agent.v1.session_changed"},
		{ClientConnectTopic, "client.v1.connect"},
		{ClientDisconnectTopic, "client.v1.disconnect"},
		{CLICommandExecuteTopic, "cli.v1.command.execute"},
		{CLICommandRunTopic("registry"), "cli.v1.command.run.registry"},
		{CLICommandResultTopic("c1"), "cli.v1.command.result.c1"},
		{KernelRequestTopic("list_capsules"), "astrid.v1.request.list_capsules"},
		{KernelResponseTopic("status.detail"), "astrid.v1.response.status.detail"},
		{ReloadCapsuleRequestTopic("fs"), "astrid.v1.request.reload_capsule.fs"},
		{ReloadCapsuleResponseTopic("fs"), "astrid.v1.response.reload_capsule.fs"},
		{AdminRequestTopic("agent_create"), "astrid.v1.admin.agent_create"},
		{AdminResponseTopic("agent_create"), "astrid.v1.admin.response.agent_create"},
		{SessionResponseTopic("get_messages", "c9"), "session.v1.response.get_messages.c9"},
		{CapsulesLoadedTopic, "astrid.v1.capsules_loaded"},
		{WatchdogTickTopic, "astrid.v1.watchdog.tick"},
		{EventBusLaggedTopic, "astrid.v1.event_bus.lagged"},
		{RestartTopic, "system.v1.lifecycle.restart"},
		{LLMRequestDescribeTopic, "llm.v1.request.describe"},
		{ResourceRequestDescribeTopic, "resource.v1.request.describe"},
		{ResourceDescribeResponseTopic("docs"), "resource.v1.response.describe.docs"},
		{ResourceReadTopic("docs"), "resource.v1.read.docs"},
		{ResourceReadResultTopic, "resource.v1.read.result"},
		{ResourceUpdatedTopic("docs"), "resource.v1.updated.docs"},
		{PromptRequestDescribeTopic, "prompt.v1.request.describe"},
		{PromptDescribeResponseTopic("docs"), "prompt.v1.response.describe.docs"},
		{PromptGetTopic("docs"), "prompt.v1.get.docs"},
		{PromptGetResultTopic, "prompt.v1.get.result"},
		{LLMResponseDescribeTopic, "llm.v1.response.describe"},
		{LLMGenerateTopic("openai"), "llm.v1.request.generate.openai"},
		{LLMStreamTopic("openai"), "llm.v1.stream.openai"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
		if err := ValidateTopic(c.got); err != nil {
			t.Errorf("%q: %v", c.got, err)
		}
	}
}

// TestResponseTopicsMatchTheirPatterns: a reply topic is reachable by the
// subscription a requester makes for it.
func TestResponseTopicsMatchTheirPatterns(t *testing.T) {
	cases := []struct{ pattern, topic string }{
		{"astrid.v1.approval.response.*", ApprovalResponseTopic("r1")},
		{"astrid.v1.elicit.response.*", ElicitResponseTopic("r1")},
		{"session.v1.response.get_messages.*", SessionResponseTopic("get_messages", "c1")},
		{"astrid.v1.request.*", ReloadCapsuleRequestTopic("fs")},
		{"llm.v1.stream.*", LLMStreamTopic("anthropic")},
	}
	for _, c := range cases {
		if !MatchRoute(c.pattern, c.topic) {
			t.Errorf("MatchRoute(%q, %q) = false", c.pattern, c.topic)
		}
	}
	if MatchInterceptor(ApprovalRequestTopic, ApprovalResponseTopic("r1")) {
		t.Error("an approval request interceptor would see responses")
	}
}
