package gate

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrDenied is wrapped by every denial the gate returns, so callers can map
// any of them to their capability-denied error code with errors.Is.
var ErrDenied = errors.New("capability denied")

// DeniedError says which capability refused which request and why. Its text
// reads like `fs_read denied: /etc/passwd is outside *, home://`.
type DeniedError struct {
	Capability string // the manifest key that was consulted, e.g. "fs_read"
	Request    string // the request as the capsule sent it
	Reason     string // a phrase that follows the request, e.g. "is outside *"
}

func (e *DeniedError) Error() string {
	return e.Capability + " denied: " + display(e.Request) + " " + e.Reason
}

// Unwrap makes errors.Is(err, ErrDenied) hold for every denial.
func (e *DeniedError) Unwrap() error { return ErrDenied }

func deny(capability, request, reason string) error {
	return &DeniedError{Capability: capability, Request: request, Reason: reason}
}

// maxShown bounds how much of a hostile request lands in a log line.
const maxShown = 200

// display prints a request bare when that is unambiguous, quoted when it holds
// spaces, control characters or invalid UTF-8 (so `npx ` and `npx` read
// differently in a log), and truncated when long.
func display(s string) string {
	truncated := false
	if len(s) > maxShown {
		s, truncated = s[:maxShown], true
	}
	plain := s != "" && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsGraphic(r)
	})
	if !plain {
		s = strconv.Quote(s)
	}
	if truncated {
		s += "…"
	}
	return s
}

// list renders grants as written, for denial messages.
func list(grants []string) string {
	if len(grants) == 0 {
		return "(nothing declared)"
	}
	shown := make([]string, len(grants))
	for i, g := range grants {
		shown[i] = display(g)
	}
	return strings.Join(shown, ", ")
}
