package metrics

// namespace prefixes every metric of the kernel's.
const namespace = "astrid"

// Label names.
const (
	labelReason    = "reason"
	labelVerdict   = "verdict"
	labelOwner     = "owner"
	labelCapsule   = "capsule"
	labelHandler   = "handler"
	labelTool      = "tool"
	labelProvider  = "provider"
	labelKind      = "kind"
	labelPrincipal = "principal"
	labelOutcome   = "outcome"
)
