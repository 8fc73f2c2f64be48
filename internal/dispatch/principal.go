package dispatch

import "fmt"

// MaxPrincipalBytes is the longest principal id (upstream's rule).
const MaxPrincipalBytes = 64

// ValidatePrincipal accepts a principal id of 1 to 64 ASCII letters, digits,
// '-' or '_', or the empty string, which marks a system event.
func ValidatePrincipal(p string) error {
	if len(p) > MaxPrincipalBytes {
		return fmt.Errorf("%w: %.20q… is %d bytes, the limit is %d", ErrInvalidPrincipal, p, len(p), MaxPrincipalBytes)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("%w: %q has %q; principals use ASCII letters, digits, '-' and '_'", ErrInvalidPrincipal, p, c)
		}
	}
	return nil
}
