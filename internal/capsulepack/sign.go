package capsulepack

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// signatureFormat names signature.json's layout and is the first line of
// what is signed, so a signature made for anything else never verifies.
const signatureFormat = "astrid-capsule-signature/1"

// signature is signature.json.
type signature struct {
	Format string `json:"format"`
	// Key is the publisher's public key (FormatKey).
	Key string `json:"key"`
	// Sig is the base64 ed25519 signature of signedMessage.
	Sig string `json:"sig"`
}

// signedMessage is what a publisher signs: the format, then the sha256 of
// meta.json, which lists every file's sha256 (so one signature covers the
// whole archive).
func signedMessage(metaJSON []byte) []byte {
	s := sha256.Sum256(metaJSON)
	return []byte(signatureFormat + "\n" + hex.EncodeToString(s[:]) + "\n")
}

// FormatKey writes a public key as "ed25519:<base64>".
func FormatKey(pub ed25519.PublicKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(pub)
}

// ParseKey reads FormatKey's form.
func ParseKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "ed25519:")
	if !ok {
		return nil, fmt.Errorf("publisher key %q: want ed25519:<base64> (as astrid key generate prints)", short(s))
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("publisher key %q: not a base64 %d-byte ed25519 public key", short(s), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// KeyID is a short fingerprint of a public key for people to compare: the
// first 16 hex digits of its sha256.
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return hex.EncodeToString(s[:8])
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Sign returns the archive b signed with priv (replacing any signature):
// the same files and meta.json, then signature.json.
func Sign(b []byte, priv ed25519.PrivateKey) ([]byte, error) {
	a, err := Read(bytes.NewReader(b), Limits{})
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	sig, err := json.MarshalIndent(signature{
		Format: signatureFormat,
		Key:    FormatKey(priv.Public().(ed25519.PublicKey)),
		Sig:    base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signedMessage(a.MetaJSON))),
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	return write(a.MetaJSON, a.Files, sig)
}

// Signer is who signed an archive, as Verify found it.
type Signer struct {
	// Key is the publisher's public key; nil when the archive is unsigned.
	Key ed25519.PublicKey
	// Name is the trust store's name for Key; "" when Key is not trusted.
	Name string
}

// Signed reports whether the archive carried a valid signature.
func (s Signer) Signed() bool { return s.Key != nil }

// Trusted reports whether the signature is by a trusted publisher.
func (s Signer) Trusted() bool { return s.Key != nil && s.Name != "" }

// String says who signed, for people.
func (s Signer) String() string {
	switch {
	case !s.Signed():
		return "unsigned"
	case s.Trusted():
		return fmt.Sprintf("signed by %s (key %s)", s.Name, KeyID(s.Key))
	}
	return fmt.Sprintf("signed by an unknown publisher (key %s, not in the trust store)", KeyID(s.Key))
}

// Verify checks the archive's signature. An unsigned archive gives a
// Signer without a key; a signature.json that does not verify (malformed,
// another archive's, a forged key) is ErrBadSignature. trusted names a
// trusted key ("" if unknown).
func (a *Archive) Verify(trusted func(ed25519.PublicKey) string) (Signer, error) {
	if a.Signature == nil {
		return Signer{}, nil
	}
	var sig signature
	if err := json.Unmarshal(a.Signature, &sig); err != nil {
		return Signer{}, fmt.Errorf("%w: %s: %w", ErrBadSignature, SignatureFile, err)
	}
	if sig.Format != signatureFormat {
		return Signer{}, fmt.Errorf("%w: %s format %q is not %q", ErrBadSignature, SignatureFile, short(sig.Format), signatureFormat)
	}
	pub, err := ParseKey(sig.Key)
	if err != nil {
		return Signer{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	raw, err := base64.StdEncoding.DecodeString(sig.Sig)
	if err != nil || !ed25519.Verify(pub, signedMessage(a.MetaJSON), raw) {
		return Signer{}, fmt.Errorf("%w: the signature by key %s does not match this archive's %s (altered after signing, or signed by another key)", ErrBadSignature, KeyID(pub), MetaFile)
	}
	s := Signer{Key: pub}
	if trusted != nil {
		s.Name = trusted(pub)
	}
	return s, nil
}
