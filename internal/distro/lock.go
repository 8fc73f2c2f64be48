package distro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/astrid-go/astrid/manifest"
)

// Lock is Distro.lock: what `distro apply` installs, exactly.
type Lock struct {
	Distro   Header   `toml:"distro"`
	Capsules []Locked `toml:"capsule"`
}

// Locked is one capsule pinned.
type Locked struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	// Source is the pinned source: a registry reference with the
	// manifest's digest, a URL or a file.
	Source string `toml:"source"`
	// Digest is "sha256:<hex>" of the archive; apply refuses other bytes.
	Digest string `toml:"digest"`
	// Signer is the publisher key ("ed25519:…") that signed it; "" when
	// it was unsigned. Apply refuses another signer.
	Signer string `toml:"signer"`
}

// Marshal writes the lock with a header comment.
func (l *Lock) Marshal() ([]byte, error) {
	b, err := toml.Marshal(l)
	if err != nil {
		return nil, err
	}
	head := "# Distro.lock: written by `astrid distro lock`; `astrid distro apply` installs exactly this.\n"
	return append([]byte(head), b...), nil
}

// ParseLock reads Distro.lock.
func ParseLock(file string, data []byte) (*Lock, error) {
	var l Lock
	if err := decode(file, data, &l); err != nil {
		return nil, err
	}
	var errs []error
	seen := map[string]bool{}
	for i, c := range l.Capsules {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: capsule[%d] %s: %s", file, lineOf(data, c.Name), i, c.Name, fmt.Sprintf(format, a...)))
		}
		if err := manifest.ValidateID(c.Name); err != nil {
			bad("%v", err)
		}
		if seen[c.Name] {
			bad("listed twice")
		}
		seen[c.Name] = true
		if !validDigest(c.Digest) {
			bad("digest %q is not sha256:<64 hex digits>", c.Digest)
		}
		if c.Source == "" {
			bad("no source")
		}
		if c.Signer != "" && !strings.HasPrefix(c.Signer, "ed25519:") {
			bad("signer %q is not an ed25519 key", c.Signer)
		}
	}
	if len(l.Capsules) == 0 {
		errs = append(errs, fmt.Errorf("%s: locks no capsule", file))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &l, nil
}

// validDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func validDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
