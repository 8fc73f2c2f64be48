package host

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/host/ask"
)

// RequestApproval implements hostapi.Approval: the question and the
// allowances are internal/host/ask's.
func (call *Call) RequestApproval(action, resource string) (bool, error) {
	defer call.leave(call.enter(opRequestApproval))
	const op = "approval"
	if err := call.live(op); err != nil {
		return false, err
	}
	a := call.c.deps.Approvals
	if a == nil || call.c.deps.Bus == nil {
		return false, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel has no frontend to ask")
	}
	call.auditApproval(audit.KindApprovalAsked, action, resource, "", nil)
	ok, err := a.Request(call.asker(), call.c.deps.Store, action, resource)
	outcome := "denied"
	switch {
	case err != nil:
		outcome = "error"
	case ok:
		outcome = "allowed"
	}
	// The answer is on disk before it takes effect; a chain that cannot
	// take it refuses the action.
	if aerr := call.auditApproval(audit.KindApprovalAnswered, action, resource, outcome, err); aerr != nil && ok {
		return false, hostapi.Errorf(hostapi.CodeIO, op, "the audit chain did not record the approval: %v", aerr)
	}
	return ok, err
}

// auditApproval records a question of the approval call (queued) or its
// answer (on disk when it returns): the resource, an exact command line,
// as its sha256 and its first 256 bytes.
func (call *Call) auditApproval(kind audit.Kind, action, resource, outcome string, cause error) error {
	log := call.c.deps.Audit
	if log == nil {
		return nil
	}
	sum := sha256.Sum256([]byte(resource))
	d := map[string]string{"resource_sha256": hex.EncodeToString(sum[:]), "resource": clipBytes(resource, 256)}
	if cause != nil {
		d["error"] = clipBytes(cause.Error(), 512)
	}
	e := audit.Entry{Principal: call.principal, Kind: kind, Capsule: call.c.id, Subject: clipBytes(action, 256), Outcome: outcome, Detail: d}
	if kind == audit.KindApprovalAsked {
		return log.Enqueue(e)
	}
	return log.AppendDurable(call.ctx, e)
}

// clipBytes cuts s to at most n bytes (the audit chain makes what it cuts
// mid-rune valid again).
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Elicit implements hostapi.Elicit: the question is internal/host/ask's.
func (call *Call) Elicit(q hostapi.ElicitRequest) (hostapi.ElicitAnswer, error) {
	defer call.leave(call.enter(opElicit))
	const op = "elicit"
	if err := call.live(op); err != nil {
		return hostapi.ElicitAnswer{}, err
	}
	e := call.c.deps.Elicits
	if e == nil || call.c.deps.Bus == nil {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel has no frontend to ask")
	}
	return e.Ask(call.asker(), q)
}

// asker is the call as a question to a person is asked for it: its
// capsule and principal, its trace, the tool call it serves (its cancel
// key), its context and how that ended.
func (call *Call) asker() ask.Asker {
	return ask.Asker{
		Bus: call.c.deps.Bus, Dispatcher: call.c.deps.Dispatcher,
		Capsule: call.c.id, Principal: call.principal, Trace: call.caller.Trace, CallID: call.cancelKeyNow(),
		Ctx: call.ctx, Ended: call.live, Uplink: call.c.isUplink, Log: call.c.log,
	}
}
