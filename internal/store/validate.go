package store

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
)

// Size limits. Keys and values come from capsules (KV) or the operator
// (config, secrets); the limits keep one caller from bloating the file and
// keep values comfortably inside one bus message.
const (
	MaxKeyBytes         = 1 << 10
	MaxValueBytes       = 1 << 20
	MaxSecretValueBytes = 64 << 10
)

// validatePrincipal applies ipc's rule, so the store accepts exactly the
// principals the bus does.
func validatePrincipal(p string) error {
	if err := ipc.ValidatePrincipal(p); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	return nil
}

func validateCapsule(id string) error {
	if id == "" {
		return fmt.Errorf("capsule id must not be empty: %w", ErrInvalid)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(isLower(c) || isDigit(c) || c == '-') {
			return fmt.Errorf("capsule id %q may contain only lowercase letters, digits and '-': %w", short(id), ErrInvalid)
		}
	}
	return nil
}

func validateKey(key string) error {
	if key == "" {
		return fmt.Errorf("key must not be empty: %w", ErrInvalid)
	}
	return validatePrefix(key)
}

// validatePrefix is validateKey without the non-empty rule: an empty prefix
// means every key.
func validatePrefix(key string) error {
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("key %q is %d bytes, over the %d-byte limit: %w", short(key), len(key), MaxKeyBytes, ErrInvalid)
	}
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("key %q contains NUL: %w", short(key), ErrInvalid)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("key %q is not valid UTF-8: %w", short(key), ErrInvalid)
	}
	return nil
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// short keeps error messages readable when a caller passes a 1 KiB key.
func short(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
