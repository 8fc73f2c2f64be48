package kernel

import (
	"fmt"
	"log/slog"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/store"
)

// openAudit opens the audit chain of home, signed with the host key
// (created on first use).
func openAudit(st *store.Store, home string) (*audit.Log, error) {
	key, err := hostkey.Load(st)
	if err != nil {
		return nil, fmt.Errorf("kernel: audit: %w", err)
	}
	l, err := audit.Open(audit.Options{Dir: config.Layout(home).Audit, Key: key})
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	return l, nil
}

// tokenAuditKinds are the token events the audit chain records; a token
// used is not (the approval it stands for is, by the approval layer).
var tokenAuditKinds = map[string]audit.Kind{
	caps.EventMinted:  audit.KindTokenIssued,
	caps.EventRevoked: audit.KindTokenRevoked,
	caps.EventIgnored: audit.KindTokenIgnored,
}

// recordTokenEvents makes book append its token events to the chain of the
// principal they concern. Nil l (auditing off) records nothing.
func recordTokenEvents(book *caps.Book, l *audit.Log, log *slog.Logger) {
	if l == nil {
		return
	}
	book.SetRecorder(func(ev caps.Event) {
		kind, ok := tokenAuditKinds[ev.What]
		if !ok {
			return
		}
		principal := ev.Token.Principal
		if principal == "" {
			principal = ev.Principal
		}
		e := audit.Entry{Principal: principal, Kind: kind, Capsule: ev.Token.Capsule, Subject: ev.Token.ID,
			Detail: map[string]string{"tool": ev.Token.Tool}}
		if ev.Reason != "" {
			e.Detail["reason"] = ev.Reason
		}
		if ev.Answer != "" {
			e.Detail["request_id"] = ev.Answer
		}
		if err := l.Enqueue(e); err != nil {
			log.Warn("audit: a token event was not recorded", "event", ev.What, "token", ev.Token.ID, "err", err)
		}
	})
}
