//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `tool call read_file` answers while an installed MCP server never
// answers initialize (with a handshake timeout of an hour, waiting for it
// would hang the test); a call of the hung server's own tool waits for it
// and times out saying which capsule it waited for.
func TestToolCallDoesNotWaitForAHungMCPServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ASTRID_HOME", home)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("mcp_handshake_timeout = \"1h\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "capsules", "hung")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	manifest := "[package]\nname = \"hung\"\nversion = \"0.1.0\"\n[capabilities]\nhost_process = [\"sh\"]\n" +
		"[[mcp_server]]\nid = \"hung\"\ntype = \"stdio\"\ncommand = \"sh\"\nargs = [\"-c\", \"while read -r line; do :; done\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	// Copied in by hand, so approved as an operator would.
	if _, errOut, code := runAstrid(t, "", "capsule", "approve", "hung", "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("approve: exit %d: %s", code, errOut)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAstrid(t, "", "tool", "call", "read_file", `{"file_path":"hello.txt"}`, "--workspace", ws)
	if code != 0 || !strings.Contains(out, "hi there") {
		t.Fatalf("read_file: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "tool", "call", "hung:anything", `{}`, "--workspace", ws, "--timeout", "1s")
	if code != 2 || !strings.Contains(errOut, "waiting for capsule hung") {
		t.Fatalf("hung:anything: exit %d, stdout %q, stderr %s; want a timeout naming the capsule", code, out, errOut)
	}
}

// Dangling and looping links in capsules/ are listed as failed, with why.
func TestCapsuleListReportsBrokenLinks(t *testing.T) {
	home := t.TempDir()
	t.Setenv("ASTRID_HOME", home)
	caps := filepath.Join(home, "capsules")
	if err := os.MkdirAll(caps, 0o700); err != nil {
		t.Fatal(err)
	}
	for target, name := range map[string]string{filepath.Join(home, "gone"): "dangling", "loop-b": "loop-a", "loop-a": "loop-b"} {
		if err := os.Symlink(target, filepath.Join(caps, name)); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runAstrid(t, "", "capsule", "list", "--workspace", t.TempDir())
	if code != 1 {
		t.Fatalf("exit %d, want 1 (some failed)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"dangling: ", "is a dangling symlink", "loop-a: ", "is a symlink loop"} {
		if !strings.Contains(out, want) {
			t.Errorf("capsule list lacks %q:\n%s", want, out)
		}
	}
}
