package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// The trusted base of a grant stays open across calls; these tests hold the
// cache to what opening it per call gave.

func TestCachedHomeRemovedAndRecreated(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "dana")
	defer call.End()
	if err := call.FSWrite("home://a.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if !c.roots.has(filepath.Join(f.homes, "dana")) {
		t.Fatal("the home's root is not cached after a write")
	}
	// The directory the cached root holds goes away and another takes its
	// path: the next call must act on the new one, not the removed one.
	home := filepath.Join(f.homes, "dana")
	if err := os.RemoveAll(home); err != nil {
		t.Fatal(err)
	}
	if _, err := call.FSRead("home://a.txt"); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Fatalf("read after the home was removed: %v, want not found", err)
	}
	if err := call.FSWrite("home://b.txt", []byte("two")); err != nil {
		t.Fatalf("write after the home was removed: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(home, "b.txt")); err != nil || string(data) != "two" {
		t.Fatalf("the write did not land in the recreated home: %q, %v", data, err)
	}
}

func TestCachedRootMovedAway(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "erin")
	defer call.End()
	if err := call.FSWrite("home://notes.txt", []byte("old")); err != nil {
		t.Fatal(err)
	}
	// The directory the cached root holds still exists, under another name,
	// and a new one takes its path. The cache follows the directory it
	// opened (as an open file does) until a lookup misses there; a miss
	// re-opens the path, so what exists only in the new directory is found.
	home := filepath.Join(f.homes, "erin")
	if err := os.Rename(home, home+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "fresh.txt"), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := call.FSRead("home://fresh.txt"); err != nil || string(data) != "new" {
		t.Fatalf("read = %q, %v; want the new directory's file", data, err)
	}
	if data, err := call.FSRead("home://notes.txt"); err == nil {
		t.Fatalf("read %q from the directory that moved away, after the cache was refreshed", data)
	}
}

func TestCallsAfterCloseOpenTheirOwnRoot(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	call, _ := c.Begin(context.Background(), "fred")
	defer call.End()
	if err := call.FSWrite("home://x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c.roots.has(filepath.Join(f.homes, "fred")) {
		t.Fatal("a root is still cached after Close")
	}
	if data, err := call.FSRead("home://x"); err != nil || string(data) != "1" {
		t.Fatalf("read after Close = %q, %v", data, err)
	}
	if c.roots.has(filepath.Join(f.homes, "fred")) {
		t.Fatal("a root was cached after Close")
	}
}

func TestRootCacheIsBounded(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	defer c.Close()
	for i := range maxCachedRoots + 5 {
		call, _ := c.Begin(context.Background(), "p"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if err := call.FSWrite("home://f", []byte("x")); err != nil {
			t.Fatal(err)
		}
		call.End()
	}
	c.roots.mu.Lock()
	n := len(c.roots.open)
	c.roots.mu.Unlock()
	if n != maxCachedRoots {
		t.Fatalf("%d roots cached, want the bound %d", n, maxCachedRoots)
	}
}
