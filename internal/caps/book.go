package caps

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// Where tokens are kept: in the kernel's own KV namespace of each
// principal (ipc.KernelSourceID, an id no capsule may take), one key per
// token, "cap/<capsule>/<tool>/<id>" (durable) or "~cap/…" (volatile: this
// session). A revoked id is remembered under "caprevoked/<id>", so a copy
// of the token put back is still refused.
const (
	durablePrefix  = "cap/"
	sessionPrefix  = store.VolatilePrefix + "cap/"
	revokedPrefix  = "caprevoked/"
	highWaterKey   = "capclock"
	futureSlack    = 5 * time.Minute
	highWaterEvery = time.Minute
)

// Book keeps and checks one host's capability tokens. It is safe for
// concurrent use.
type Book struct {
	st   *store.Store
	load func() (ed25519.PrivateKey, error)
	log  *slog.Logger
	now  func() time.Time
	// record, when set (SetRecorder), also receives every token event
	// (the kernel's audit chain).
	record func(Event)

	keyOnce sync.Once
	key     ed25519.PrivateKey
	pub     ed25519.PublicKey
	keyErr  error

	mu sync.Mutex
	// high is the latest time this Book has seen; a wall clock set back
	// below it does not make an expired token good again (now).
	high time.Time
	// sessions are the principals this Book minted session tokens for:
	// volatile keys live only in this process, so it knows them all.
	sessions map[string]bool
	// verified are encoded tokens whose signature verified, by their
	// exact text: the same bytes verify the same way with the same key,
	// and a verification costs about 50 µs on every mutable tool call.
	verified map[string]Token
}

// maxVerified bounds Book.verified; past it the memo starts over.
const maxVerified = 4096

// decode is Decode with the memo of texts already verified.
func (b *Book) decode(s string) (Token, error) {
	b.mu.Lock()
	t, ok := b.verified[s]
	b.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := Decode(b.pub, s)
	if err != nil {
		return t, err
	}
	b.mu.Lock()
	if b.verified == nil || len(b.verified) >= maxVerified {
		b.verified = map[string]Token{}
	}
	b.verified[s] = t
	b.mu.Unlock()
	return t, nil
}

// NewBook keeps tokens in st, signed with key (hostkey.Load's). now is
// the clock (nil: time.Now); log receives token events (nil: discarded).
func NewBook(st *store.Store, key ed25519.PrivateKey, now func() time.Time, log *slog.Logger) *Book {
	return NewLazyBook(st, func() (ed25519.PrivateKey, error) { return key, nil }, now, log)
}

// NewLazyBook is NewBook with the key loaded on first use (the kernel's:
// a home whose sealed secrets cannot be read still boots, and then keeps
// no tokens, so every question is asked).
func NewLazyBook(st *store.Store, load func() (ed25519.PrivateKey, error), now func() time.Time, log *slog.Logger) *Book {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Book{st: st, load: load, log: log, now: now}
}

// SetRecorder makes record receive every token event besides the log;
// the kernel sets it once, before the book is used, to append them to the
// audit chain.
func (b *Book) SetRecorder(record func(Event)) { b.record = record }

// ready loads the key once; its error is the host key's.
func (b *Book) ready() error {
	b.keyOnce.Do(func() {
		key, err := b.load()
		if err == nil && len(key) != ed25519.PrivateKeySize {
			err = fmt.Errorf("caps: host key of %d bytes", len(key))
		}
		if err != nil {
			b.keyErr = fmt.Errorf("caps: no host key, so no capability tokens: %w", err)
			b.log.Warn(b.keyErr.Error())
			return
		}
		b.key, b.pub = key, key.Public().(ed25519.PublicKey)
	})
	return b.keyErr
}

// PublicKey is the key tokens are checked with (nil without a host key).
func (b *Book) PublicKey() ed25519.PublicKey { _ = b.ready(); return b.pub }

// Now is the Book's idea of the present: the clock, or the latest time
// it has seen or recorded if the clock reads earlier (set back).
func (b *Book) Now(principal string) time.Time {
	now := b.now().UTC()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.high.IsZero() {
		// The latest time recorded by any process, kept with the default
		// principal's tokens (one host, one clock).
		if raw, ok, err := b.st.KV(ipc.DefaultPrincipal, ipc.KernelSourceID).Get(highWaterKey); err == nil && ok {
			if t, err := time.Parse(time.RFC3339Nano, string(raw)); err == nil {
				b.high = t
			}
		}
	}
	if now.Before(b.high) {
		if b.high.Sub(now) > futureSlack {
			b.log.Warn("caps: the clock reads earlier than a time already seen; tokens are judged by the later", "clock", now, "seen", b.high, "principal", principal)
		}
		return b.high
	}
	b.high = now
	return now
}

// recordHighWater keeps now as the latest time seen, for the next process.
func (b *Book) recordHighWater(now time.Time) {
	kv := b.st.KV(ipc.DefaultPrincipal, ipc.KernelSourceID)
	if raw, ok, err := kv.Get(highWaterKey); err == nil && ok {
		if t, err := time.Parse(time.RFC3339Nano, string(raw)); err == nil && now.Sub(t) < highWaterEvery {
			return
		}
	}
	if err := kv.Set(highWaterKey, []byte(now.Format(time.RFC3339Nano))); err != nil {
		b.log.Warn("caps: the latest time seen was not kept", "err", err)
	}
}

// Request is what a new token covers.
type Request struct {
	Kind               string
	Principal, Capsule string
	Tool, Pattern      string
	// Action, instead of Tool, makes a token of the host approval call.
	Action string
	// TTL is how long it stands; zero: no expiry.
	TTL time.Duration
	// Answer is the approval question whose answer asked for the token:
	// reported with its minting (the audit chain links the two), not kept
	// in the token.
	Answer string
}

// Mint signs and keeps a new token for r.
func (b *Book) Mint(r Request) (Token, error) {
	if err := b.ready(); err != nil {
		return Token{}, err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Token{}, fmt.Errorf("caps: token id: %w", err)
	}
	if r.TTL < 0 {
		return Token{}, fmt.Errorf("%w: negative lifetime %s", ErrInvalid, r.TTL)
	}
	now := b.Now(r.Principal).Truncate(time.Millisecond)
	t := Token{ID: hex.EncodeToString(raw[:]), Kind: r.Kind, Principal: r.Principal, Capsule: r.Capsule, Tool: r.Tool, Action: r.Action, Pattern: r.Pattern, Issued: now}
	if r.TTL > 0 {
		t.Expiry = now.Add(r.TTL)
	}
	enc, err := Encode(b.key, t)
	if err != nil {
		return Token{}, err
	}
	if err := b.st.KV(t.Principal, ipc.KernelSourceID).Set(keyOf(t), []byte(enc)); err != nil {
		return Token{}, fmt.Errorf("caps: keep token %s of %s: %w", t.ID, t.Principal, err)
	}
	if t.Kind == KindSession {
		b.mu.Lock()
		if b.sessions == nil {
			b.sessions = map[string]bool{}
		}
		b.sessions[t.Principal] = true
		b.mu.Unlock()
	}
	b.recordHighWater(now)
	b.reportTokenEvent(Event{What: EventMinted, Token: t, Answer: r.Answer})
	return t, nil
}

func keyOf(t Token) string {
	p := durablePrefix
	if t.Kind == KindSession {
		p = sessionPrefix
	}
	return p + t.Capsule + "/" + nameOf(t.Tool, t.Action) + "/" + t.ID
}

// nameOf is the key segment of a tool, or of an action (which may hold
// any text): '=' and a hash, which no tool name can spell.
func nameOf(tool, action string) string {
	if action == "" {
		return tool
	}
	sum := sha256.Sum256([]byte(action))
	return "=" + hex.EncodeToString(sum[:16])
}

// CheckAction is Check for a token of the host approval call: capsule may
// do action on exactly resource.
func (b *Book) CheckAction(principal, capsule, action, resource string) (Token, bool, error) {
	return b.check(principal, capsule, nameOf("", action), func(t Token) bool { return t.Action == action && t.Covers(resource) })
}

// Check returns the first token of principal that stands and covers
// capsule's tool called with resource; ok is false when none does. It
// reads the store on every call, so a revocation counts at once. A token
// that is kept but does not stand is ignored and reported.
func (b *Book) Check(principal, capsule, tool, resource string) (Token, bool, error) {
	return b.check(principal, capsule, tool, func(t Token) bool { return t.Action == "" && t.Covers(resource) })
}

// check finds a standing token kept under capsule/name that covers.
func (b *Book) check(principal, capsule, name string, covers func(Token) bool) (Token, bool, error) {
	if b.ready() != nil {
		// No key, no token can verify: every question is asked (logged
		// once, when the key failed to load).
		return Token{}, false, nil
	}
	kv := b.st.KV(principal, ipc.KernelSourceID)
	now := b.Now(principal)
	for _, p := range []string{sessionPrefix, durablePrefix} {
		keys, err := kv.List(p + capsule + "/" + name + "/")
		if err != nil {
			return Token{}, false, fmt.Errorf("caps: tokens of %s: %w", principal, err)
		}
		slices.Sort(keys)
		for _, key := range keys {
			e, err := b.read(kv, principal, key, now)
			if err != nil {
				return Token{}, false, err
			}
			if e.Problem != "" {
				b.reportTokenEvent(Event{What: EventIgnored, Token: e.Token, Key: key, Principal: principal, Reason: e.Problem})
				continue
			}
			if covers(e.Token) {
				b.reportTokenEvent(Event{What: EventUsed, Token: e.Token})
				return e.Token, true, nil
			}
		}
	}
	return Token{}, false, nil
}

// Entry is one kept token as List reads it: the token, and why it does
// not stand (empty when it does).
type Entry struct {
	Key     string
	Token   Token
	Problem string
}

// read decodes and judges the token kept under key.
func (b *Book) read(kv *store.KV, principal, key string, now time.Time) (Entry, error) {
	e := Entry{Key: key}
	raw, ok, err := kv.Get(key)
	if err != nil {
		return e, fmt.Errorf("caps: token %s of %s: %w", key, principal, err)
	}
	if !ok {
		e.Problem = "gone"
		return e, nil
	}
	t, err := b.decode(string(raw))
	if err != nil {
		e.Problem = "tampered or unreadable: " + err.Error()
		return e, nil
	}
	e.Token = t
	switch {
	case t.Principal != principal || key != keyOf(t):
		e.Problem = fmt.Sprintf("kept under %s of %s but made for %s of %s (moved or copied)", key, principal, keyOf(t), t.Principal)
	case t.Issued.After(now.Add(futureSlack)):
		e.Problem = fmt.Sprintf("issued %s, after now (%s): the clock was set back or the token is forged", t.Issued.Format(time.RFC3339), now.Format(time.RFC3339))
	case !t.Expiry.IsZero() && !now.Before(t.Expiry):
		e.Problem = "expired " + t.Expiry.Format(time.RFC3339)
	default:
		if _, revoked, err := kv.Get(revokedPrefix + t.ID); err != nil {
			return e, fmt.Errorf("caps: revocation of %s: %w", t.ID, err)
		} else if revoked {
			e.Problem = "revoked"
		}
	}
	return e, nil
}

// List is every token kept for principal, this session's first, each with
// why it does not stand, if it does not.
func (b *Book) List(principal string) ([]Entry, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	kv := b.st.KV(principal, ipc.KernelSourceID)
	now := b.Now(principal)
	var out []Entry
	for _, p := range []string{sessionPrefix, durablePrefix} {
		keys, err := kv.List(p)
		if err != nil {
			return nil, fmt.Errorf("caps: tokens of %s: %w", principal, err)
		}
		slices.Sort(keys)
		for _, key := range keys {
			e, err := b.read(kv, principal, key, now)
			if err != nil {
				return nil, err
			}
			if e.Problem != "gone" {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// ErrUnknown: no token of the principal has that id.
var ErrUnknown = errors.New("caps: no such token")

// Revoke withdraws principal's token id (a whole id, or a prefix of at
// least 8 hex digits naming one token): its key is deleted and its id
// remembered as revoked. A token kept under an unreadable value can be
// revoked by the id in its key.
func (b *Book) Revoke(principal, id string) (Entry, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 8 {
		return Entry{}, fmt.Errorf("%w: id %q is shorter than 8 characters", ErrUnknown, clip(id))
	}
	list, err := b.List(principal)
	if err != nil {
		return Entry{}, err
	}
	var found []Entry
	for _, e := range list {
		if strings.HasPrefix(e.Key[strings.LastIndexByte(e.Key, '/')+1:], id) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Entry{}, fmt.Errorf("%w: %s has no token %s", ErrUnknown, principal, id)
	case 1:
	default:
		return Entry{}, fmt.Errorf("caps: id %s names %d tokens of %s; give more of it", id, len(found), principal)
	}
	e := found[0]
	kv := b.st.KV(principal, ipc.KernelSourceID)
	full := e.Key[strings.LastIndexByte(e.Key, '/')+1:]
	now := b.Now(principal)
	if err := kv.Set(revokedPrefix+full, []byte(now.Format(time.RFC3339Nano))); err != nil {
		return Entry{}, fmt.Errorf("caps: revoke %s of %s: %w", full, principal, err)
	}
	if err := kv.Delete(e.Key); err != nil {
		return Entry{}, fmt.Errorf("caps: revoke %s of %s: %w", full, principal, err)
	}
	b.reportTokenEvent(Event{What: EventRevoked, Token: e.Token, Key: e.Key, Principal: principal})
	return e, nil
}

// RevokeCapsule withdraws every token principal holds for capsule's tools
// (astrid capsule remove: an approval was given to the code the person
// saw). It returns how many.
func (b *Book) RevokeCapsule(principal, capsule string) (int, error) {
	list, err := b.List(principal)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range list {
		rest := strings.TrimPrefix(strings.TrimPrefix(e.Key, store.VolatilePrefix), durablePrefix)
		if !strings.HasPrefix(rest, capsule+"/") {
			continue
		}
		if _, err := b.Revoke(principal, e.Key[strings.LastIndexByte(e.Key, '/')+1:]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ForgetSession drops every principal's "this session" tokens for
// capsule's tools: the capsule was unloaded for good, and one loaded again
// under its id is other code, asked about anew. Failures are logged.
func (b *Book) ForgetSession(capsule string) {
	b.mu.Lock()
	principals := make([]string, 0, len(b.sessions))
	for p := range b.sessions {
		principals = append(principals, p)
	}
	b.mu.Unlock()
	for _, p := range principals {
		kv := b.st.KV(p, ipc.KernelSourceID)
		keys, err := kv.List(sessionPrefix + capsule + "/")
		if err != nil {
			b.log.Warn("caps: session tokens not listed", "principal", p, "capsule", capsule, "err", err)
			continue
		}
		for _, key := range keys {
			if err := kv.Delete(key); err != nil {
				b.log.Warn("caps: session token not dropped", "principal", p, "key", key, "err", err)
				continue
			}
			b.reportTokenEvent(Event{What: EventRevoked, Key: key, Principal: p, Reason: "capsule " + capsule + " unloaded"})
		}
	}
}
