package publisher

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/store"
)

// trustNamespace holds the trusted public keys, by name (a hyphen first,
// as keysNamespace).
const trustNamespace = "-trust"

// Trusted is one trust store entry.
type Trusted struct {
	Name string
	Key  ed25519.PublicKey
}

// Trust is the trust store of publisher keys.
type Trust struct{ st *store.Store }

// NewTrust returns the trust store kept in st.
func NewTrust(st *store.Store) *Trust { return &Trust{st: st} }

// Add trusts key under name; a name or a key already trusted is refused
// (remove it first), so one key never has two names.
func (t *Trust) Add(name string, key ed25519.PublicKey) error {
	if err := checkName(name); err != nil {
		return err
	}
	all, err := t.List()
	if err != nil {
		return err
	}
	for _, e := range all {
		if e.Name == name {
			return fmt.Errorf("trust: %s %w (key %s); remove it first", name, ErrExists, capsulepack.KeyID(e.Key))
		}
		if e.Key.Equal(key) {
			return fmt.Errorf("trust: key %s is already trusted as %s", capsulepack.KeyID(key), e.Name)
		}
	}
	if err := t.st.Config(trustNamespace).Set(name, []byte(capsulepack.FormatKey(key))); err != nil {
		return fmt.Errorf("trust: add %s: %w", name, err)
	}
	return nil
}

// Remove stops trusting name; later installs of archives it signed are
// treated as from an unknown publisher.
func (t *Trust) Remove(name string) error {
	kv := t.st.Config(trustNamespace)
	if _, ok, err := kv.Get(name); err != nil {
		return fmt.Errorf("trust: remove %s: %w", name, err)
	} else if !ok {
		return fmt.Errorf("trust: no trusted publisher named %s (astrid trust list shows them)", name)
	}
	if err := kv.Delete(name); err != nil {
		return fmt.Errorf("trust: remove %s: %w", name, err)
	}
	return nil
}

// List returns every trusted key, by name.
func (t *Trust) List() ([]Trusted, error) {
	kv := t.st.Config(trustNamespace)
	names, err := kv.List("")
	if err != nil {
		return nil, fmt.Errorf("trust: list: %w", err)
	}
	slices.Sort(names)
	out := make([]Trusted, 0, len(names))
	for _, n := range names {
		v, ok, err := kv.Get(n)
		if err != nil || !ok {
			return nil, fmt.Errorf("trust: read %s: %w", n, err)
		}
		key, err := capsulepack.ParseKey(string(v))
		if err != nil {
			return nil, fmt.Errorf("trust: %s: %w", n, err)
		}
		out = append(out, Trusted{Name: n, Key: key})
	}
	return out, nil
}

// Lookup names key if it is trusted ("" if not, or if the store cannot be
// read: an unreadable trust store trusts nobody).
func (t *Trust) Lookup(key ed25519.PublicKey) string {
	all, err := t.List()
	if err != nil {
		return ""
	}
	for _, e := range all {
		if e.Key.Equal(key) {
			return e.Name
		}
	}
	return ""
}
