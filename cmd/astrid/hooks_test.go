package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// config.toml [hooks] reaches the hooks capsule: a PreToolUse hook refuses
// the agent's write even with --yes, and the model's refusal shows its
// reason (and no PostToolUse hook runs after it); a PostToolUse hook's
// additionalContext follows the result of a call that ran; a hook table
// that cannot run is refused at start, at file:line.
func TestPromptRunsConfiguredHooks(t *testing.T) {
	ws := promptHome(t, writeScript)
	cfg := filepath.Join(os.Getenv(config.HomeEnv), "config.toml")
	if err := os.WriteFile(cfg, []byte(`[[hooks.pre_tool_use]]
matcher = "Write|Edit"
command = "echo 'no writes in this repository' >&2; exit 2"

[[hooks.post_tool_use]]
command = "echo refused-calls-run-no-post-hook > post.log"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAstrid(t, "", "-p", "write the notes", "--yes", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Done with the file.") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "✗ write_file") || !strings.Contains(errOut, "refused by a PreToolUse hook: no writes in this repository") {
		t.Fatalf("stderr should show the hook's refusal:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("a refused write_file wrote the file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "post.log")); !os.IsNotExist(err) {
		t.Fatalf("a PostToolUse hook ran after a refused call: %v", err)
	}

	// A PostToolUse hook's additionalContext follows the result of a call
	// that ran, in the session's history: what the model read.
	if err := os.WriteFile(cfg, []byte(`[[hooks.post_tool_use]]
command = "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"POST-CONTEXT\"}}'"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runAstrid(t, "", "-p", "write the notes", "--yes", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Done with the file.") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	session := regexp.MustCompile(`session (s-[0-9a-f]+)`).FindStringSubmatch(errOut)
	if session == nil {
		t.Fatalf("no session named on stderr:\n%s", errOut)
	}
	shown, errOut, code := runAstrid(t, "", "session", "show", session[1])
	if code != 0 || !regexp.MustCompile(`tool: ← .*\bPostToolUse hook context: POST-CONTEXT`).MatchString(shown) {
		t.Fatalf("session show: exit %d, stdout %q, stderr:\n%s", code, shown, errOut)
	}

	if err := os.WriteFile(cfg, []byte("[hooks]\ntimeout_secs = 5\n\n[[hooks.pre_tool_use]]\nmatcher = \"(\"\ncommand = \"true\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runAstrid(t, "", "-p", "write the notes", "--workspace", ws)
	if code == 0 || !strings.Contains(errOut, "config.toml:5:") || !strings.Contains(errOut, `matcher "(" is not a regular expression`) {
		t.Fatalf("a bad matcher: exit %d, stderr:\n%s", code, errOut)
	}
}
