package kernel

import (
	"crypto/ed25519"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/store"
)

// A token minted, presented once expired and revoked leaves its three
// entries in the principal's signed chain, which verifies.
func TestTokenEventsReachTheAuditChain(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := hostkey.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	chains := filepath.Join(dir, "audit")
	l, err := audit.Open(audit.Options{Dir: chains, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	book := caps.NewBook(st, key, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	recordTokenEvents(book, l, slog.New(slog.DiscardHandler))
	tok, err := book.Mint(caps.Request{Kind: caps.KindGrant, Principal: "alice", Capsule: "fs", Tool: "write_file", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, ok, _ := book.Check("alice", "fs", "write_file", ""); ok {
		t.Fatal("an expired token was honoured")
	}
	if _, err := book.Revoke("alice", tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil { // every queued entry written
		t.Fatal(err)
	}
	var kinds []audit.Kind
	if err := audit.Show(chains, audit.Filter{Principals: []string{"alice"}}, func(r audit.Record) error {
		if r.Entry.Subject == tok.ID {
			kinds = append(kinds, r.Entry.Kind)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []audit.Kind{audit.KindTokenIssued, audit.KindTokenIgnored, audit.KindTokenRevoked} {
		if !slices.Contains(kinds, want) {
			t.Errorf("the chain of alice holds %v for token %s, missing %s", kinds, tok.ID, want)
		}
	}
	if err := audit.Verify(chains, key.Public().(ed25519.PublicKey), func(audit.Summary) {}); err != nil {
		t.Fatalf("the chain does not verify: %v", err)
	}
}
