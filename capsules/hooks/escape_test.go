package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/hooks"
	"github.com/astrid-go/astrid/ipc"
)

// Attempts to get a call past a PreToolUse guard, or a hook out of its
// box. Each refused call must not run (keep.txt survives) and must be
// refused without a question to the person.
func TestPreToolUseEscapes(t *testing.T) {
	outside := t.TempDir()
	cfg := hooks.Config{PreToolUse: []hooks.Hook{{Matcher: "Bash", Command: "hooks/deny-rm.sh"}}}
	k := bootAgent(t, cfg, "", map[string]string{"deny-rm.sh": denyRm})
	qs := k.Approvals(ipc.DefaultPrincipal)
	write(t, k, "keep.txt", "precious")

	for _, c := range []struct {
		name, command string
	}{
		{"plain", "rm -f keep.txt"},
		{"after another command", "true; rm -f keep.txt"},
		{"in a pipeline", "echo | rm -f keep.txt"},
		{"after &&", "true && rm keep.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := k.StartTool(ipc.DefaultPrincipal, "", "run_shell_command", map[string]string{"command": c.command}).Wait()
			if !res.IsError || !strings.Contains(res.Content, "refused by a PreToolUse hook") {
				t.Fatalf("%q: %+v", c.command, res)
			}
			if p := qs.Pending(); len(p) != 0 {
				t.Fatalf("%q: the person was asked: %+v", c.command, p)
			}
		})
	}

	// The same call id again with other arguments is a new call: the
	// one-time pass is for the approval layer's re-publish of the very
	// call the hooks let by.
	t.Run("call id reused with other arguments", func(t *testing.T) {
		first := k.StartTool(ipc.DefaultPrincipal, "reused-id", "run_shell_command", map[string]string{"command": "echo harmless"})
		q, _ := qs.Next()
		k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
		if res := first.Wait(); res.IsError {
			t.Fatalf("harmless call: %+v", res)
		}
		res := k.StartTool(ipc.DefaultPrincipal, "reused-id", "run_shell_command", map[string]string{"command": "rm -f keep.txt"}).Wait()
		if !res.IsError || !strings.Contains(res.Content, "refused by a PreToolUse hook") {
			t.Fatalf("reused id: %+v", res)
		}
	})
	if b, err := os.ReadFile(filepath.Join(k.Workspace, "keep.txt")); err != nil || string(b) != "precious" {
		t.Fatalf("keep.txt: %q, %v", b, err)
	}

	// A hook is confined like any process: it cannot write outside the
	// workspace, so a hook cannot be made to plant files elsewhere.
	t.Run("hook writing outside the workspace", func(t *testing.T) {
		cfg := hooks.Config{PreToolUse: []hooks.Hook{{Command: "echo pwned > " + filepath.Join(outside, "planted") + " || exit 1"}}}
		k := bootAgent(t, cfg, "", nil)
		write(t, k, "a.txt", "A")
		if res := k.CallTool("read_file", map[string]string{"file_path": "a.txt"}); res.IsError {
			t.Fatalf("read_file: %+v", res)
		}
		if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
			t.Fatal("the hook wrote outside the workspace")
		}
		if !strings.Contains(k.Logs(), "exited 1") {
			t.Fatalf("the hook's failure is not logged:\n%s", k.Logs())
		}
	})
}

// A workspace's own hooks run only when the operator allows them.
func TestWorkspaceHooksNeedTheOperator(t *testing.T) {
	const file = `{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "echo no reading >&2; exit 2"}]}]}}`
	for _, allow := range []bool{false, true} {
		k := bootAgent(t, hooks.Config{AllowWorkspace: allow}, "", nil)
		write(t, k, hooks.WorkspaceFile, file)
		write(t, k, "a.txt", "A")
		res := k.CallTool("read_file", map[string]string{"file_path": "a.txt"})
		if allow != res.IsError {
			t.Fatalf("allow_workspace = %v: %+v", allow, res)
		}
		if allow && !strings.Contains(res.Content, "no reading") {
			t.Fatalf("refusal: %+v", res)
		}
	}
	// A file that does not parse is named in the log and skipped.
	k := bootAgent(t, hooks.Config{AllowWorkspace: true}, "", nil)
	write(t, k, hooks.WorkspaceFile, `{"hooks": {"BeforeEverything": []}}`)
	write(t, k, "a.txt", "A")
	if res := k.CallTool("read_file", map[string]string{"file_path": "a.txt"}); res.IsError {
		t.Fatalf("read_file: %+v", res)
	}
	if !strings.Contains(k.Logs(), `unknown hook event \"BeforeEverything\"`) {
		t.Fatalf("log:\n%s", k.Logs())
	}
}
