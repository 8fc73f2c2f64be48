package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// promptHome is a fresh $ASTRID_HOME and workspace for `astrid -p` tests;
// script, when not empty, becomes the replay provider's script.
func promptHome(t *testing.T, script string) (ws string) {
	t.Helper()
	t.Setenv(config.HomeEnv, t.TempDir())
	ws = t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo workspace\nIt holds a README.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if script != "" {
		path := filepath.Join(ws, "script.jsonl")
		if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := runAstrid(t, path, "capsule", "env", "set", "astrid-capsule-replay", "script"); code != 0 {
			t.Fatalf("env set script: exit %d: %s", code, errOut)
		}
	}
	return ws
}

const plainScript = `{"match": {"user": "plain"}}
{"TextDelta": "Just "}
{"TextDelta": "an answer."}
"Done"
{"match": {"user": "silent"}}
"Done"
{"match": {"user": "broken"}}
{"Error": "the model is down"}
`

func TestPromptAnswersWithoutTools(t *testing.T) {
	ws := promptHome(t, plainScript)
	out, errOut, code := runAstrid(t, "", "-p", "a plain question", "--workspace", ws)
	if code != 0 || out != "Just an answer.\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "session s-") || strings.Contains(errOut, "→") {
		t.Fatalf("stderr should name the session and no tool call:\n%s", errOut)
	}
}

// The built-in demo (no script set) reads README.md through the fs capsule
// and answers; the tool call is a note on stderr, the answer on stdout.
func TestPromptDemoReadsAFileAndAnswers(t *testing.T) {
	ws := promptHome(t, "")
	out, errOut, code := runAstrid(t, "", "-p", "What does README.md say?", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "I read README.md") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, `→ read_file {"file_path":"README.md"}`) || !strings.Contains(errOut, "✓ read_file") || !strings.Contains(errOut, "# Demo workspace") {
		t.Fatalf("stderr lacks the tool call's notes:\n%s", errOut)
	}
	// --json: every event, one JSON object per line, the final one last.
	out, errOut, code = runAstrid(t, "", "-p", "again", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("--json line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, ev.Event)
	}
	got := strings.Join(kinds, ",")
	if !strings.HasPrefix(got, "delta,tool_started,tool_finished,delta") || !strings.HasSuffix(got, ",response") {
		t.Fatalf("--json events = %s", got)
	}
}

// A conversation continues with --session: the second turn's history holds
// the first.
func TestPromptContinuesASession(t *testing.T) {
	ws := promptHome(t, plainScript)
	_, errOut, code := runAstrid(t, "", "-p", "plain", "--workspace", ws)
	if code != 0 {
		t.Fatalf("turn 1: exit %d: %s", code, errOut)
	}
	session := sessionNamed(t, errOut)
	if _, errOut, code := runAstrid(t, "", "-p", "plain", "--session", session, "--workspace", ws); code != 0 {
		t.Fatalf("turn 2: exit %d: %s", code, errOut)
	}
	out, errOut, code := runAstrid(t, "", "session", "show", session, "--workspace", ws)
	if code != 0 || strings.Count(out, "user: plain") != 2 || strings.Count(out, "assistant: Just an answer.") != 2 {
		t.Fatalf("session show: exit %d\n%s%s", code, out, errOut)
	}
}

// Each way a turn can go wrong has its exit status and a message.
func TestPromptFailures(t *testing.T) {
	ws := promptHome(t, plainScript)
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		say   string
	}{
		{"provider error", "", []string{"-p", "broken"}, 1, "the model is down"},
		{"empty model output", "", []string{"-p", "silent"}, 1, "no text and no tool call"},
		{"provider not loaded", "", []string{"-p", "plain", "--provider", "nosuch"}, 1, "nosuch"},
		{"timeout", "", []string{"-p", "plain", "--timeout", "1ns"}, 124, "--timeout"},
		{"empty prompt", "", []string{"-p", ""}, 2, "the prompt is empty"},
		{"blank prompt from stdin", "  \n", []string{"-p", "-"}, 2, "the prompt is empty"},
		{"prompt over the bus limit", strings.Repeat("x", 1<<20), []string{"-p", "-"}, 2, "KiB"},
		{"session id with a dot", "", []string{"-p", "plain", "--session", "../x"}, 2, "--session"},
		{"provider with a dot", "", []string{"-p", "plain", "--provider", "a.b"}, 2, "--provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runAstrid(t, tt.stdin, append(tt.args, "--workspace", ws)...)
			if code != tt.code || !strings.Contains(errOut, tt.say) {
				t.Fatalf("exit %d (want %d), stderr should say %q:\n%s%s", code, tt.code, tt.say, out, errOut)
			}
		})
	}
}

// The prompt may come from standard input.
func TestPromptFromStdin(t *testing.T) {
	ws := promptHome(t, plainScript)
	out, errOut, code := runAstrid(t, "a plain question from a pipe\n", "-p", "-", "--workspace", ws)
	if code != 0 || out != "Just an answer.\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

const writeScript = `{"match": {"tool_results": ["w1"]}}
{"TextDelta": "Done with the file."}
"Done"
{"match": {"user": "write"}}
{"ToolCallStart": {"id": "w1", "name": "write_file"}}
{"ToolCallDelta": {"id": "w1", "args_delta": "{\"file_path\":\"notes.txt\",\"content\":\"from the agent\"}"}}
{"ToolCallEnd": {"id": "w1"}}
"Done"
`

// The agent's mutable call is denied without a terminal (the model hears
// why, the person is told how to allow it) and runs with --yes.
func TestPromptMutableToolNeedsApproval(t *testing.T) {
	ws := promptHome(t, writeScript)
	out, errOut, code := runAstrid(t, "", "-p", "write the notes", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Done with the file.") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "pass --yes to allow such calls") || !strings.Contains(errOut, "✗ write_file") || !strings.Contains(errOut, "not approved by the user") {
		t.Fatalf("stderr should show the denial and how to allow it:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write_file wrote the file: %v", err)
	}
	_, errOut, code = runAstrid(t, "", "-p", "write the notes", "--yes", "--workspace", ws)
	if code != 0 || !strings.Contains(errOut, "approved (--yes): write_file") || !strings.Contains(errOut, "✓ write_file") {
		t.Fatalf("--yes: exit %d, stderr:\n%s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "from the agent" {
		t.Fatalf("notes.txt = %q, %v", b, err)
	}
}
