package store

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
)

// sealFormat is the first byte of every sealed value (doc.go).
const sealFormat = 1

const aadContext = "astrid/store/secret/v1"

// Secrets is the operator-set secret env values of one capsule, sealed at
// rest. Like Config it is per capsule, not per principal.
type Secrets struct {
	ns      namespace
	capsule string
}

// Secrets is capsule's secret namespace.
func (s *Store) Secrets(capsule string) *Secrets {
	return &Secrets{
		ns:      newNamespace(s, "secrets "+short(capsule), validateCapsule(capsule), string(bucketSecrets), capsule),
		capsule: capsule,
	}
}

// Set seals value under key. Secrets are never empty (Delete removes one)
// and at most MaxSecretValueBytes.
func (sec *Secrets) Set(key string, value []byte) error {
	if err := sec.check(key); err != nil {
		return sec.ns.wrap("set", key, err)
	}
	switch {
	case len(value) == 0:
		return sec.ns.wrap("set", key, fmt.Errorf("secret value must not be empty (delete the key instead): %w", ErrInvalid))
	case len(value) > MaxSecretValueBytes:
		return sec.ns.wrap("set", key, fmt.Errorf("secret value is %d bytes, over the %d-byte limit: %w", len(value), MaxSecretValueBytes, ErrInvalid))
	}
	aead, err := sec.ns.s.secretsAEAD()
	if err != nil {
		return sec.ns.wrap("set", key, err)
	}
	sealed := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(value)+aead.Overhead())
	sealed[0] = sealFormat
	if _, err := rand.Read(sealed[1:]); err != nil {
		return sec.ns.wrap("set", key, err)
	}
	sealed = aead.Seal(sealed, sealed[1:], value, sec.aad(key))
	if err := sec.ns.put(key, sealed); err != nil {
		return sec.ns.wrap("set", key, err)
	}
	return nil
}

// Get unseals the value of key. A value that fails authentication is an
// error wrapping ErrUnseal, never a silent miss.
func (sec *Secrets) Get(key string) ([]byte, bool, error) {
	if err := sec.check(key); err != nil {
		return nil, false, sec.ns.wrap("get", key, err)
	}
	sealed, ok, err := sec.ns.get(key)
	if err != nil || !ok {
		if err != nil {
			err = sec.ns.wrap("get", key, err)
		}
		return nil, false, err
	}
	aead, err := sec.ns.s.secretsAEAD()
	if err != nil {
		return nil, false, sec.ns.wrap("get", key, err)
	}
	n := aead.NonceSize()
	if len(sealed) < 1+n+aead.Overhead() || sealed[0] != sealFormat {
		return nil, false, sec.ns.wrap("get", key, fmt.Errorf("stored value is not a sealed secret: %w", ErrUnseal))
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], sec.aad(key))
	if err != nil {
		return nil, false, sec.ns.wrap("get", key, fmt.Errorf("wrong key file %s, tampered value, or value moved from another key: %w", sec.ns.s.keyFile, ErrUnseal))
	}
	return plain, true, nil
}

// Delete removes key; deleting a missing key is not an error.
func (sec *Secrets) Delete(key string) error {
	if err := sec.check(key); err != nil {
		return sec.ns.wrap("delete", key, err)
	}
	if err := sec.ns.delete(key); err != nil {
		return sec.ns.wrap("delete", key, err)
	}
	return nil
}

// List returns the names of the capsule's secrets, sorted. It needs no key.
func (sec *Secrets) List() ([]string, error) {
	if sec.ns.err != nil {
		return nil, sec.ns.wrap("list", "", sec.ns.err)
	}
	keys, err := sec.ns.keys("")
	if err != nil {
		return nil, sec.ns.wrap("list", "", err)
	}
	return keys, nil
}

func (sec *Secrets) check(key string) error {
	if sec.ns.err != nil {
		return sec.ns.err
	}
	return validateKey(key)
}

// aad binds a sealed value to its capsule and key. Each part is length-
// prefixed so no two (capsule, key) pairs share additional data.
func (sec *Secrets) aad(key string) []byte {
	b := make([]byte, 0, len(aadContext)+len(sec.capsule)+len(key)+8)
	b = append(b, aadContext...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(sec.capsule)))
	b = append(b, sec.capsule...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	return append(b, key...)
}
