package testutil

import (
	"os"
	"testing"
)

// NeedInstalled stats path, a file a project script installs (installer
// names it, e.g. "scripts/npm-ci.sh"), and returns it. When it is absent a
// developer's run skips the test, saying so, but a CI run fails it: there
// the script has run, so a missing file is a broken install, and a skip
// would pass in silence the checks it exists for.
func NeedInstalled(t testing.TB, path, installer string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if inCI() {
			t.Fatalf("%s is missing in CI (CI=%s): %s installs it: %v", path, os.Getenv("CI"), installer, err)
			return path
		}
		t.Skipf("%s not installed (%v); %s installs it, and CI fails without it", path, err, installer)
	}
	return path
}
