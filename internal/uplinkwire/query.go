package uplinkwire

import "time"

// The queries a client may ask (OpQuery's Query): the daemon answers each
// with an OK whose Payload is the view the connection's principal may see
// (docs/uplink.md, "Queries").
const (
	// QueryCapsules is the capsule list `astrid capsule list` prints: a
	// JSON array of the runtime's capsule statuses, in load order.
	QueryCapsules = "capsules"
	// QueryStatus is the live status `astrid status` prints: the
	// status.json object, plus the socket's clients and bytes.
	QueryStatus = "status"
	// QueryApprovals is the connection's principal's standing allowances
	// `astrid approvals list` prints: a JSON array of Allowance.
	QueryApprovals = "approvals"
	// QueryRevokeApprovals withdraws some of the connection's principal's
	// standing allowances (Args: RevokeArgs) and answers a RevokeAnswer.
	QueryRevokeApprovals = "revoke_approvals"
)

// Queries lists every query this version answers.
var Queries = []string{QueryCapsules, QueryStatus, QueryApprovals, QueryRevokeApprovals}

// Allowance is one standing allowance: a question the person answered
// "this session" or "always", which is not asked again while it stands.
type Allowance struct {
	// ID names it for a revoke: short, and the same for as long as the
	// allowance stands.
	ID string `json:"id"`
	// Kind is "session" (until the kernel process stops) or "always".
	Kind string `json:"kind"`
	// Capsule is the capsule it was given to: the one that provides Tool,
	// or the one that asked about Action.
	Capsule string `json:"capsule"`
	// Tool is set for a tool's allowance (the approval layer's, for every
	// call of that tool).
	Tool string `json:"tool,omitempty"`
	// Action and Resource are set for an allowance of the host approval
	// call (a shell command): exactly what was approved, as the question
	// showed it.
	Action   string `json:"action,omitempty"`
	Resource string `json:"resource,omitempty"`
	// Unnamed is an "always" recorded before what was approved was kept:
	// only its capsule is known.
	Unnamed bool `json:"unnamed,omitempty"`
	// Since is when it was given; absent when not recorded.
	Since *time.Time `json:"since,omitempty"`
	// Token is the full id of the capability token an allowance of a
	// tool is (DESIGN §13); Expiry when it ends (absent: never) and
	// Pattern the arguments it is limited to (absent: any).
	Token   string     `json:"token,omitempty"`
	Expiry  *time.Time `json:"expiry,omitempty"`
	Pattern string     `json:"pattern,omitempty"`
	// Ignored says why a token kept for the principal does not stand
	// (tampered, expired, revoked, moved): it allows nothing.
	Ignored string `json:"ignored,omitempty"`
}

// The kinds of Allowance.
const (
	AllowanceSession = "session"
	AllowanceAlways  = "always"
	// AllowanceGrant is a token an operator granted in advance (astrid
	// caps grant).
	AllowanceGrant = "grant"
)

// RevokeArgs are QueryRevokeApprovals's arguments: the IDs to withdraw, or
// All of them.
type RevokeArgs struct {
	IDs []string `json:"ids,omitempty"`
	All bool     `json:"all,omitempty"`
}

// RevokeAnswer is QueryRevokeApprovals's answer: the allowances withdrawn,
// and the ids asked for that named none of the principal's.
type RevokeAnswer struct {
	Revoked []Allowance `json:"revoked"`
	Unknown []string    `json:"unknown,omitempty"`
}
