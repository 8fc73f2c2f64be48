package caps

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// fakeClock is a settable clock for the Book.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func newBook(t testing.TB) (*Book, *store.Store, *fakeClock) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := hostkey.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	return NewBook(st, key, clk.now, nil), st, clk
}

func mint(t *testing.T, b *Book, r Request) Token {
	t.Helper()
	tok, err := b.Mint(r)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestMintCheckRevoke(t *testing.T) {
	b, _, _ := newBook(t)
	tok := mint(t, b, Request{Kind: KindAlways, Principal: "default", Capsule: "astrid-capsule-fs", Tool: "write_file"})
	got, ok, err := b.Check("default", "astrid-capsule-fs", "write_file", `{"file_path":"a"}`)
	if err != nil || !ok || got.ID != tok.ID {
		t.Fatalf("check: %+v %v %v", got, ok, err)
	}
	for _, c := range [][3]string{{"alice", "astrid-capsule-fs", "write_file"}, {"default", "other", "write_file"}, {"default", "astrid-capsule-fs", "edit_file"}} {
		if _, ok, _ := b.Check(c[0], c[1], c[2], ""); ok {
			t.Fatalf("token of default/fs/write_file covers %v", c)
		}
	}
	if _, err := b.Revoke("alice", tok.ID); !errors.Is(err, ErrUnknown) {
		t.Fatalf("alice revoked default's token: %v", err)
	}
	if _, err := b.Revoke("default", tok.ID[:10]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Check("default", "astrid-capsule-fs", "write_file", ""); ok {
		t.Fatal("a revoked token still stands")
	}
}

func TestSessionTokensAreVolatile(t *testing.T) {
	b, st, _ := newBook(t)
	tok := mint(t, b, Request{Kind: KindSession, Principal: "default", Capsule: "c", Tool: "t"})
	if _, ok, _ := st.KV("default", ipc.KernelSourceID).Get(sessionPrefix + "c/t/" + tok.ID); !ok {
		t.Fatal("session token not kept under the volatile prefix")
	}
	list, err := b.List("default")
	if err != nil || len(list) != 1 || list[0].Token.Kind != KindSession || list[0].Problem != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
}

func TestPattern(t *testing.T) {
	b, _, _ := newBook(t)
	mint(t, b, Request{Kind: KindGrant, Principal: "default", Capsule: "shell", Tool: "run_shell_command", Pattern: `{"command":"git status*"}`})
	for res, want := range map[string]bool{
		`{"command":"git status"}`:     true,
		`{"command":"git status -s"}`:  true,
		`{"command":"rm -rf /"}`:       false,
		`{"command":"git statu"}`:      false,
		`x{"command":"git status"}`:    false,
		`{"command":"git status"}; rm`: false,
	} {
		if _, ok, _ := b.Check("default", "shell", "run_shell_command", res); ok != want {
			t.Errorf("pattern against %s: %v, want %v", res, ok, want)
		}
	}
}

// The bad input of issue 35: every one of these is ignored (and reported),
// never honoured.
func TestTamperedExpiredMovedAndBackdatedTokensAreIgnored(t *testing.T) {
	b, st, clk := newBook(t)
	kv := st.KV("default", ipc.KernelSourceID)
	base := clk.now()
	short := mint(t, b, Request{Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "t", TTL: time.Hour})
	key := keyOf(short)
	raw, _, _ := kv.Get(key)

	// A token edited to extend its expiry: its signature fails.
	body64 := strings.Split(strings.TrimPrefix(string(raw), prefix), ".")
	body, _ := base64.RawURLEncoding.DecodeString(body64[0])
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	m["expiry"] = base.Add(1000 * time.Hour).Format(time.RFC3339)
	body, _ = json.Marshal(m)
	extended := prefix + base64.RawURLEncoding.EncodeToString(body) + "." + body64[1]
	cases := []struct {
		name, key, value string
		at               time.Time
		problem          string
	}{
		{"expiry extended", key, extended, base, "signature"},
		{"one byte flipped", key, string(raw[:20]) + "A" + string(raw[21:]), base, "tampered"},
		{"not a token", key, "approve_always", base, "tampered"},
		{"expired", key, string(raw), base.Add(2 * time.Hour), "expired"},
		{"moved to another tool", durablePrefix + "c/other/" + short.ID, string(raw), base, "moved or copied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = kv.Delete(key)
			if err := kv.Set(c.key, []byte(c.value)); err != nil {
				t.Fatal(err)
			}
			defer kv.Delete(c.key)
			clk.set(c.at)
			for _, tool := range []string{"t", "other"} {
				if _, ok, err := b.Check("default", "c", tool, ""); ok || err != nil {
					t.Fatalf("%s honoured (%v)", c.name, err)
				}
			}
			list, _ := b.List("default")
			if len(list) != 1 || !strings.Contains(list[0].Problem, c.problem) {
				t.Fatalf("list: %+v, want problem %q", list, c.problem)
			}
		})
	}

	// Copied into another principal's store: still default's token.
	if err := st.KV("alice", ipc.KernelSourceID).Set(key, raw); err != nil {
		t.Fatal(err)
	}
	clk.set(base)
	if _, ok, _ := b.Check("alice", "c", "t", ""); ok {
		t.Fatal("a token copied to alice counts for alice")
	}

	// The clock set back after expiry does not revive the token.
	_ = kv.Set(key, raw)
	clk.set(base.Add(2 * time.Hour))
	if _, ok, _ := b.Check("default", "c", "t", ""); ok {
		t.Fatal("expired token honoured")
	}
	clk.set(base)
	if _, ok, _ := b.Check("default", "c", "t", ""); ok {
		t.Fatal("clock set back: an expired token is good again")
	}

	// A token issued "in the future" (signed while the clock ran ahead, or
	// forged with a stolen key) is ignored by a fresh process whose clock
	// reads earlier.
	b2, st2, clk2 := newBook(t)
	clk2.set(base.Add(48 * time.Hour))
	ahead := mint(t, b2, Request{Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "t"})
	_ = st2.KV(ipc.DefaultPrincipal, ipc.KernelSourceID).Delete(highWaterKey)
	fresh := NewBook(st2, b2.key, func() time.Time { return base }, nil)
	if _, ok, _ := fresh.Check("default", "c", "t", ""); ok {
		t.Fatalf("a token issued %s honoured at %s", ahead.Issued, base)
	}

	// A revoked token put back is still refused.
	b3, st3, _ := newBook(t)
	tok := mint(t, b3, Request{Kind: KindAlways, Principal: "default", Capsule: "c", Tool: "t"})
	raw3, _, _ := st3.KV("default", ipc.KernelSourceID).Get(keyOf(tok))
	if _, err := b3.Revoke("default", tok.ID); err != nil {
		t.Fatal(err)
	}
	_ = st3.KV("default", ipc.KernelSourceID).Set(keyOf(tok), raw3)
	if _, ok, _ := b3.Check("default", "c", "t", ""); ok {
		t.Fatal("a revoked token put back is honoured")
	}
}

// The clock set back is remembered across processes: the latest time seen
// is kept in the store.
func TestHighWaterSurvivesANewBook(t *testing.T) {
	b, st, clk := newBook(t)
	base := clk.now()
	mint(t, b, Request{Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "t", TTL: time.Hour})
	clk.set(base.Add(2 * time.Hour))
	mint(t, b, Request{Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "u"})
	fresh := NewBook(st, b.key, func() time.Time { return base }, nil)
	if got := fresh.Now("default"); !got.Equal(base.Add(2 * time.Hour)) {
		t.Fatalf("a new book's now with the clock set back: %s", got)
	}
	if _, ok, _ := fresh.Check("default", "c", "t", ""); ok {
		t.Fatal("the clock set back in a new process revived an expired token")
	}
}

func TestDecodeRefusesAnotherKey(t *testing.T) {
	_, other, _ := ed25519.GenerateKey(nil)
	b, _, _ := newBook(t)
	enc, err := Encode(other, Token{ID: strings.Repeat("a", 32), Kind: KindAlways, Principal: "default", Capsule: "c", Tool: "t", Issued: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b.PublicKey(), enc); !errors.Is(err, ErrSignature) {
		t.Fatalf("a token signed by another key: %v", err)
	}
	if _, err := Decode(other.Public().(ed25519.PublicKey), enc); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode feeds the decoder arbitrary text: it never panics, and what
// it accepts is signed by the key and re-encodes to a token that decodes
// the same.
func FuzzDecode(f *testing.F) {
	seed := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	pub := seed.Public().(ed25519.PublicKey)
	good, _ := Encode(seed, Token{ID: strings.Repeat("0", 32), Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "t", Pattern: "a*", Issued: time.Unix(1, 0), Expiry: time.Unix(2, 0)})
	f.Add(good)
	f.Add(prefix)
	f.Add(prefix + "e30." + strings.Repeat("A", 86))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := Decode(pub, s)
		if err != nil {
			return
		}
		if err := tok.Validate(); err != nil {
			t.Fatalf("accepted an invalid token: %v", err)
		}
		again, err := Encode(seed, tok)
		if err != nil {
			t.Fatalf("accepted token does not re-encode: %v", err)
		}
		back, err := Decode(pub, again)
		if err != nil || back.ID != tok.ID || back.Pattern != tok.Pattern || !back.Expiry.Equal(tok.Expiry) {
			t.Fatalf("round trip: %+v %v", back, err)
		}
	})
}

// An ignored token is reported (logged until the audit chain takes the
// hook), with why; a revocation and a mint are reported too.
func TestTokenEventsAreReported(t *testing.T) {
	_, st, clk := newBook(t)
	key, err := hostkey.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := NewBook(st, key, clk.now, log)
	tok := mint(t, b, Request{Kind: KindGrant, Principal: "default", Capsule: "c", Tool: "t", TTL: time.Minute})
	clk.set(clk.now().Add(time.Hour))
	if _, ok, _ := b.Check("default", "c", "t", ""); ok {
		t.Fatal("expired token honoured")
	}
	if _, err := b.Revoke("default", tok.ID); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{"caps: token minted", "caps: token ignored: expired", "caps: token revoked", "token=" + tok.ID} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A token of the host approval call covers exactly the command approved:
// a '*' or '\' in it is literal, and it never counts as a tool's token.
func TestActionTokensAreExact(t *testing.T) {
	b, _, _ := newBook(t)
	for _, res := range []string{`rm *.go`, `echo a\*b`, "plain"} {
		mint(t, b, Request{Kind: KindAlways, Principal: "default", Capsule: "shell", Action: "rm", Pattern: EscapePattern(res)})
		if _, ok, _ := b.CheckAction("default", "shell", "rm", res); !ok {
			t.Errorf("%q approved exactly is not covered", res)
		}
	}
	for _, res := range []string{"rm x", "rm -rf /", `echo a\xb`, `echo a*b`, "plain2", ""} {
		if _, ok, _ := b.CheckAction("default", "shell", "rm", res); ok {
			t.Errorf("%q is covered by an exact approval of another command", res)
		}
	}
	if _, ok, _ := b.CheckAction("default", "shell", "rmdir", "plain"); ok {
		t.Error("another action is covered")
	}
	if _, ok, _ := b.Check("default", "shell", "rm", "plain"); ok {
		t.Error("an action token counts as a tool's")
	}
	if _, err := b.Mint(Request{Kind: KindAlways, Principal: "default", Capsule: "shell", Action: "a\x00b"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("an action with a control character: %v", err)
	}
	if _, err := b.Mint(Request{Kind: KindAlways, Principal: "default", Capsule: "shell", Tool: "t", Action: "a"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a tool and an action: %v", err)
	}
}
