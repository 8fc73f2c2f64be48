package store

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestApprovalsRoundTripAndSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Approvals().Get("notes"); ok || err != nil {
		t.Fatalf("Get before Set = %v, %v; want a miss", ok, err)
	}
	if err := s.Approvals().Set("notes", []byte(`{"grants":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, ok, err := s.Approvals().Get("notes")
	if err != nil || !ok || string(v) != `{"grants":[]}` {
		t.Fatalf("Get after reopen = %q, %v, %v", v, ok, err)
	}
	if err := s.Approvals().Delete("notes"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Approvals().Get("notes"); ok {
		t.Error("the record survived Delete")
	}
	if err := s.Approvals().Delete("notes"); err != nil {
		t.Errorf("deleting a missing record: %v", err)
	}
}

func TestApprovalsRefuseBadIDsAndEmptyRecords(t *testing.T) {
	s := openTemp(t)
	for _, id := range []string{"", "..", "../fs", "a/b", "Notes", "a\x00b"} {
		if err := s.Approvals().Set(id, []byte("x")); !errors.Is(err, ErrInvalid) {
			t.Errorf("Set(%q) = %v, want ErrInvalid", id, err)
		}
		if _, _, err := s.Approvals().Get(id); !errors.Is(err, ErrInvalid) {
			t.Errorf("Get(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if err := s.Approvals().Set("notes", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Set(empty) = %v, want ErrInvalid", err)
	}
}

// Purge deletes the capsule's KV for every principal, its config and its
// secrets, and nothing of any other capsule (not even one whose name it
// prefixes).
func TestPurgeDeletesOnlyThatCapsule(t *testing.T) {
	s := openTemp(t)
	for _, c := range []string{"notes", "notes-2"} {
		mustSet(t, s.KV("alice", c), "a", "1")
		mustSet(t, s.KV("bob", c), "b", "2")
		mustSet(t, s.KV("alice", c), "~pending", "v")
		mustSet(t, s.Config(c), "URL", "u")
		if err := s.Secrets(c).Set("KEY", []byte("k")); err != nil {
			t.Fatal(err)
		}
		if err := s.Approvals().Set(c, []byte("r")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Purge("notes"); err != nil {
		t.Fatal(err)
	}
	count := func(c string) (n int) {
		for _, p := range []string{"alice", "bob"} {
			keys, err := s.KV(p, c).List("")
			if err != nil {
				t.Fatal(err)
			}
			n += len(keys)
		}
		cfg, _ := s.Config(c).List("")
		sec, _ := s.Secrets(c).List()
		return n + len(cfg) + len(sec)
	}
	if n := count("notes"); n != 0 {
		t.Errorf("%d keys of notes survived the purge", n)
	}
	if n := count("notes-2"); n != 5 {
		t.Errorf("notes-2 has %d keys after purging notes, want 5", n)
	}
	if _, ok, _ := s.Approvals().Get("notes"); !ok {
		t.Error("Purge deleted the approval record, which is the installer's to delete")
	}
	if err := s.Purge("../notes"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Purge(../notes) = %v, want ErrInvalid", err)
	}
	if err := s.Purge("never-there"); err != nil {
		t.Errorf("Purge of a capsule with no state: %v", err)
	}
}
