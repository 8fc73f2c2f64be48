package publisher

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/internal/store"
)

// keysNamespace holds the sealed seeds, one per key name. A capsule id
// never starts with a hyphen (manifest.ValidateID), so no capsule's
// configuration includes it.
const keysNamespace = "-publisher"

// DefaultKey is the name of a key generated without one.
const DefaultKey = "default"

// Errors of this package.
var (
	ErrNoKey   = errors.New("no such publisher key")
	ErrExists  = errors.New("already exists")
	ErrCorrupt = errors.New("stored publisher key is not an ed25519 seed")
)

// Generate creates the publisher key name and seals its seed in st; it
// refuses to replace an existing key (signatures made with it would no
// longer match anyone's trust).
func Generate(st *store.Store, name string) (ed25519.PublicKey, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	sec := st.Secrets(keysNamespace)
	if _, ok, err := sec.Get(name); err != nil {
		return nil, fmt.Errorf("publisher key %s: %w", name, err)
	} else if ok {
		return nil, fmt.Errorf("publisher key %s %w (astrid key show %s prints it; give another --name for a second key)", name, ErrExists, name)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("publisher key %s: %w", name, err)
	}
	if err := sec.Set(name, priv.Seed()); err != nil {
		return nil, fmt.Errorf("publisher key %s: seal: %w", name, err)
	}
	return pub, nil
}

// Load returns the private publisher key name.
func Load(st *store.Store, name string) (ed25519.PrivateKey, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	seed, ok, err := st.Secrets(keysNamespace).Get(name)
	if err != nil {
		return nil, fmt.Errorf("publisher key %s: %w", name, err)
	}
	if !ok {
		return nil, fmt.Errorf("publisher key %s: %w (create it with astrid key generate --name %s)", name, ErrNoKey, name)
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("publisher key %s: %w", name, ErrCorrupt)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Keys names the publisher keys, sorted.
func Keys(st *store.Store) ([]string, error) {
	names, err := st.Secrets(keysNamespace).List()
	if err != nil {
		return nil, fmt.Errorf("publisher keys: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// checkName allows names people type: 1 to 64 of a-z, 0-9, '-', '_', '.'
// and '@', starting with a letter or digit.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q: give 1 to 64 characters", name)
	}
	for i, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_' || c == '.' || c == '@')
		if !ok {
			return fmt.Errorf("name %q: use lowercase letters, digits and - _ . @ (starting with a letter or digit)", name)
		}
	}
	return nil
}
