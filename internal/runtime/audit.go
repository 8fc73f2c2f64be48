package runtime

import (
	"github.com/astrid-go/astrid/internal/audit"
)

// audited records a load, reload or refusal of capsule c in the system
// audit chain (queued: the log's Close writes what is left). err is why it
// was refused, nil when it loaded.
func (r *Runtime) audited(kind audit.Kind, c *Candidate, err error) {
	log := r.opts.Host.Audit
	if log == nil {
		return
	}
	d := map[string]string{}
	if c.Manifest != nil && c.Manifest.Package.Version != "" {
		d["version"] = c.Manifest.Package.Version
	}
	if c.Builtin() {
		d["builtin"] = "true"
	} else if c.Dir != "" {
		d["dir"] = clip(c.Dir)
	}
	outcome := "ok"
	if err != nil {
		if kind == audit.KindCapsuleReloaded {
			d["action"] = "reload"
		}
		kind, outcome = audit.KindCapsuleRefused, "refused"
		d["error"] = clip(err.Error())
	}
	if qerr := log.Enqueue(audit.Entry{Kind: kind, Capsule: c.ID(), Outcome: outcome, Detail: d}); qerr != nil {
		r.log.Warn("audit: capsule event not recorded", "capsule", c.ID(), "err", qerr)
	}
}

func clip(s string) string {
	if len(s) > audit.MaxFieldBytes {
		return s[:audit.MaxFieldBytes]
	}
	return s
}
