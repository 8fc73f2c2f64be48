package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buffered writes are visible at once, to Get and to List, and reach the
// file on Flush and on Close.
func TestBufferedWritesAreReadableAndDurableOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	// A window longer than the test, so that only List and Close flush.
	s, err := Open(path, Options{SyncInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.KV("default", "router")
	mustSet(t, kv, "pending/a", "read_file")
	mustSet(t, kv, "pending/b", "write_file")
	mustSet(t, kv, "keep", "1")
	if err := kv.Delete("pending/a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := kv.Get("pending/a"); ok {
		t.Error("a deleted buffered key is still visible")
	}
	if v, ok, _ := kv.Get("pending/b"); !ok || string(v) != "write_file" {
		t.Errorf("buffered value not visible: %q %v", v, ok)
	}
	// Nothing is in the file yet…
	inFile := func(key string) bool {
		var found bool
		_ = s.db.View(func(tx *bolt.Tx) error {
			b := newNamespace(s, "", nil, "kv", "default", "router").bucket(tx)
			found = b != nil && b.Get([]byte(key)) != nil
			return nil
		})
		return found
	}
	if inFile("keep") {
		t.Fatal("a write reached the file before the group commit; the test cannot tell buffering from not")
	}
	// …but List sees buffered writes (it flushes first).
	keys, err := kv.List("")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"keep", "pending/b"}) {
		t.Errorf("List = %v", keys)
	}
	if !inFile("keep") || inFile("pending/a") {
		t.Error("Flush did not write the batch exactly")
	}
	mustSet(t, kv, "late", "x")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, ok, _ := s2.KV("default", "router").Get("late"); !ok || string(v) != "x" {
		t.Errorf("a write buffered at Close was lost: %q %v", v, ok)
	}
}

// With a negative SyncInterval every write goes to the file before it
// returns.
func TestSynchronousMode(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSet(t, s.KV("default", "x"), "k", "v")
	var found bool
	_ = s.db.View(func(tx *bolt.Tx) error {
		b := newNamespace(s, "", nil, "kv", "default", "x").bucket(tx)
		found = b != nil && b.Get([]byte("k")) != nil
		return nil
	})
	if !found {
		t.Error("synchronous write not in the file")
	}
}
