package ipc

// Well-known topics (upstream's Topic constructors and the fixed topics of
// the agent stack). A function's argument becomes one or more topic
// segments unchanged; it must itself be valid topic text, which dispatch
// checks at publish (ValidateTopic).

// Interactive input: approvals, grants and elicitation between the host and
// a frontend.
const (
	ApprovalRequestTopic   = "astrid.v1.approval"
	ElicitRequestTopic     = "astrid.v1.elicit"
	OnboardingTopic        = "astrid.v1.onboarding.required"
	AuditEntryTopic        = "astrid.v1.audit.entry"
	approvalResponsePrefix = "astrid.v1.approval.response."
	elicitResponsePrefix   = "astrid.v1.elicit.response."
)

// ApprovalResponseTopic is where the answer to approval (or grant) request
// id is published: astrid.v1.approval.response.<id>.
func ApprovalResponseTopic(id string) string { return approvalResponsePrefix + id }

// ElicitResponseTopic is where the answer to elicit request id is
// published: astrid.v1.elicit.response.<id>.
func ElicitResponseTopic(id string) string { return elicitResponsePrefix + id }

// The conversation between frontends and the orchestrator.
const (
	UserPromptTopic          = "user.v1.prompt"
	AgentResponseTopic       = "agent.v1.response"
	AgentStreamDeltaTopic    = "agent.v1.stream.delta"
	AgentSessionChangedTopic = "agent.v1.session_changed"
	ClientConnectTopic       = "client.v1.connect"
	ClientDisconnectTopic    = "client.v1.disconnect"
)

// Slash commands.
const CLICommandExecuteTopic = "cli.v1.command.execute"

// CLICommandRunTopic is where a command provider p is invoked:
// cli.v1.command.run.<p>.
func CLICommandRunTopic(p string) string { return "cli.v1.command.run." + p }

// CLICommandResultTopic is where command id's result is published:
// cli.v1.command.result.<id>.
func CLICommandResultTopic(id string) string { return "cli.v1.command.result." + id }

// KernelRequestTopic is a request to the kernel: astrid.v1.request.<s>
// (s may hold several segments).
func KernelRequestTopic(s string) string { return "astrid.v1.request." + s }

// KernelResponseTopic is the kernel's answer: astrid.v1.response.<s>.
func KernelResponseTopic(s string) string { return "astrid.v1.response." + s }

// ReloadCapsuleRequestTopic asks the kernel to reload capsule c:
// astrid.v1.request.reload_capsule.<c>.
func ReloadCapsuleRequestTopic(c string) string { return KernelRequestTopic("reload_capsule." + c) }

// ReloadCapsuleResponseTopic answers ReloadCapsuleRequestTopic(c):
// astrid.v1.response.reload_capsule.<c>.
func ReloadCapsuleResponseTopic(c string) string { return KernelResponseTopic("reload_capsule." + c) }

// AdminRequestTopic is an administrative request: astrid.v1.admin.<s>.
func AdminRequestTopic(s string) string { return "astrid.v1.admin." + s }

// AdminResponseTopic answers it: astrid.v1.admin.response.<s>.
func AdminResponseTopic(s string) string { return "astrid.v1.admin.response." + s }

// SessionResponseTopic is the session store's answer to operation op with
// correlation id c: session.v1.response.<op>.<c>.
func SessionResponseTopic(op, c string) string { return "session.v1.response." + op + "." + c }

// Kernel signals.
const (
	// CapsulesLoadedTopic is published after capsules are (re)loaded;
	// caches of tool schemas are invalidated on it.
	CapsulesLoadedTopic = "astrid.v1.capsules_loaded"
	// WatchdogTickTopic is the kernel's periodic tick.
	WatchdogTickTopic = "astrid.v1.watchdog.tick"
	// EventBusLaggedTopic tells a capsule that it missed events.
	EventBusLaggedTopic = "astrid.v1.event_bus.lagged"
	// RestartTopic asks capsules to restart their state.
	RestartTopic = "system.v1.lifecycle.restart"
)

// LLM providers.
const (
	// LLMRequestDescribeTopic asks every provider to describe itself: one
	// entry per model it serves. {"refresh":true} (the registry, when a
	// person asked for the list) lets a provider first ask its server,
	// briefly; {} must be answered from what it knows.
	LLMRequestDescribeTopic = "llm.v1.request.describe"
	// LLMResponseDescribeTopic carries the providers' answers.
	LLMResponseDescribeTopic = "llm.v1.response.describe"
)

// LLMGenerateTopic is where provider p is asked for a generation (an
// LLMRequest): llm.v1.request.generate.<p>.
func LLMGenerateTopic(p string) string { return "llm.v1.request.generate." + p }

// LLMStreamTopic is where provider p streams its answer (LLMStreamEvent):
// llm.v1.stream.<p>.
func LLMStreamTopic(p string) string { return "llm.v1.stream." + p }
