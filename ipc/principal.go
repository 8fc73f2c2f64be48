package ipc

import (
	"errors"
	"fmt"
)

// DefaultPrincipal is the local user, and the principal a system event is
// handled as.
const DefaultPrincipal = "default"

// MaxPrincipalBytes is the longest principal id.
const MaxPrincipalBytes = 64

// ErrInvalidPrincipal is wrapped by every principal validation error.
var ErrInvalidPrincipal = errors.New("invalid principal")

// ValidatePrincipal checks a principal id: 1 to 64 ASCII letters, digits,
// '-' and '_' (upstream's rule).
func ValidatePrincipal(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrInvalidPrincipal)
	}
	if len(p) > MaxPrincipalBytes {
		return fmt.Errorf("%w: %.40q… is %d bytes, the limit is %d", ErrInvalidPrincipal, p, len(p), MaxPrincipalBytes)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: %q has %q; principals use ASCII letters, digits, '-' and '_'", ErrInvalidPrincipal, p, c)
		}
	}
	return nil
}
