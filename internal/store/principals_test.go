package store

import (
	"errors"
	"slices"
	"testing"
)

// KVPrincipals lists exactly the principals with durable keys of the
// capsule: not those of another capsule, not volatile-only ones, and a bad
// capsule id is refused.
func TestKVPrincipals(t *testing.T) {
	s := openTemp(t)
	mustSet(t, s.KV("bob", "notes"), "k", "v")
	mustSet(t, s.KV("alice", "notes"), "k", "v")
	mustSet(t, s.KV("carol", "other"), "k", "v")
	mustSet(t, s.KV("dave", "notes"), "~volatile", "v")
	got, err := s.KVPrincipals("notes")
	if err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
		t.Fatalf("KVPrincipals(notes) = %v, %v", got, err)
	}
	if got, err := s.KVPrincipals("nobody"); err != nil || len(got) != 0 {
		t.Fatalf("KVPrincipals(nobody) = %v, %v", got, err)
	}
	if _, err := s.KVPrincipals("../x"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a bad capsule id: %v", err)
	}
}
