package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/manifest"
)

func TestReloadReadsChangedFiles(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	dir := f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"first"`) {
		t.Fatalf("before reload: %s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := f.subscribe("astrid.v1.capsules_loaded")
	if err := f.rt.Reload(context.Background(), "notes"); err != nil {
		t.Fatal(err)
	}
	if ev := nextLoaded(t, loaded); ev.state("notes") != "ready" {
		t.Errorf("capsules_loaded after reload: %+v", ev)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"second"`) {
		t.Errorf("after reload: %s", got)
	}
}

func TestReloadRefusesWiderManifest(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	wider := contextCapsule("notes", "evil", "[capabilities]", `net = ["*"]`)
	f.edit("notes", wider)
	err := f.rt.Reload(context.Background(), "notes")
	if !errors.Is(err, ErrWidened) || !strings.Contains(err.Error(), `asks for net = ["*"], which was not approved at install`) || !strings.Contains(err.Error(), "astrid capsule install <dir>` again") {
		t.Fatalf("Reload = %v, want a widening refusal telling to install again", err)
	}
	s := f.status("notes")
	if s.State != "ready" || !strings.Contains(s.Error, "refused") {
		t.Errorf("status after refusal = %+v, want still ready with the refusal", s)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"first"`) {
		t.Errorf("the running capsule changed: %s", got)
	}
}

func TestReloadRefusesBrokenOrRenamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"broken", map[string]string{"Capsule.toml": "[package]\nname = 1\n"}, "refused"},
		{"renamed", contextCapsule("other", "x"), "renamed to other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, Engines{})
			f.install("notes", contextCapsule("notes", "first"))
			if err := f.rt.Boot(context.Background()); err != nil {
				t.Fatal(err)
			}
			f.edit("notes", tc.files)
			if err := f.rt.Reload(context.Background(), "notes"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reload = %v, want %q", err, tc.want)
			}
			if s := f.status("notes"); s.State != "ready" {
				t.Errorf("status = %+v, want still ready", s)
			}
		})
	}
}

func TestReloadOfFailedCapsuleLoadsIt(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	// The manifest check only wants the command file to exist; that it is
	// not TOML fails the static engine's load.
	f.install("notes", map[string]string{"Capsule.toml": manifestText("notes", "[[command]]\nname = \"c\"\nfile = \"c.toml\""), "c.toml": "= broken"})
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.status("notes"); s.State != "failed" || !strings.Contains(s.Error, "c.toml") {
		t.Fatalf("status = %+v, want failed on c.toml", s)
	}
	f.install("notes", map[string]string{"c.toml": "prompt = \"ok\""})
	if err := f.rt.Reload(context.Background(), "notes"); err != nil {
		t.Fatal(err)
	}
	if s := f.status("notes"); s.State != "ready" || s.Error != "" {
		t.Errorf("status = %+v, want ready", s)
	}
}

func TestWatcherScan(t *testing.T) {
	root := t.TempDir()
	mk := func(dir, body string) {
		p := filepath.Join(root, dir)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, manifest.FileName), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("a", "one")
	w := newWatcher(root, 500*time.Millisecond)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type result struct{ changed, removed []string }
	scan := func(ms int) result {
		c, r := w.scan(at(ms))
		for i := range c {
			c[i] = filepath.Base(c[i])
		}
		for i := range r {
			r[i] = filepath.Base(r[i])
		}
		slices.Sort(c)
		return result{c, r}
	}
	check := func(step string, got result, changed, removed []string) {
		t.Helper()
		if !slices.Equal(got.changed, changed) || !slices.Equal(got.removed, removed) {
			t.Errorf("%s: changed %v removed %v, want %v %v", step, got.changed, got.removed, changed, removed)
		}
	}
	check("baseline", scan(0), nil, nil)
	check("quiet", scan(1000), nil, nil)

	mk("a", "two, longer") // size changes, so the fingerprint does
	check("change seen", scan(1100), nil, nil)
	check("still settling", scan(1500), nil, nil)
	mk("a", "three, longer still") // a change resets the debounce
	check("changed again", scan(1550), nil, nil)
	check("not yet settled", scan(2000), nil, nil)
	check("settled", scan(2100), []string{"a"}, nil)
	check("acted once", scan(3000), nil, nil)

	mk("b", "new")
	check("new dir seen", scan(3100), nil, nil)
	check("new dir settled", scan(3700), []string{"b"}, nil)

	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	check("removal seen", scan(3800), nil, nil)
	check("removal settled", scan(4400), nil, []string{"a"})

	// Ignored directories change nothing.
	if err := os.MkdirAll(filepath.Join(root, "b", "node_modules", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "b", "node_modules", "x", "f.js"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("node_modules", scan(5000), nil, nil)
	check("node_modules later", scan(6000), nil, nil)
}

func TestWatcherReloadsAndRefuses(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	loaded := f.subscribe("astrid.v1.capsules_loaded")
	if err := f.rt.Watch(WatchOptions{Interval: 10 * time.Millisecond, Debounce: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Watch(WatchOptions{}); err == nil {
		t.Error("a second watcher started")
	}

	// A changed file reloads the capsule.
	f.install("notes", map[string]string{"notes.md": "second, longer"})
	if ev := nextLoaded(t, loaded); ev.state("notes") != "ready" {
		t.Fatalf("after the change: %+v", ev)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"second, longer"`) {
		t.Errorf("after the watcher's reload: %s", got)
	}

	// A widened manifest is refused; the capsule keeps running.
	f.edit("notes", contextCapsule("notes", "third", "[publish]", `"x.y" = "opaque"`))
	if ev := nextLoaded(t, loaded); ev.state("notes") != "ready" {
		t.Fatalf("after the widening: %+v", ev)
	}
	if s := f.status("notes"); !strings.Contains(s.Error, `asks for [publish] "x.y", which was not approved`) {
		t.Errorf("status = %+v, want the refusal", s)
	}
	if got := f.askContext("notes"); !strings.Contains(got, "second, longer") {
		t.Errorf("the refused version is being served: %s", got)
	}

	// A new capsule directory is loaded; a removed one unloaded.
	f.install("more", contextCapsule("more", "m"))
	if ev := nextLoaded(t, loaded); ev.state("more") != "ready" {
		t.Fatalf("after adding more: %+v", ev)
	}
	if err := os.RemoveAll(filepath.Join(f.capsules, "more")); err != nil {
		t.Fatal(err)
	}
	if ev := nextLoaded(t, loaded); ev.state("more") != "" {
		t.Fatalf("after removing more: %+v", ev)
	}
}
