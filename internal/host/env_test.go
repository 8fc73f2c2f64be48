package host

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

const onboarderCapsule = `
[package]
name = "onboarder"
version = "0.1.0"
[env]
TOKEN = { type = "secret", request = "Your token" }
REGION = { type = "select", enum_values = ["eu", "us"] }
GREETING = { type = "text", default = "hello" }
`

func configOf(c *Capsule, principal, key string) (string, bool) {
	call, _ := c.Begin(context.Background(), principal)
	defer call.End()
	return call.Config(key)
}

// A principal's own value comes first; the capsule-wide value (here
// GREETING = "hi", the operator's) is everyone else's fallback.
func TestEnvPerPrincipalWithASharedFallback(t *testing.T) {
	f, _, _ := elicitFixture(t, time.Minute)
	c := f.capsule(t, onboarderCapsule)
	if err := f.deps.Store.SetPrincipalEnv("alice", "onboarder", "GREETING", false, []byte("hej")); err != nil {
		t.Fatal(err)
	}
	if err := f.deps.Store.SetPrincipalEnv("alice", "onboarder", "TOKEN", true, []byte("tok-alice")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ principal, key, want string }{
		{"alice", "GREETING", "hej"},
		{"bob", "GREETING", "hi"},
		{"alice", "TOKEN", "tok-alice"},
	} {
		if v, ok := configOf(c, tc.principal, tc.key); !ok || v != tc.want {
			t.Errorf("%s's %s = %q, %v; want %q", tc.principal, tc.key, v, ok, tc.want)
		}
	}
	// An undeclared key has no per-principal value, whatever the store holds.
	if err := f.deps.Store.SetPrincipalEnv("alice", "onboarder", "OTHER", false, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if v, ok := configOf(c, "alice", "OTHER"); ok {
		t.Errorf("an undeclared key read %q", v)
	}
}

// A required value nobody set is the onboarding request: published for
// the principal, asked through its frontend, asked again when the answer
// is refused (empty), and kept as the principal's own, so it is asked once.
func TestAMissingRequiredValueIsAskedOfThePrincipal(t *testing.T) {
	f, _, logs := elicitFixture(t, time.Minute)
	c := f.capsule(t, onboarderCapsule)
	alice := listenElicit(t, f, "alice")
	onboarding := frontendHears(t, f, "alice", ipc.OnboardingTopic, func(e *ipc.Envelope) (r ipc.OnboardingRequired, ok bool) {
		return r, e.SourceID == ipc.KernelSourceID && r.UnmarshalJSON(ipc.GuestBytes(e.Payload)) == nil
	})

	got := make(chan string, 1)
	go func() { v, _ := configOf(c, "alice", "TOKEN"); got <- v }()
	select {
	case r := <-onboarding:
		if r.CapsuleID != "onboarder" || len(r.Fields) != 1 || r.Fields[0].Key != "TOKEN" || r.Fields[0].FieldType.Kind != ipc.FieldSecret {
			t.Errorf("onboarding request %+v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no onboarding request published")
	}
	q := alice.next()
	if q.CapsuleID != "onboarder" || q.Field.Key != "TOKEN" || q.Field.FieldType.Kind != ipc.FieldSecret || q.Field.Prompt != "Your token" {
		t.Fatalf("question %+v", q)
	}
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID, Value: str("")}); err != nil {
		t.Fatal(err)
	}
	q = alice.next()
	if q.Field.Description == nil || !strings.Contains(*q.Field.Description, "the value is empty; try again") {
		t.Fatalf("asked again without saying why: %+v", q.Field)
	}
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID, Value: str("tok-typed")}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "tok-typed" {
		t.Fatalf("Config(TOKEN) = %q after the answer", v)
	}
	if v, ok, err := f.deps.Store.PrincipalSecrets("alice", "onboarder").Get("TOKEN"); err != nil || !ok || string(v) != "tok-typed" {
		t.Fatalf("the answer was not kept as alice's secret: %q %v %v", v, ok, err)
	}
	if v, ok, _ := f.deps.Store.Secrets("onboarder").Get("TOKEN"); ok {
		t.Fatalf("alice's answer became everyone's: %q", v)
	}
	// Kept: read again without a question (one would wait a minute).
	if v, _ := configOf(c, "alice", "TOKEN"); v != "tok-typed" {
		t.Fatalf("second read %q", v)
	}
	if strings.Contains(logs.String(), "tok-typed") {
		t.Error("the secret reached the log")
	}

	// Two calls needing the same value at once: one question.
	var wg sync.WaitGroup
	vals := make([]string, 2)
	for i := range vals {
		wg.Add(1)
		go func() { defer wg.Done(); vals[i], _ = configOf(c, "alice", "REGION") }()
	}
	q = alice.next()
	if q.Field.FieldType.Kind != ipc.FieldEnum || strings.Join(q.Field.FieldType.Options, ",") != "eu,us" {
		t.Fatalf("REGION asked as %+v", q.Field)
	}
	if err := alice.send(testFrontend, "alice", q.RequestID, ipc.ElicitResponse{RequestID: q.RequestID, Value: str("eu")}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if vals[0] != "eu" || vals[1] != "eu" {
		t.Fatalf("REGION = %q", vals)
	}
}

// Nobody listening for bob (headless): the value is refused at once, and
// the log names the key and the command that sets it.
func TestAMissingValueWithNobodyToAskIsRefusedNamingTheKey(t *testing.T) {
	f, _, logs := elicitFixture(t, time.Minute)
	c := f.capsule(t, onboarderCapsule)
	if v, ok := configOf(c, "bob", "TOKEN"); ok || v != "" {
		t.Fatalf("bob's TOKEN = %q, %v with nobody to ask", v, ok)
	}
	// "no frontend is listening" is the refusal made before any wait (a
	// wait that ran out says "no answer within").
	for _, want := range []string{"key=TOKEN", "no frontend is listening for bob", "astrid capsule env set --principal bob onboarder TOKEN"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// BenchmarkConfig is one Config call of a declared key that has a
// capsule-wide value (the principal's own is looked up first, in the
// store) against an undeclared key (no lookup).
func BenchmarkConfig(b *testing.B) {
	st, err := store.Open(filepath.Join(b.TempDir(), "state.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, diags := manifest.Parse([]byte(onboarderCapsule), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		b.Fatal(err)
	}
	c, err := NewCapsule(Deps{Store: st, Cancels: NewCancels(), Logger: slog.New(slog.DiscardHandler)}, m, b.TempDir(), map[string]string{"GREETING": "hi", "UNDECLARED": "x"})
	if err != nil {
		b.Fatal(err)
	}
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	for _, key := range []string{"GREETING", "UNDECLARED"} {
		b.Run(key, func(b *testing.B) {
			for b.Loop() {
				if v, _ := call.Config(key); v == "" {
					b.Fatal("no value")
				}
			}
		})
	}
}
