package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// seedSession stores a conversation with a tool round under id for the
// default principal, as the orchestrator would have.
func seedSession(t *testing.T, home, ws, id string) {
	t.Helper()
	seedMessages(t, home, ws, id, []ipc.Message{
		ipc.TextMessage(ipc.RoleUser, "What is in README.md?"),
		{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path": "README.md"}`)}}}},
		{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: "c1", Content: "# Demo\nhello"}}},
		ipc.TextMessage(ipc.RoleAssistant, "It says hello."),
	})
}

// seedMessages appends msgs to session id of the default principal, in a
// kernel of its own on home.
func seedMessages(t *testing.T, home, ws, id string, msgs []ipc.Message) {
	t.Helper()
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: home, Workspace: ws, Config: config.Default(), Builtins: builtins(), Frontends: frontends(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := sessionclient.Ask(ctx, k.Frontend(), ipc.DefaultPrincipal, "get_messages", map[string]any{
		"session_id": id, "append_before_read": true, "messages": msgs,
	}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionCommands(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	seedSession(t, home, ws, "s1")

	out, errOut, code := runAstrid(t, "", "session", "list", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "s1") || !strings.Contains(out, "What is in README.md?") || !strings.Contains(out, "4") {
		t.Fatalf("session list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "session", "show", "s1", "--workspace", ws)
	want := []string{"user: What is in README.md?", `assistant: → read_file {"file_path":"README.md"}`, "tool: ← # Demo hello", "assistant: It says hello."}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("session show: exit %d, missing %q in\n%s%s", code, w, out, errOut)
		}
	}
	// Another principal sees none of it.
	out, errOut, code = runAstrid(t, "", "session", "list", "--workspace", ws, "--principal", "alice")
	if code != 0 || strings.Contains(out, "s1") || !strings.Contains(errOut, "no sessions yet") {
		t.Fatalf("alice's session list: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "session", "show", "s1", "--workspace", ws, "--principal", "alice"); code != 1 || !strings.Contains(errOut, "no session s1") {
		t.Fatalf("alice's session show s1: exit %d, %s", code, errOut)
	}
	// Bad ids are usage errors, named byte by byte.
	for _, bad := range []string{"../s1", "a.b", "a/b", strings.Repeat("x", 65)} {
		if _, errOut, code = runAstrid(t, "", "session", "show", bad, "--workspace", ws); code != 2 || !strings.Contains(errOut, "session id") {
			t.Fatalf("session show %q: exit %d, %s", bad, code, errOut)
		}
	}
	if _, errOut, code = runAstrid(t, "", "session", "delete", "s1", "--workspace", ws); code != 0 || !strings.Contains(errOut, "deleted session s1") {
		t.Fatalf("session delete: exit %d, %s", code, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "session", "delete", "s1", "--workspace", ws); code != 1 || !strings.Contains(errOut, "no session s1") {
		t.Fatalf("second session delete: exit %d, %s", code, errOut)
	}
}
