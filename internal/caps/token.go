package caps

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
)

// The kinds of token: what gave it.
const (
	// KindSession is a "this session" approval: kept in memory, gone when
	// the kernel process stops.
	KindSession = "session"
	// KindAlways is an "always" approval: kept in the store.
	KindAlways = "always"
	// KindGrant is a token an operator granted in advance (astrid caps
	// grant): kept in the store.
	KindGrant = "grant"
)

// Token is one capability: Principal may run Capsule's Tool (with
// arguments matching Pattern, when set) from Issued until Expiry (zero:
// no expiry) without being asked. A token of the host approval call names
// an Action instead of a Tool (a shell command's program), and its Pattern
// is then the exact resource approved (EscapePattern).
type Token struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Principal string    `json:"principal"`
	Capsule   string    `json:"capsule"`
	Tool      string    `json:"tool,omitempty"`
	Action    string    `json:"action,omitempty"`
	Pattern   string    `json:"pattern,omitempty"`
	Issued    time.Time `json:"issued"`
	Expiry    time.Time `json:"expiry,omitzero"`
}

// prefix starts every encoded token; it names the format's version.
const prefix = "astcap1."

// MaxEncoded bounds an encoded token (a larger one is refused unread).
const MaxEncoded = 96 << 10

// maxPattern bounds an argument pattern (a shell command approved
// exactly is kept whole).
const maxPattern = 64 << 10

// maxAction bounds an action (ipc.MaxApprovalAction).
const maxAction = 256

// Errors of Decode.
var (
	// ErrMalformed: the text is not an encoded token.
	ErrMalformed = errors.New("caps: not a capability token")
	// ErrSignature: the signature does not verify with the host key
	// (the token was edited, or signed by another key).
	ErrSignature = errors.New("caps: token signature does not verify")
	// ErrInvalid: signed, but a field is out of range.
	ErrInvalid = errors.New("caps: token field invalid")
)

// Validate checks t's fields: a 32-hex-digit id, a known kind, a valid
// principal, capsule id and tool name, a pattern of at most 1 KiB of
// UTF-8, an issue time, and an expiry after it when one is set.
func (t Token) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	if len(t.ID) != 32 || strings.ToLower(t.ID) != t.ID {
		return bad("id %q is not 32 lower-case hex digits", clip(t.ID))
	}
	if _, err := hex.DecodeString(t.ID); err != nil {
		return bad("id %q is not 32 lower-case hex digits", clip(t.ID))
	}
	switch t.Kind {
	case KindSession, KindAlways, KindGrant:
	default:
		return bad("kind %q is none of session, always, grant", clip(t.Kind))
	}
	if err := ipc.ValidatePrincipal(t.Principal); err != nil {
		return bad("principal: %v", err)
	}
	if t.Capsule == "" || len(t.Capsule) > 128 || strings.ContainsAny(t.Capsule, "/\x00") || !utf8.ValidString(t.Capsule) {
		return bad("capsule %q", clip(t.Capsule))
	}
	if t.Action != "" {
		if t.Tool != "" {
			return bad("both a tool and an action")
		}
		if len(t.Action) > maxAction || !utf8.ValidString(t.Action) || strings.ContainsFunc(t.Action, unicode.IsControl) {
			return bad("action of %d bytes (1 to %d of UTF-8 text)", len(t.Action), maxAction)
		}
	} else if err := ipc.ValidateToolName(t.Tool); err != nil {
		return bad("tool: %v", err)
	}
	if len(t.Pattern) > maxPattern || !utf8.ValidString(t.Pattern) {
		return bad("pattern of %d bytes (at most %d, UTF-8)", len(t.Pattern), maxPattern)
	}
	if t.Issued.IsZero() {
		return bad("no issue time")
	}
	if !t.Expiry.IsZero() && !t.Expiry.After(t.Issued) {
		return bad("expiry %s is not after issue %s", t.Expiry.Format(time.RFC3339), t.Issued.Format(time.RFC3339))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

var b64 = base64.RawURLEncoding.Strict()

// Encode signs t with key: "astcap1." base64url(JSON of t) "."
// base64url(ed25519 signature of everything before the last dot).
func Encode(key ed25519.PrivateKey, t Token) (string, error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	t.Issued, t.Expiry = t.Issued.UTC(), t.Expiry.UTC()
	body, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("caps: encode token %s: %w", t.ID, err)
	}
	signed := prefix + b64.EncodeToString(body)
	return signed + "." + b64.EncodeToString(ed25519.Sign(key, []byte(signed))), nil
}

// Decode reads an encoded token and checks it: the signature must verify
// with pub before any field is read, the fields must be exactly Token's
// (no unknown, no trailing data) and valid (Token.Validate).
func Decode(pub ed25519.PublicKey, s string) (Token, error) {
	var t Token
	if len(s) > MaxEncoded {
		return t, fmt.Errorf("%w: %d bytes (at most %d)", ErrMalformed, len(s), MaxEncoded)
	}
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return t, fmt.Errorf("%w: no %q prefix", ErrMalformed, prefix)
	}
	body64, sig64, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig64, ".") {
		return t, fmt.Errorf("%w: want two dot-separated parts after the prefix", ErrMalformed)
	}
	sig, err := b64.DecodeString(sig64)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return t, fmt.Errorf("%w: signature is not %d bytes of base64url", ErrMalformed, ed25519.SignatureSize)
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(prefix+body64), sig) {
		return t, ErrSignature
	}
	body, err := b64.DecodeString(body64)
	if err != nil {
		return t, fmt.Errorf("%w: body is not base64url: %w", ErrMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Token{}, fmt.Errorf("%w: body: %w", ErrMalformed, err)
	}
	if dec.More() {
		return Token{}, fmt.Errorf("%w: data after the body", ErrMalformed)
	}
	if err := t.Validate(); err != nil {
		return Token{}, err
	}
	return t, nil
}

// Covers reports whether t's pattern admits resource (the call's
// arguments as the approval question shows them). No pattern admits
// every call; otherwise '*' matches any run of characters, '\\' makes the
// next character literal, and every other character matches itself.
func (t Token) Covers(resource string) bool {
	return t.Pattern == "" || globMatch(t.Pattern, resource)
}

// globMatch matches s against p, where '*' stands for any run of
// characters (none included). Linear backtracking on the last star.
func globMatch(p, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi+1 < len(p) && p[pi] == '\\' && p[pi+1] == s[si]:
			pi += 2
			si++
		case pi < len(p) && p[pi] != '\\' && p[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// EscapePattern is the pattern that admits exactly s.
func EscapePattern(s string) string {
	if !strings.ContainsAny(s, "*\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '*' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnescapePattern is the text an EscapePattern pattern admits exactly.
func UnescapePattern(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
