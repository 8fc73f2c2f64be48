package testutil

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// TestToolsEnv is set to a true value by scripts/test.sh (CI's `make
// test`) once scripts/install-test-tools.sh has run: from then on a tool
// that script installs cannot be missing, whether or not the CI service
// sets CI.
const TestToolsEnv = "ASTRID_CI"

// NeedTestTool returns the path of name, a program
// scripts/install-test-tools.sh installs (tmux, docker-registry). Without
// it a developer's run skips the test, saying how to install it; a run by
// scripts/test.sh (ASTRID_CI) or a CI service (CI) fails it, so a tool
// that failed to install cannot pass the checks it exists for in silence.
func NeedTestTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if testToolsInstalled() {
			t.Fatalf("%s is missing (%s=%q, CI=%q): scripts/install-test-tools.sh installs it: %v", name, TestToolsEnv, os.Getenv(TestToolsEnv), os.Getenv("CI"), err)
			return ""
		}
		t.Skipf("%s not installed (%v); scripts/install-test-tools.sh installs it, and scripts/test.sh fails without it", name, err)
	}
	return path
}

// testToolsInstalled reports whether scripts/install-test-tools.sh has run
// (ASTRID_CI, set by scripts/test.sh) or a CI service runs the tests (CI):
// then what it installs is missing only when its install broke.
func testToolsInstalled() bool {
	v, err := strconv.ParseBool(os.Getenv(TestToolsEnv))
	return (err == nil && v) || inCI()
}
