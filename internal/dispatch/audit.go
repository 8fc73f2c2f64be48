package dispatch

import (
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/audit"
)

// maxPolicyAudited bounds the distinct (capsule, op, topic) refusals a
// dispatcher records in the audit chain; past it refusals are only counted
// and logged, so a capsule looping on a refused publish cannot flood the
// chain.
const maxPolicyAudited = 4096

// policyAudit records each distinct ACL refusal once in the audit chain,
// and work refused for the principal's CPU budget at most once a second
// per principal.
type policyAudit struct {
	log  *audit.Log
	mu   sync.Mutex
	seen map[[3]string]bool
	// quota is when each principal's last quota.refused was recorded.
	quota map[string]time.Time
}

// quotaRefused queues a quota.refused entry naming the CPU budget for
// principal's work capsule tried to start on topic, unless one was
// recorded for the principal within the last second.
func (p *policyAudit) quotaRefused(capsule, principal, topic string, err error, now time.Time) {
	if p == nil || p.log == nil || !audit.ValidPrincipal(principal) {
		return
	}
	p.mu.Lock()
	if last, ok := p.quota[principal]; ok && now.Sub(last) < time.Second && !now.Before(last) {
		p.mu.Unlock()
		return
	}
	if p.quota == nil || len(p.quota) >= maxPolicyAudited {
		p.quota = map[string]time.Time{}
	}
	p.quota[principal] = now
	p.mu.Unlock()
	if len(topic) > audit.MaxFieldBytes {
		topic = topic[:audit.MaxFieldBytes]
	}
	_ = p.log.Enqueue(audit.Entry{Principal: principal, Kind: audit.KindQuotaRefused, Capsule: capsule, Subject: "cpu_budget", Outcome: "refused",
		Detail: map[string]string{"topic": topic, "reason": clipReason(err.Error()), "at_most": "one a second"}})
}

func clipReason(s string) string {
	if len(s) > audit.MaxFieldBytes {
		return s[:audit.MaxFieldBytes]
	}
	return s
}

// refused queues a policy.refused entry for capsule's op on topic, as
// principal, the first time that refusal happens.
func (p *policyAudit) refused(capsule, principal, op, topic string, err error) {
	if p == nil || p.log == nil {
		return
	}
	k := [3]string{capsule, op, topic}
	p.mu.Lock()
	if p.seen[k] || len(p.seen) >= maxPolicyAudited {
		p.mu.Unlock()
		return
	}
	if p.seen == nil {
		p.seen = map[[3]string]bool{}
	}
	p.seen[k] = true
	p.mu.Unlock()
	if !audit.ValidPrincipal(principal) {
		principal = ""
	}
	reason := err.Error()
	if len(reason) > audit.MaxFieldBytes {
		reason = reason[:audit.MaxFieldBytes]
	}
	if len(topic) > audit.MaxFieldBytes {
		topic = topic[:audit.MaxFieldBytes]
	}
	_ = p.log.Enqueue(audit.Entry{Principal: principal, Kind: audit.KindPolicyRefused, Capsule: capsule, Subject: topic, Outcome: "denied",
		Detail: map[string]string{"op": op, "reason": reason, "first_only": "true"}})
}
