package caps

// What happened to a token.
const (
	EventMinted  = "minted"
	EventUsed    = "used"
	EventIgnored = "ignored"
	EventRevoked = "revoked"
)

// Event is one thing that happened to a token.
type Event struct {
	What  string
	Token Token
	// Key is where it was kept; Principal whose store it was read from
	// (the token's own may differ, when it was copied); Reason why it
	// was ignored.
	Key, Principal, Reason string
	// Answer is the approval question a minted token answers, if any.
	Answer string
}

// reportTokenEvent is the one place a token event is reported: logged, and
// given to the recorder (the audit chain) when one is set.
func (b *Book) reportTokenEvent(ev Event) {
	if b.record != nil {
		b.record(ev)
	}
	principal := ev.Principal
	if principal == "" {
		principal = ev.Token.Principal
	}
	attrs := []any{"event", ev.What, "principal", principal, "token", ev.Token.ID, "kind", ev.Token.Kind,
		"capsule", ev.Token.Capsule, "tool", ev.Token.Tool}
	switch ev.What {
	case EventIgnored:
		b.log.Warn("caps: token ignored: "+ev.Reason, append(attrs, "key", ev.Key)...)
	case EventUsed:
		b.log.Debug("caps: token used", attrs...)
	default:
		b.log.Info("caps: token "+ev.What, attrs...)
	}
}
