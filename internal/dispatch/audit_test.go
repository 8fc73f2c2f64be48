package dispatch

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/astrid-go/astrid/internal/audit"
)

// An ACL refusal is recorded once per (capsule, op, topic): a capsule
// retrying a refused publish in a loop adds no entry.
func TestPolicyRefusalsAreAuditedOnce(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	dir := t.TempDir()
	l, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, _ := newTestDispatcher(t, Options{Audit: l})
	register(t, d, CapsuleACL{ID: "mute"}, continueTarget)
	from := Caller{Capsule: "mute", Principal: "alice"}
	for range 50 {
		if _, err := d.Publish(from, "agent.v1.response", []byte(`{}`)); !errors.Is(err, ErrDenied) {
			t.Fatalf("publish: %v", err)
		}
	}
	if _, err := d.Subscribe(from, "tool.v1.execute.result", true); !errors.Is(err, ErrDenied) {
		t.Fatalf("subscribe: %v", err)
	}
	if err := l.Append(context.Background(), audit.Entry{Principal: "alice", Kind: audit.KindNote}); err != nil {
		t.Fatal(err)
	}
	var got []string
	audit.Show(dir, audit.Filter{Principals: []string{"alice"}}, func(r audit.Record) error {
		if r.Entry.Kind == audit.KindPolicyRefused {
			got = append(got, r.Entry.Capsule+" "+r.Entry.Detail["op"]+" "+r.Entry.Subject)
		}
		return nil
	})
	if len(got) != 2 || got[0] != "mute publish agent.v1.response" || got[1] != "mute subscribe tool.v1.execute.result" {
		t.Fatalf("entries %q", got)
	}
}

// Work refused for the principal's CPU budget is recorded naming the
// limit, at most once a second per principal however often it is refused.
func TestQuotaRefusalsAreAuditedNamingTheLimit(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	dir := t.TempDir()
	l, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	over := errors.New("principal alice exceeded its CPU budget of 10ms per second (used 12ms)")
	d, _ := newTestDispatcher(t, Options{Audit: l, Admit: func(p string) error {
		if p == "alice" {
			return over
		}
		return nil
	}})
	register(t, d, CapsuleACL{ID: "front", Publish: []string{"user.v1.prompt"}}, continueTarget)
	for _, p := range []string{"alice", "bob"} {
		for range 50 {
			_, err := d.Publish(Caller{Capsule: "front", Principal: p}, "user.v1.prompt", []byte(`{}`))
			if p == "alice" && !errors.Is(err, ErrNotAdmitted) {
				t.Fatalf("publish as alice: %v", err)
			}
		}
	}
	if err := l.Append(context.Background(), audit.Entry{Principal: "alice", Kind: audit.KindNote}); err != nil {
		t.Fatal(err)
	}
	var got []string
	audit.Show(dir, audit.Filter{}, func(r audit.Record) error {
		if e := r.Entry; e.Kind == audit.KindQuotaRefused {
			got = append(got, e.Principal+" "+e.Capsule+" "+e.Subject+" "+e.Detail["topic"]+" "+e.Detail["reason"])
		}
		return nil
	})
	// Fifty in a row fall in one second, or two when they straddle a
	// second's turn: never more, and none for bob.
	if len(got) < 1 || len(got) > 2 {
		t.Fatalf("quota entries %q, want one a second", got)
	}
	for _, g := range got {
		if g != "alice front cpu_budget user.v1.prompt "+over.Error() {
			t.Fatalf("quota entries %q", got)
		}
	}
}
