package testutil

import (
	"os/exec"
	"testing"
)

// A tool scripts/install-test-tools.sh installs is skipped for a developer
// and fails a run of scripts/test.sh (ASTRID_CI) or a CI service (CI).
func TestNeedTestTool(t *testing.T) {
	present, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to stand for an installed tool")
	}
	tests := []struct {
		astridCI, ci, name string
		fatal, skip        bool
	}{
		{name: "astrid-no-such-tool", skip: true},
		{astridCI: "0", ci: "false", name: "astrid-no-such-tool", skip: true},
		{astridCI: "1", name: "astrid-no-such-tool", fatal: true},
		{astridCI: "true", ci: "false", name: "astrid-no-such-tool", fatal: true},
		{ci: "true", name: "astrid-no-such-tool", fatal: true},
		{astridCI: "1", name: "sh"},
		{name: "sh"},
	}
	for _, tc := range tests {
		t.Setenv(TestToolsEnv, tc.astridCI)
		t.Setenv("CI", tc.ci)
		f := &fakeTB{}
		got := NeedTestTool(f, tc.name)
		if f.fatal != tc.fatal || f.skipped != tc.skip {
			t.Errorf("%s=%q CI=%q, %s: fatal=%v skipped=%v; want fatal=%v skipped=%v", TestToolsEnv, tc.astridCI, tc.ci, tc.name, f.fatal, f.skipped, tc.fatal, tc.skip)
		}
		if !tc.fatal && !tc.skip && got != present {
			t.Errorf("NeedTestTool(%q) = %q, want %q", tc.name, got, present)
		}
	}
}
