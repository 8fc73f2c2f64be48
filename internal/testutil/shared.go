package testutil

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// NeedShared stats path, a file from ../shared beside the repository (the
// conformance corpus, the upstream spec), and returns it. When it is absent
// a developer's run skips the test, but a CI run (CI set to a true value, as
// CI services do) fails it: there a missing corpus is a broken checkout, and
// a skip would pass in silence the checks the corpus exists for.
func NeedShared(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if inCI() {
			t.Fatalf("%s is missing in CI (CI=%s): check out ../shared beside the repository: %v", path, os.Getenv("CI"), err)
			return path // for a testing.TB whose Fatalf returns
		}
		t.Skipf("%s not present (%v); these checks run where ../shared exists, and fail in CI without it", path, err)
	}
	return path
}

// inCI reports whether CI is set to a true value ("true", "1", ...).
func inCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// NeedCommand returns the path of the program name, skipping the test when
// it is not installed, or failing it in CI, where scripts/test.sh installs
// it (scripts/install-test-tools.sh).
func NeedCommand(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if inCI() {
			t.Fatalf("%s is missing in CI (CI=%s): scripts/install-test-tools.sh installs it: %v", name, os.Getenv("CI"), err)
			return ""
		}
		t.Skipf("%s not installed (%v); scripts/install-test-tools.sh installs it, and CI fails without it", name, err)
	}
	return path
}
