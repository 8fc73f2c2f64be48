package hostkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/internal/store"
)

// namespace is the store secrets namespace holding the key. A capsule id
// may not start with a hyphen (manifest.ValidateID), so no capsule's
// configuration ever includes it.
const namespace = "-host"

// keyName names the sealed seed inside namespace.
const keyName = "ED25519_SEED"

// ErrCorrupt reports a stored seed of the wrong size.
var ErrCorrupt = errors.New("hostkey: stored signing key is not an ed25519 seed")

// Load returns the host's signing key, creating and sealing it on first
// use. Two processes creating it at the same moment both re-read what was
// stored last, so at most one of them signs with a key that is then lost;
// `astrid init` creates it before any daemon runs, which makes that rare.
func Load(st *store.Store) (ed25519.PrivateKey, error) {
	sec := st.Secrets(namespace)
	seed, ok, err := sec.Get(keyName)
	if err != nil {
		return nil, fmt.Errorf("hostkey: load: %w", err)
	}
	if !ok {
		seed = make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("hostkey: create: %w", err)
		}
		if err := sec.Set(keyName, seed); err != nil {
			return nil, fmt.Errorf("hostkey: create: %w", err)
		}
		if seed, _, err = sec.Get(keyName); err != nil {
			return nil, fmt.Errorf("hostkey: load after create: %w", err)
		}
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w (%d bytes, want %d)", ErrCorrupt, len(seed), ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// ErrNone reports a store with no host key yet.
var ErrNone = errors.New("hostkey: this home has no signing key yet")

// Public returns the host's public key without ever creating one: a
// verifier must not mint the key it then checks against.
func Public(st *store.Store) (ed25519.PublicKey, error) {
	seed, ok, err := st.Secrets(namespace).Get(keyName)
	if err != nil {
		return nil, fmt.Errorf("hostkey: load: %w", err)
	}
	if !ok {
		return nil, ErrNone
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w (%d bytes, want %d)", ErrCorrupt, len(seed), ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), nil
}
