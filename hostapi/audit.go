package hostapi

// Audit records what a capsule holding tool_middleware alone knows in the
// host's signed audit chain (DESIGN §13, docs/audit.md): the start and end
// of each tool call (the router), the approval layer's questions and their
// answers (the approval capsule). Everything else the chain holds is
// recorded by the kernel itself.
type Audit interface {
	// AuditRecord appends rec to the invoking principal's chain, naming
	// this capsule as the recorder. A start (AuditToolStarted,
	// AuditApprovalAsked) is queued and the call returns at once; an end
	// (AuditToolEnded, AuditApprovalAnswered) returns once
	// it, and every entry queued before it for that principal, is written
	// to the chain file (a person's answer also signed and synced), so a
	// result published after it is never acknowledged without its entry.
	// A capsule without tool_middleware is CodeDenied (but for
	// AuditQuotaRefused); another kind
	// or an oversized field is CodeInvalid; a host without an audit chain
	// records nothing and returns nil.
	AuditRecord(rec AuditRecord) error
}

// The kinds a capsule may record.
const (
	AuditToolStarted = "tool.started"
	AuditToolEnded   = "tool.ended"
	// A question to the person about a tool call, and its answer.
	AuditApprovalAsked    = "approval.asked"
	AuditApprovalAnswered = "approval.answered"
	// AuditQuotaRefused is work refused because the principal's limit
	// (Subject names it, e.g. tokens_per_day) is spent. Any capsule may
	// record it, for the invoking principal only and at most once a
	// second; it is queued.
	AuditQuotaRefused = "quota.refused"
)

// AuditRecord is one tool call event as the recording capsule sees it.
type AuditRecord struct {
	Kind string `json:"kind"`
	// Capsule is the capsule the call went to (the tool's provider).
	Capsule string `json:"capsule,omitempty"`
	// Subject is the tool's name.
	Subject string `json:"subject,omitempty"`
	// Outcome is "ok" or "error" for an end.
	Outcome string `json:"outcome,omitempty"`
	// Detail is recorded as given (the call id).
	Detail map[string]string `json:"detail,omitempty"`
	// Digest holds data the chain records only as its sha256, in Detail
	// under "<key>_sha256" (the arguments, the result): the chain proves
	// what was passed without keeping a user's data.
	Digest map[string][]byte `json:"digest,omitempty"`
}
