package hostapi

import "time"

// Capabilities keeps the invoking principal's capability tokens (DESIGN
// §13): standing approvals signed by the host, which the host checks on
// every call, so a token revoked by the operator counts at once. Only a
// capsule holding tool_middleware (the approval layer) may use it; any
// other gets CodeDenied.
type Capabilities interface {
	// MintCapability keeps a new token for the invoking principal and
	// returns its id: g.Session makes it "this session" (gone when the
	// kernel stops), else "always"; g.Pattern, when set, limits it to
	// calls whose resource matches ('*' matches any run of characters).
	MintCapability(g CapabilityGrant) (id string, err error)
	// CheckCapability returns the id of a standing token of the invoking
	// principal covering capsule's tool called with resource, or "" when
	// none does. A token that is tampered with, expired, revoked or kept
	// out of place is ignored (and reported by the host).
	CheckCapability(capsule, tool, resource string) (id string, err error)
}

// CapabilityGrant is what MintCapability keeps a token for.
type CapabilityGrant struct {
	Capsule, Tool, Pattern string
	Session                bool
	// TTL is how long it stands; zero: no expiry (a session token still
	// ends with the kernel).
	TTL time.Duration
	// RequestID, when a person's answer asked for the token, is that
	// approval question's id: the audit chain records it with the token's
	// issue, linking the token to the answer (approval.answered names the
	// same id). At most 128 bytes; not kept in the token.
	RequestID string `json:",omitempty"`
}
