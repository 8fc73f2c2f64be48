package store

import (
	"errors"
	"slices"
	"testing"
)

// Purging a principal deletes its keys in every capsule's store, volatile
// ones included, and nothing of another principal's or of the capsules'
// shared config; a name that is not a principal is refused.
func TestPurgePrincipalDeletesOnlyThatPrincipal(t *testing.T) {
	s := openTemp(t)
	for _, c := range []string{"notes", "session"} {
		mustSet(t, s.KV("alice", c), "a", "1")
		mustSet(t, s.KV("alice", c), "~pending", "v")
		mustSet(t, s.KV("alice-2", c), "a", "1")
		mustSet(t, s.KV("bob", c), "b", "2")
		mustSet(t, s.Config(c), "URL", "u")
	}
	got, err := s.PurgePrincipal("alice")
	if err != nil || !slices.Equal(got, []string{"notes", "session"}) {
		t.Fatalf("purge: %v %v", got, err)
	}
	for _, c := range []string{"notes", "session"} {
		for _, k := range []string{"a", "~pending"} {
			if _, ok, err := s.KV("alice", c).Get(k); ok || err != nil {
				t.Errorf("alice's %s/%s survived the purge (%v)", c, k, err)
			}
		}
		for _, kv := range []*KV{s.KV("alice-2", c), s.KV("bob", c), s.Config(c)} {
			if keys, err := kv.List(""); err != nil || len(keys) != 1 {
				t.Errorf("%s lost keys: %v %v", c, keys, err)
			}
		}
	}
	if got, err := s.PurgePrincipal("alice"); err != nil || len(got) != 0 {
		t.Fatalf("purge again: %v %v", got, err)
	}
	for _, bad := range []string{"", "../bob", "a/b", "bob\x00"} {
		if _, err := s.PurgePrincipal(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("purge %q: %v, want ErrInvalid", bad, err)
		}
	}
}
