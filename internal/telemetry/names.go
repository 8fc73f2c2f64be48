package telemetry

// The span names (docs/observability.md).
const (
	SpanTurn            = "astrid.turn"
	SpanToolCall        = "astrid.tool.call"
	SpanProviderRequest = "astrid.provider.request"
	SpanApprovalWait    = "astrid.approval.wait"
	SpanCapsuleInvoke   = "astrid.capsule.invoke"
)

// The attribute keys spans carry.
const (
	AttrPrincipal = "astrid.principal"
	AttrSession   = "astrid.session_id"
	AttrTurn      = "astrid.turn_id"
	AttrOutcome   = "astrid.outcome"
	AttrTool      = "astrid.tool"
	AttrCallID    = "astrid.call_id"
	AttrProvider  = "astrid.provider"
	AttrRequestID = "astrid.request_id"
	AttrDecision  = "astrid.decision"
	AttrCapsule   = "astrid.capsule"
	AttrHandler   = "astrid.handler"
	AttrTopic     = "astrid.topic"
	AttrVerdict   = "astrid.verdict"
)

// instrumentation is the tracer's name, as OpenTelemetry records it.
const instrumentation = "github.com/astrid-go/astrid/internal/telemetry"
