package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// notesVersion is notesSource at another version.
func notesVersion(t *testing.T, version string, extra ...string) string {
	t.Helper()
	dir := notesSource(t, "notes", extra...)
	p := filepath.Join(dir, "Capsule.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `version = "0.1.0"`, `version = "`+version+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// capsule update: up to date; a newer version within the approved grants
// installs without a question; one whose grants widen is asked about
// (refused without a terminal, installed with --yes); an older one is
// refused.
func TestCapsuleUpdate(t *testing.T) {
	host, _ := ociRegistry(t)
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	work := t.TempDir()
	tag := "oci://" + host + "/u/notes:latest"
	publish := func(src string) {
		t.Helper()
		archive := packCLI(t, src, filepath.Join(work, filepath.Base(src)+".capsule"))
		if _, errOut, code := runAstrid(t, "", "capsule", "publish", archive, tag); code != 0 {
			t.Fatalf("publish: %s", errOut)
		}
	}
	version := func() string {
		b, _ := os.ReadFile(filepath.Join(home, "capsules", "notes", "Capsule.toml"))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "version") {
				return strings.Trim(strings.TrimPrefix(l, "version = "), `"`)
			}
		}
		return ""
	}
	publish(notesVersion(t, "0.1.0"))
	if _, errOut, code := runAstrid(t, "", "capsule", "install", tag, "--yes", "--allow-unsigned"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "update", "notes"); code != 0 || !strings.Contains(errOut, "up to date") {
		t.Fatalf("update with nothing new: exit %d: %s", code, errOut)
	}

	publish(notesVersion(t, "0.2.0"))
	if _, errOut, code := runAstrid(t, "", "capsule", "update", "--allow-unsigned"); code != 0 || version() != "0.2.0" {
		t.Fatalf("update within the approved grants: exit %d, version %s: %s", code, version(), errOut)
	}

	publish(notesVersion(t, "0.3.0", "[capabilities]\nfs_read = [\"workspace://\"]"))
	if _, errOut, code := runAstrid(t, "", "capsule", "update", "notes", "--allow-unsigned"); code != 1 || !strings.Contains(errOut, "nobody can confirm") || version() != "0.2.0" {
		t.Fatalf("update that widens the grants, without --yes: exit %d, version %s: %s", code, version(), errOut)
	}
	if out, errOut, code := runAstrid(t, "", "capsule", "update", "notes", "--allow-unsigned", "--yes"); code != 0 || version() != "0.3.0" || !strings.Contains(out, "NEW GRANTS") {
		t.Fatalf("update --yes: exit %d, version %s\n%s%s", code, version(), out, errOut)
	}

	publish(notesVersion(t, "0.0.9", "[capabilities]\nfs_read = [\"workspace://\"]"))
	if _, errOut, code := runAstrid(t, "", "capsule", "update", "notes", "--allow-unsigned", "--yes"); code != 1 || !strings.Contains(errOut, "older than the installed 0.3.0") {
		t.Fatalf("downgrade: exit %d: %s", code, errOut)
	}
}
