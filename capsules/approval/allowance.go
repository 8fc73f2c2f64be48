package approval

import (
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Allowances are capability tokens (DESIGN §13) the kernel signs with the
// host key and keeps for the principal: one per (providing capsule, tool),
// which is what the person was shown (the reason names both), so a tool of
// the same name that another capsule provides later is asked about again.
// The kernel checks each token on every call (signature, expiry,
// revocation), so `astrid caps revoke` counts at once; this capsule keeps
// none of them itself.

// allowed reports whether the principal holds a standing token for
// capsule's tool called with args (an "always" or "this session" answer,
// or an operator's grant). A call a token lets through is recorded as an
// approval answered by that token, its id named, before it runs; a chain
// that cannot take it lets nothing through.
func allowed(c *sdk.Call, capsule, tool, callID string, args []byte) (bool, error) {
	id, err := c.CheckCapability(capsule, tool, string(args))
	if err != nil || id == "" {
		return false, err
	}
	if err := c.AuditRecord(hostapi.AuditRecord{
		Kind: hostapi.AuditApprovalAnswered, Capsule: capsule, Subject: tool, Outcome: "allowed",
		Detail: map[string]string{"token_id": id, "call_id": clip(callID, 128), "answered_by": "token"},
		Digest: map[string][]byte{"args": args},
	}); err != nil {
		return false, unrecordedError{fmt.Errorf("the audit chain did not record that token %s allows it: %w", id, err)}
	}
	return true, nil
}

// unrecordedError is a token's allowance the audit chain did not take: the
// call is refused, saying so.
type unrecordedError struct{ error }

// allow asks the kernel for decision's token, if it keeps one: "this
// session" ends with the kernel (or when the capsule is unloaded for
// good), "always" stands until revoked.
func allow(c *sdk.Call, decision, requestID, capsule, tool string) error {
	var session bool
	switch decision {
	case ipc.DecisionApproveSession:
		session = true
	case ipc.DecisionApproveAlways:
	default:
		return nil
	}
	_, err := c.MintCapability(hostapi.CapabilityGrant{Capsule: capsule, Tool: tool, Session: session, RequestID: requestID})
	return err
}
