//go:build unix

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An installed capsule's directory and files are checked before anything is
// read: each case below is a capsule an attacker (or a clumsy operator) left
// in capsules/. Boot must return (a FIFO would hang it, /dev/zero would
// exhaust memory), the good capsule must load, and each bad one must be
// listed as failed with the reason.
func TestHostileInstallsAreRefused(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	ws := f.rt.opts.Host.Workspace
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.install("good", contextCapsule("good", "fine"))

	fifo := f.install("fifo", map[string]string{"Capsule.toml": contextCapsule("fifo", "")["Capsule.toml"]})
	if err := syscall.Mkfifo(filepath.Join(fifo, "notes.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := f.install("zero", map[string]string{"Capsule.toml": contextCapsule("zero", "")["Capsule.toml"]})
	if err := os.Symlink("/dev/zero", filepath.Join(zero, "notes.md")); err != nil {
		t.Fatal(err)
	}
	out := f.install("outlink", map[string]string{"Capsule.toml": contextCapsule("outlink", "")["Capsule.toml"]})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(out, "notes.md")); err != nil {
		t.Fatal(err)
	}
	f.install("huge", contextCapsule("huge", strings.Repeat("x", 300<<10)))
	// A manifest that is itself a FIFO or a link out.
	fifoManifest := filepath.Join(f.capsules, "fifo-manifest")
	if err := os.Mkdir(fifoManifest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifoManifest, "Capsule.toml"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A capsule directory that is a symlink into the workspace.
	inWS := filepath.Join(ws, "agent-written")
	for name, text := range contextCapsule("inws", "planted by an agent") {
		if err := os.MkdirAll(inWS, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inWS, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(inWS, filepath.Join(f.capsules, "inws")); err != nil {
		t.Fatal(err)
	}
	// Dangling and looping links in capsules/.
	if err := os.Symlink(filepath.Join(outside, "gone"), filepath.Join(f.capsules, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-b", filepath.Join(f.capsules, "loop-a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a", filepath.Join(f.capsules, "loop-b")); err != nil {
		t.Fatal(err)
	}

	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.status("good"); s.State != "ready" {
		t.Fatalf("good: %+v", s)
	}
	for _, tc := range []struct{ id, want string }{
		{"fifo", "not a regular file"},
		{"zero", "escapes"},
		{"outlink", "escapes"},
		{"huge", "larger than"},
		{"fifo-manifest", "not a regular file"},
		{"inws", "inside the workspace"},
		{"dangling", "dangling symlink"},
		{"loop-a", "symlink loop"},
		{"loop-b", "symlink loop"},
	} {
		s := f.status(tc.id)
		if s.State == "ready" || !strings.Contains(s.Error, tc.want) {
			t.Errorf("%s: state %s, error %q; want failed with %q", tc.id, s.State, s.Error, tc.want)
		}
	}
}
