package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
)

// Kind names what an entry records. The set is open: a package that owns
// an event adds its kind here, so show and verify need not know it.
type Kind string

// The kinds the host records (docs/audit.md lists who records each).
const (
	KindApprovalAsked    Kind = "approval.asked"    // a person was asked to allow an action
	KindApprovalAnswered Kind = "approval.answered" // ... and answered (or the question ended)
	KindGrantRecorded    Kind = "grant.recorded"    // the operator's approval of a capsule's grants was stored
	KindGrantRemoved     Kind = "grant.removed"     // ... and removed with the capsule
	KindCapsuleLoaded    Kind = "capsule.loaded"    // a capsule was loaded
	KindCapsuleReloaded  Kind = "capsule.reloaded"  // ... reloaded
	KindCapsuleRefused   Kind = "capsule.refused"   // ... refused at load (grants changed, bad manifest)
	KindToolStarted      Kind = "tool.started"      // a tool call was forwarded to its provider
	KindToolEnded        Kind = "tool.ended"        // ... and its result went back to the caller
	KindConfineRefused   Kind = "confinement.refused"
	KindPeerJoined       Kind = "peer.joined" // a cluster peer connected
	KindPeerRefused      Kind = "peer.refused"
	KindPolicyRefused    Kind = "policy.refused"
	// Kinds for capability tokens and principals (issue 35 items 2–3).
	KindTokenIssued  Kind = "token.issued"
	KindTokenRevoked Kind = "token.revoked"
	KindTokenIgnored Kind = "token.ignored" // expired, tampered or revoked token presented
	KindQuotaRefused Kind = "quota.refused"
	KindNote         Kind = "audit.note" // a free-form note (tests, operators)
	// KindSeal is the writer's own: a signed entry whose signature, over
	// its prev hash, vouches for every entry before it (docs/audit.md).
	KindSeal Kind = "audit.seal"
)

// Entry is one event. Callers fill Principal (empty for system events),
// Kind and what else applies; Append sets Seq, Time and Prev.
type Entry struct {
	// Seq is the entry's position in its chain, from 1.
	Seq uint64 `json:"seq"`
	// Time is when the entry was appended (UTC). It never goes backwards
	// within a chain: a clock set back repeats the last time.
	Time time.Time `json:"time"`
	// Principal is whose chain holds the entry; empty for system events.
	Principal string `json:"principal,omitempty"`
	Kind      Kind   `json:"kind"`
	// Capsule is the capsule acting or acted on.
	Capsule string `json:"capsule,omitempty"`
	// Subject is what the event is about: a tool, a grant, a peer, a token.
	Subject string `json:"subject,omitempty"`
	// Outcome is how it ended: "ok", "error", "denied", "allowed", ….
	Outcome string `json:"outcome,omitempty"`
	// Detail holds the rest (sha256 of arguments and result, reasons),
	// encoded with sorted keys.
	Detail map[string]string `json:"detail,omitempty"`
	// Prev is the hex sha256 of the previous entry's body (64 zeros for
	// the first).
	Prev string `json:"prev"`
}

// Genesis is the Prev of a chain's first entry.
var Genesis = hex.EncodeToString(make([]byte, sha256.Size))

// Limits an entry must keep, so a line stays small and readable.
const (
	MaxFieldBytes  = 1024 // Capsule, Subject, Outcome, each Detail key and value
	MaxDetailItems = 32
	MaxLineBytes   = 64 << 10
)

// Signing contexts keep an entry's signature from passing as a
// checkpoint's and the other way round.
const (
	entryContext      = "astrid-audit-entry-v1\x00"
	checkpointContext = "astrid-audit-checkpoint-v1\x00"
)

// ValidPrincipal reports whether p may name a chain ("" is the system
// chain).
func ValidPrincipal(p string) bool { return p == "" || ipc.ValidatePrincipal(p) == nil }

// ErrInvalid reports an entry Append refuses.
var ErrInvalid = errors.New("audit: invalid entry")

// check validates what a caller filled in, and makes its strings valid
// UTF-8 (JSON would otherwise write an invalid byte as an escape that does
// not decode back to it, and the entry would no longer verify). It runs on
// every append, so it allocates only to mend.
func (e *Entry) check() error {
	e.Capsule, e.Subject, e.Outcome = valid(e.Capsule), valid(e.Subject), valid(e.Outcome)
	mend := false
	for k, v := range e.Detail {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			mend = true
			break
		}
	}
	if mend {
		d := make(map[string]string, len(e.Detail))
		for k, v := range e.Detail {
			d[valid(k)] = valid(v)
		}
		e.Detail = d
	}
	if !ValidPrincipal(e.Principal) {
		return fmt.Errorf("%w: principal %q is not [A-Za-z0-9_-]{1,64}", ErrInvalid, e.Principal)
	}
	if e.Kind == "" || len(e.Kind) > 64 {
		return fmt.Errorf("%w: kind %q", ErrInvalid, e.Kind)
	}
	for _, f := range [...]struct{ name, v string }{{"capsule", e.Capsule}, {"subject", e.Subject}, {"outcome", e.Outcome}} {
		if len(f.v) > MaxFieldBytes {
			return fmt.Errorf("%w: %s is %d bytes (at most %d)", ErrInvalid, f.name, len(f.v), MaxFieldBytes)
		}
	}
	if len(e.Detail) > MaxDetailItems {
		return fmt.Errorf("%w: %d detail items (at most %d)", ErrInvalid, len(e.Detail), MaxDetailItems)
	}
	for k, v := range e.Detail {
		if len(k) > MaxFieldBytes || len(v) > MaxFieldBytes {
			return fmt.Errorf("%w: detail %.40q is over %d bytes", ErrInvalid, k, MaxFieldBytes)
		}
	}
	return nil
}

func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Record is one decoded line: the entry, the exact bytes its hash and
// signature cover, its signature (nil: an entry a later seal vouches
// for) and its hash.
type Record struct {
	Entry Entry
	Body  []byte
	Sig   []byte
	Hash  string
}

// line is a chain file's line: {"entry":<body>} or, signed (a seal),
// {"entry":<body>,"sig":"<base64>"}.
type line struct {
	Entry json.RawMessage `json:"entry"`
	Sig   string          `json:"sig,omitempty"`
}

// encodeBody returns the canonical body of e.
func encodeBody(e *Entry) ([]byte, error) {
	e.Time = e.Time.UTC()
	return json.Marshal(e)
}

// HashBody returns the hex sha256 of an entry body.
func HashBody(body []byte) string {
	h := sha256.Sum256(body)
	return hex.EncodeToString(h[:])
}

// frame makes a line of body and its signature ("": unsigned).
func frame(body []byte, sig string) []byte {
	out := make([]byte, 0, len(body)+len(sig)+22)
	out = append(out, `{"entry":`...)
	out = append(out, body...)
	if sig != "" {
		out = append(out, `,"sig":"`...)
		out = append(out, sig...)
		out = append(out, '"')
	}
	out = append(out, "}\n"...)
	return out
}

// DecodeLine parses one line of a chain file (without its newline)
// strictly: the line must be exactly what the writer produces, byte for
// byte, so any edit to it is caught here or by the signature. It does not
// check the signature (Verify does, given the public key).
func DecodeLine(b []byte) (Record, error) {
	if len(b) > MaxLineBytes {
		return Record{}, fmt.Errorf("line is %d bytes (at most %d)", len(b), MaxLineBytes)
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return Record{}, fmt.Errorf("not an entry line: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(l.Entry))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return Record{}, fmt.Errorf("entry body: %w", err)
	}
	canon, err := encodeBody(&e)
	if err != nil {
		return Record{}, fmt.Errorf("entry body: %w", err)
	}
	if !bytes.Equal(canon, l.Entry) {
		return Record{}, errors.New("entry body is not in canonical form (edited)")
	}
	var sig []byte
	if l.Sig != "" {
		var err error
		sig, err = base64.StdEncoding.DecodeString(l.Sig)
		if err != nil || len(sig) != ed25519.SignatureSize {
			return Record{}, errors.New("signature is not base64 of 64 bytes")
		}
	} else if e.Kind == KindSeal {
		return Record{}, errors.New("a seal without its signature")
	}
	if !bytes.Equal(frame(l.Entry, l.Sig), append(append([]byte(nil), b...), '\n')) {
		return Record{}, errors.New("line is not in canonical form (edited)")
	}
	if e.Seq == 0 {
		return Record{}, errors.New("seq 0")
	}
	if len(e.Prev) != len(Genesis) {
		return Record{}, errors.New("prev is not a sha256")
	}
	if !ValidPrincipal(e.Principal) {
		return Record{}, fmt.Errorf("principal %q is not valid", e.Principal)
	}
	return Record{Entry: e, Body: []byte(l.Entry), Sig: sig, Hash: HashBody(l.Entry)}, nil
}

// Signed reports whether r carries a signature (a seal).
func (r *Record) Signed() bool { return r.Sig != nil }

// VerifySig reports whether r's signature is pub's (false for an
// unsigned entry).
func (r *Record) VerifySig(pub ed25519.PublicKey) bool {
	if r.Sig == nil {
		return false
	}
	return ed25519.Verify(pub, append([]byte(entryContext), r.Body...), r.Sig)
}
