package kernel

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/testutil"
)

// Issue 19.6 on a real kernel: a capsule whose manifest is edited on disk
// to add fs_read = ["/"] is refused by the watcher's reload while the
// approved instance keeps serving, and refused again at the next boot.
// Before, the edit loaded on the next run without a question.
func TestAnEditedManifestIsRefusedOnReloadAndAtBoot(t *testing.T) {
	home := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(config.Layout(home).Capsules, "notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := "[package]\nname = \"notes\"\nversion = \"0.1.0\"\n[[context_file]]\nname = \"notes\"\nfile = \"notes.md\"\n"
	for name, body := range map[string]string{"Capsule.toml": text, "notes.md": "remember"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	approveInstalled(t, home, "notes")
	boot := func(watch bool) *Kernel {
		k, err := Boot(context.Background(), Options{Home: home, Workspace: ws, Config: config.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Builtins: Builtins(), Frontends: testFrontends(), WatchCapsules: watch})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	status := func(k *Kernel) runtime.Status {
		for _, s := range k.Runtime.List() {
			if s.ID == "notes" {
				return s
			}
		}
		return runtime.Status{}
	}
	k := boot(true)
	defer func() { k.Close() }()
	if s := status(k); s.State != "ready" {
		t.Fatalf("approved notes = %+v", s)
	}
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(text+"[capabilities]\nfs_read = [\"/\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const refusal = `capsule notes asks for fs_read = ["/"], which was not approved at install`
	testutil.WaitForValue(t, time.Minute, "the watcher to refuse the edit", func() (any, bool) {
		s := status(k)
		return s, strings.Contains(s.Error, refusal)
	})
	if s := status(k); s.State != "ready" || !strings.Contains(s.Error, "the running capsule is kept") {
		t.Errorf("after the refused reload: %+v, want the approved instance still ready", s)
	}
	if c, ok := k.Registry.Get("notes"); !ok || len(c.Manifest().Capabilities.FSRead) != 0 {
		t.Errorf("the registry does not hold the approved instance: %v", ok)
	}
	k.Close()

	k = boot(false)
	if s := status(k); s.State != "failed" || !strings.Contains(s.Error, refusal) {
		t.Errorf("at the next boot: %+v, want refused", s)
	}
}
