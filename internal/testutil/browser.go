package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// browserNames are the headless browsers a browser test may drive, Debian's
// chromium-headless-shell first (scripts/install-browser.sh installs it).
var browserNames = []string{"chromium-headless-shell", "/usr/lib/chromium/chromium-headless-shell", "chromium", "google-chrome", "chrome-headless-shell"}

// Browser returns the path of a headless Chromium. Without one the test is
// skipped, saying how to install it, except under scripts/test.sh
// (ASTRID_CI) or in CI (CI=true), where a missing browser is a failure:
// the browser tests must not pass by not running.
func Browser(t testing.TB) string {
	t.Helper()
	for _, name := range browserNames {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if testToolsInstalled() {
		t.Fatalf("no headless browser installed (%s=%q, CI=%q): scripts/install-browser.sh installs Debian's chromium-headless-shell", TestToolsEnv, os.Getenv(TestToolsEnv), os.Getenv("CI"))
	}
	t.Skip("no headless browser installed (scripts/install-browser.sh installs Debian's chromium-headless-shell)")
	return ""
}

// SaveArtifact writes data as name in the test's artifact directory (kept
// under the output directory with go test -artifacts) and, when
// $ASTRID_ARTIFACTS is set, in that directory too; it logs where.
func SaveArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("ASTRID_ARTIFACTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Errorf("artifact %s: %v", name, err)
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Errorf("artifact %s: %v", name, err)
			continue
		}
		t.Logf("artifact: %s", path)
	}
}
