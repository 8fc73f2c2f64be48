package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/grants"
)

// Issue 19.6: every boot holds an installed capsule to what the operator
// approved. Before, a manifest edited on disk to add fs_read = ["/"] loaded
// on the next run without a question.
func TestBootLoadsOnlyWhatWasApproved(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("good", contextCapsule("good", "fine"))
	f.edit("by-hand", contextCapsule("by-hand", "copied in, never approved"))
	f.install("edited", contextCapsule("edited", "x"))
	f.edit("edited", contextCapsule("edited", "x", "[capabilities]", `fs_read = ["/"]`))
	f.install("narrower", contextCapsule("narrower", "x", "[capabilities]", `fs_read = ["cwd://", "home://"]`))
	f.edit("narrower", contextCapsule("narrower", "x", "[capabilities]", `fs_read = ["cwd://"]`))
	for _, widen := range []struct{ id, extra string }{
		{"net", `net = ["*"]`},
		{"proc", `host_process = ["sh"]`},
		{"plumbing", `tool_middleware = true`},
	} {
		f.install(widen.id, contextCapsule(widen.id, "x"))
		f.edit(widen.id, contextCapsule(widen.id, "x", "[capabilities]", widen.extra))
	}
	// A capsule directory symlinked in by hand, from anywhere: no record.
	elsewhere := filepath.Join(t.TempDir(), "linked")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range contextCapsule("linked", "from elsewhere") {
		if err := os.WriteFile(filepath.Join(elsewhere, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(f.capsules, "linked")); err != nil {
		t.Fatal(err)
	}
	f.install("pub", contextCapsule("pub", "x"))
	f.edit("pub", contextCapsule("pub", "x", "[publish]", `"user.v1.prompt" = "opaque"`))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, state, err string
	}{
		{"good", "ready", ""},
		{"narrower", "ready", ""},
		{"by-hand", "failed", "was never approved"},
		{"linked", "failed", "was never approved"},
		{"edited", "failed", `capsule edited asks for fs_read = ["/"], which was not approved at install; run ` + "`astrid capsule install <dir>` again"},
		{"net", "failed", `asks for net = ["*"]`},
		{"proc", "failed", `asks for host_process = ["sh"]`},
		{"plumbing", "failed", `asks for tool_middleware = true`},
		{"pub", "failed", `asks for [publish] "user.v1.prompt"`},
	} {
		s := f.status(tc.id)
		if s.State != tc.state || !strings.Contains(s.Error, tc.err) || (tc.err == "" && s.Error != "") {
			t.Errorf("%s = %s %q, want %s with %q", tc.id, s.State, s.Error, tc.state, tc.err)
		}
	}
	if got := f.askContext("good"); !strings.Contains(got, "fine") {
		t.Errorf("good does not serve: %s", got)
	}
}

// The watcher's reload of an edited manifest is refused while the old
// instance keeps serving; a capsule copied in by hand while the kernel
// runs is not loaded; approving it (what `astrid capsule approve` records)
// and touching its files loads it.
func TestWatcherHoldsCapsulesToTheirApproval(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "first"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	loaded := f.subscribe("astrid.v1.capsules_loaded")
	if err := f.rt.Watch(WatchOptions{Interval: 10 * time.Millisecond, Debounce: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	f.edit("notes", contextCapsule("notes", "edited to read everything", "[capabilities]", `fs_read = ["/"]`))
	if ev := nextLoaded(t, loaded); ev.state("notes") != "ready" {
		t.Fatalf("after the edit: %+v", ev)
	}
	if s := f.status("notes"); s.State != "ready" || !strings.Contains(s.Error, `asks for fs_read = ["/"], which was not approved at install`) || !strings.Contains(s.Error, "the running capsule is kept") {
		t.Errorf("status = %+v, want still ready with the refusal", s)
	}
	if got := f.askContext("notes"); !strings.Contains(got, `"content":"first"`) {
		t.Errorf("the old instance is not the one serving: %s", got)
	}
	if err := f.rt.Reload(context.Background(), "notes"); !errors.Is(err, grants.ErrWidened) {
		t.Errorf("Reload = %v, want ErrWidened", err)
	}
	nextLoaded(t, loaded) // the refused Reload's

	f.edit("dropped-in", contextCapsule("dropped-in", "by hand"))
	if ev := nextLoaded(t, loaded); ev.state("dropped-in") != "failed" {
		t.Fatalf("after dropping a capsule in: %+v", ev)
	}
	if s := f.status("dropped-in"); !strings.Contains(s.Error, "astrid capsule approve dropped-in") {
		t.Errorf("status = %+v, want the approve hint", s)
	}
	f.install("dropped-in", contextCapsule("dropped-in", "approved now"))
	if ev := nextLoaded(t, loaded); ev.state("dropped-in") != "ready" {
		t.Fatalf("after approving: %+v", ev)
	}
	if got := f.askContext("dropped-in"); !strings.Contains(got, "approved now") {
		t.Errorf("dropped-in after approval: %s", got)
	}
}

// Hidden entries of the capsules directory are the installer's staging and
// removal directories, never capsules: a crash mid-install leaves one
// behind, holding a manifest, and it must neither load nor count as a
// rival for its capsule's name.
func TestHiddenDirectoriesAreNotCapsules(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("notes", contextCapsule("notes", "installed"))
	f.install(".install-notes-123", contextCapsule("notes", "half-copied"))
	f.install(".remove-old-456", contextCapsule("old", "being removed"))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range f.rt.List() {
		if strings.HasPrefix(filepath.Base(s.Dir), ".") || s.ID == "old" {
			t.Errorf("a hidden directory was discovered: %+v", s)
		}
	}
	if s := f.status("notes"); s.State != "ready" || s.Error != "" {
		t.Errorf("notes = %+v, want ready", s)
	}
	if _, err := os.Stat(filepath.Join(f.capsules, ".install-notes-123")); err != nil {
		t.Errorf("the runtime touched the staging directory: %v", err)
	}
}
