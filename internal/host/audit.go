package host

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/audit"
)

// AuditRecord implements hostapi.Audit: a tool_middleware capsule (the
// router) records a tool call's start and end in the invoking principal's
// chain. The principal and the recording capsule are the kernel's, never
// the capsule's to choose; data named in Digest is recorded only as its
// sha256.
func (call *Call) AuditRecord(rec hostapi.AuditRecord) error {
	defer call.leave(call.enter(opAuditRecord))
	if rec.Kind == hostapi.AuditQuotaRefused {
		return call.auditQuota(rec)
	}
	if !call.c.toolMiddleware {
		return hostapi.Errorf(hostapi.CodeDenied, "audit_record", "capsule %s does not hold %s", call.c.id, hostapi.GrantToolMiddleware)
	}
	kind, ok := capsuleKinds[rec.Kind]
	if !ok {
		return hostapi.Errorf(hostapi.CodeInvalid, "audit_record", "kind %q is not one a capsule records (%s, %s, %s, %s)", rec.Kind,
			hostapi.AuditToolStarted, hostapi.AuditToolEnded, hostapi.AuditApprovalAsked, hostapi.AuditApprovalAnswered)
	}
	log := call.c.deps.Audit
	if log == nil {
		return nil
	}
	detail := make(map[string]string, len(rec.Detail)+len(rec.Digest)+1)
	for k, v := range rec.Detail {
		detail[k] = v
	}
	for k, v := range rec.Digest {
		sum := sha256.Sum256(v)
		detail[k+"_sha256"] = hex.EncodeToString(sum[:])
	}
	detail["recorded_by"] = call.c.id
	e := audit.Entry{Principal: call.principal, Kind: kind, Capsule: rec.Capsule, Subject: rec.Subject, Outcome: rec.Outcome, Detail: detail}
	// A start or a question is queued (the end or answer that follows it
	// writes it first); a tool's end, and a call a standing token allows,
	// are written before the call goes on; a person's answer is also
	// sealed and synced before it takes effect.
	var err error
	switch {
	case kind == audit.KindToolStarted || kind == audit.KindApprovalAsked:
		err = log.Enqueue(e)
	case kind == audit.KindApprovalAnswered && rec.Detail["token_id"] == "":
		err = log.AppendDurable(call.ctx, e)
	default:
		err = log.Append(call.ctx, e)
	}
	if err != nil {
		return hostapi.Errorf(hostapi.CodeIO, "audit_record", "%v", err)
	}
	return nil
}

// capsuleKinds are the kinds a capsule may record, by their hostapi names.
var capsuleKinds = map[string]audit.Kind{
	hostapi.AuditToolStarted:      audit.KindToolStarted,
	hostapi.AuditToolEnded:        audit.KindToolEnded,
	hostapi.AuditApprovalAsked:    audit.KindApprovalAsked,
	hostapi.AuditApprovalAnswered: audit.KindApprovalAnswered,
}

// auditRefusal records a process call refused for its grants or its
// confinement (CodeDenied) in the principal's chain, queued: the refusal
// itself is the effect, and it changes nothing on the host.
func (call *Call) auditRefusal(op, program string, err error) {
	log := call.c.deps.Audit
	if log == nil || hostapi.CodeOf(err) != hostapi.CodeDenied {
		return
	}
	e := audit.Entry{Principal: call.principal, Kind: audit.KindConfineRefused, Capsule: call.c.id, Subject: clipBytes(program, 256), Outcome: "denied",
		Detail: map[string]string{"op": op, "reason": clipBytes(err.Error(), 1000)}}
	if qerr := log.Enqueue(e); qerr != nil {
		call.c.log.Warn("audit: refusal not recorded", "err", qerr)
	}
}

// auditQuota records, for any capsule, that it refused the invoking
// principal's work because a limit of the principal's is spent: at most
// one entry a second per capsule (a capsule looping on a refusal cannot
// flood the chain), queued. Subject names the limit.
func (call *Call) auditQuota(rec hostapi.AuditRecord) error {
	log := call.c.deps.Audit
	if log == nil {
		return nil
	}
	if rec.Subject == "" {
		return hostapi.Errorf(hostapi.CodeInvalid, "audit_record", "a %s record names the limit in its subject", rec.Kind)
	}
	now := time.Now().Unix()
	if last := call.c.quotaAudited.Load(); last >= now || !call.c.quotaAudited.CompareAndSwap(last, now) {
		return nil
	}
	detail := make(map[string]string, len(rec.Detail)+1)
	for k, v := range rec.Detail {
		detail[k] = v
	}
	detail["recorded_by"] = call.c.id
	e := audit.Entry{Principal: call.principal, Kind: audit.KindQuotaRefused, Capsule: call.c.id, Subject: rec.Subject, Outcome: "refused", Detail: detail}
	if err := log.Enqueue(e); err != nil {
		return hostapi.Errorf(hostapi.CodeInvalid, "audit_record", "%v", err)
	}
	return nil
}
