package publisher

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/store"
)

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A generated key survives reopening, is sealed (its seed is not in the
// database file in the clear) and is never replaced.
func TestGenerateSealsAndKeepsTheKey(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	pub, err := Generate(st, DefaultKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(st, DefaultKey); !errors.Is(err, ErrExists) {
		t.Fatalf("second generate: %v, want ErrExists", err)
	}
	priv, err := Load(st, DefaultKey)
	if err != nil || !priv.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatalf("Load: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, priv.Seed()) {
		t.Fatal("the seed is in the database file in the clear")
	}
	st = openStore(t, dir)
	defer st.Close()
	again, err := Load(st, DefaultKey)
	if err != nil || !again.Equal(priv) {
		t.Fatalf("after reopen: %v", err)
	}
	if _, err := Load(st, "other"); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Load(other): %v", err)
	}
	if names, err := Keys(st); err != nil || strings.Join(names, ",") != DefaultKey {
		t.Fatalf("Keys: %v, %v", names, err)
	}
}

func TestTrustStore(t *testing.T) {
	st := openStore(t, t.TempDir())
	defer st.Close()
	tr := NewTrust(st)
	alice, _, _ := ed25519.GenerateKey(rand.Reader)
	bob, _, _ := ed25519.GenerateKey(rand.Reader)
	if tr.Lookup(alice) != "" {
		t.Fatal("an empty trust store trusts alice")
	}
	if err := tr.Add("alice", alice); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  ed25519.PublicKey
		want string
	}{
		{"alice", bob, "already exists"},
		{"alias", alice, "already trusted as alice"},
		{"Bad Name", bob, "lowercase"},
		{"", bob, "1 to 64"},
		{"-x", bob, "lowercase"},
	} {
		if err := tr.Add(tc.name, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%q): %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := tr.Add("bob", bob); err != nil {
		t.Fatal(err)
	}
	if tr.Lookup(alice) != "alice" || tr.Lookup(bob) != "bob" {
		t.Fatal("Lookup does not find the trusted keys")
	}
	all, err := tr.List()
	if err != nil || len(all) != 2 || all[0].Name != "alice" || all[1].Name != "bob" {
		t.Fatalf("List: %v, %v", all, err)
	}
	if err := tr.Remove("alice"); err != nil {
		t.Fatal(err)
	}
	if tr.Lookup(alice) != "" {
		t.Fatal("a removed key is still trusted")
	}
	if err := tr.Remove("alice"); err == nil {
		t.Fatal("removing twice succeeded")
	}
	// A publisher key is not something a capsule's config can name.
	if keys, _ := st.Config("alice").List(""); len(keys) != 0 {
		t.Fatal("trust leaked into a capsule's config")
	}
}
