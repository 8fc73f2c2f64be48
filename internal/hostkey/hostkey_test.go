package hostkey

import (
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestKeyIsCreatedOnceAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	k1, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equal(k2) {
		t.Fatal("a second Load made a new key")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStore(t, dir)
	defer st.Close()
	k3, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equal(k3) {
		t.Fatal("the key did not survive reopening the store")
	}
	sig := ed25519.Sign(k3, []byte("x"))
	if !ed25519.Verify(k1.Public().(ed25519.PublicKey), []byte("x"), sig) {
		t.Fatal("signature by the reloaded key does not verify")
	}
}

func TestNoCapsuleCanOwnTheKeyNamespace(t *testing.T) {
	if err := manifest.ValidateID(namespace); err == nil {
		t.Fatalf("capsule id %q is valid, so a capsule could be given the host key as configuration", namespace)
	}
}

func TestCorruptSeedIsAnError(t *testing.T) {
	st := openStore(t, t.TempDir())
	defer st.Close()
	if err := st.Secrets(namespace).Set(keyName, []byte("short")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(st); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load of a 5-byte seed: %v, want ErrCorrupt", err)
	}
}

func TestPublicNeverCreatesTheKey(t *testing.T) {
	st := openStore(t, t.TempDir())
	defer st.Close()
	if _, err := Public(st); !errors.Is(err, ErrNone) {
		t.Fatalf("Public of a fresh store: %v, want ErrNone", err)
	}
	if _, err := Public(st); !errors.Is(err, ErrNone) {
		t.Fatal("Public created a key")
	}
	k, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := Public(st)
	if err != nil || !pub.Equal(k.Public()) {
		t.Fatalf("Public = %x, %v; want the key Load made", pub, err)
	}
}
