package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Rescan does the watcher's work for every installed capsule at once: a
// changed capsule is reloaded, a new directory loaded, a removed one
// unloaded; built-ins are left alone.
func TestRescan(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	gone := f.install("gone", contextCapsule("gone", "x"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.capsules, "notes", "notes.md"), []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.install("fresh", contextCapsule("fresh", "new"))
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.rt.Rescan(context.Background()) {
		if r.Err != nil {
			t.Errorf("%s %s: %v", r.Action, r.ID, r.Err)
		}
		got = append(got, r.Action+" "+r.ID)
	}
	slices.Sort(got)
	if want := []string{"loaded fresh", "reloaded notes", "unloaded gone"}; !slices.Equal(got, want) {
		t.Fatalf("Rescan did %v, want %v", got, want)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"second"`) {
		t.Errorf("notes after the rescan: %s", got)
	}
	if s := f.status("fresh"); s.State != "ready" {
		t.Errorf("fresh after the rescan: %+v", s)
	}
	for _, s := range f.rt.List() {
		if s.ID == "gone" {
			t.Errorf("gone is still listed: %+v", s)
		}
	}
}

// A change Rescan handled is not handled again by the watcher (settle); a
// change made after it still is.
func TestWatcherSettle(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	dir := f.install("notes", contextCapsule("notes", "first"))
	w := newWatcher(f.capsules, 500*time.Millisecond)
	t0 := time.Unix(1000, 0)
	w.scan(t0)
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("second, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.settle(t0.Add(100 * time.Millisecond))
	if changed, removed := w.scan(t0.Add(5 * time.Second)); len(changed)+len(removed) != 0 {
		t.Fatalf("after settle the watcher still acts: changed %v removed %v", changed, removed)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("third, longer still"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.scan(t0.Add(6 * time.Second))
	if changed, _ := w.scan(t0.Add(7 * time.Second)); len(changed) != 1 || changed[0] != dir {
		t.Fatalf("a change after settle: changed %v, want %s", changed, dir)
	}
}

// LoadInstalled does the watcher's work for one capsule at once and says
// what came of it: a new capsule is loaded, a changed one reloaded, a
// removed one unloaded, an unknown name refused; a built-in is not its to
// touch.
func TestLoadInstalled(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fresh := f.install("fresh", contextCapsule("fresh", "new"))
	if s, err := f.rt.LoadInstalled(ctx, "fresh"); err != nil || s.State != "ready" || s.Error != "" {
		t.Fatalf("new capsule: %+v, %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(f.capsules, "notes", "notes.md"), []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := f.rt.LoadInstalled(ctx, "notes"); err != nil || s.State != "ready" {
		t.Fatalf("changed capsule: %+v, %v", s, err)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"second"`) {
		t.Errorf("notes after LoadInstalled: %s", got)
	}
	if err := os.RemoveAll(fresh); err != nil {
		t.Fatal(err)
	}
	if s, err := f.rt.LoadInstalled(ctx, "fresh"); err == nil || s.State != "removed" {
		t.Fatalf("removed capsule: %+v, %v", s, err)
	}
	for _, s := range f.rt.List() {
		if s.ID == "fresh" {
			t.Errorf("fresh is still listed: %+v", s)
		}
	}
	if _, err := f.rt.LoadInstalled(ctx, "nothing"); err == nil || !strings.Contains(err.Error(), "no capsule nothing is installed") {
		t.Errorf("unknown capsule: %v", err)
	}
	if _, err := f.rt.LoadInstalled(ctx, "echo"); err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("built-in: %v", err)
	}
}
