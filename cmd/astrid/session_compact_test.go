package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
)

// compactScript answers the agent's summary request (its last user
// message ends "Write the summary now.") with a fixed summary.
const compactScript = `{"match": {"user": "Write the summary now."}}
{"TextDelta": "The user asked about README.md; it says hello."}
"Done"
`

// astrid session compact: a session with an earlier exchange is
// summarized (exit 0, stdout says how much) and keeps every message; one
// with nothing before its last question, or no session at all, exits 1
// with the reason.
func TestSessionCompactCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	seedSession(t, home, ws, "one")
	seedSession(t, home, ws, "two")
	seedSession(t, home, ws, "two") // two exchanges: the first can be summarized
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(compactScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runAstrid(t, script, "capsule", "env", "set", "astrid-capsule-replay", "script"); code != 0 {
		t.Fatalf("env set: %s", errOut)
	}
	out, errOut, code := runAstrid(t, "", "session", "compact", "two", "--provider", "replay", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Compacted the first 4 messages of session two") {
		t.Fatalf("session compact two: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "session", "show", "two", "--workspace", ws)
	if code != 0 || strings.Count(out, "user: What is in README.md?") != 2 ||
		!strings.Contains(out, "── the model is sent this summary in place of the 4 messages above ──\nThe user asked about README.md; it says hello.") {
		t.Fatalf("session show after compact: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "session", "compact", "one", "--provider", "replay", "--workspace", ws); code != 1 || !strings.Contains(errOut, "no earlier turn to compact") {
		t.Fatalf("session compact one: exit %d, %s", code, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "session", "compact", "nope", "--workspace", ws); code != 1 || !strings.Contains(errOut, "no session nope") {
		t.Fatalf("session compact nope: exit %d, %s", code, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "session", "compact", "two", "--provider", "a.b", "--workspace", ws); code != 2 || !strings.Contains(errOut, "--provider") {
		t.Fatalf("session compact --provider a.b: exit %d, %s", code, errOut)
	}
}

// seedLong stores n exchanges of about 2 KiB each under id.
func seedLong(t *testing.T, home, ws, id string, n int) {
	t.Helper()
	var msgs []ipc.Message
	for i := range n {
		msgs = append(msgs, ipc.TextMessage(ipc.RoleUser, fmt.Sprintf("Question %d: %s", i, strings.Repeat("details ", 256))),
			ipc.TextMessage(ipc.RoleAssistant, fmt.Sprintf("Answer %d.", i)))
	}
	seedMessages(t, home, ws, id, msgs)
}

// astrid -p on a session past its model's threshold: the older turns are
// summarized before the request, and the CLI says so on stderr (the
// answer stays on stdout); the next turn, below the threshold again, has
// no compaction (--json shows every event of it).
func TestPromptShowsCompaction(t *testing.T) {
	ws := promptHome(t, compactScript+`{"match": {"user": ""}}
{"TextDelta": "Fine."}
"Done"
`)
	home := os.Getenv(config.HomeEnv)
	seedLong(t, home, ws, "long", 6)
	if _, errOut, code := runAstrid(t, "replay:tiny=4000", "capsule", "env", "set", "astrid-capsule-react", "context_windows"); code != 0 {
		t.Fatalf("env set: %s", errOut)
	}
	out, errOut, code := runAstrid(t, "", "-p", "and now?", "--session", "long", "--provider", "replay", "--model", "tiny", "--workspace", ws, "--no-daemon")
	if code != 0 || strings.TrimSpace(out) != "Fine." || !strings.Contains(errOut, "astrid: context: the first") || !strings.Contains(errOut, "were summarized to fit the model's window") {
		t.Fatalf("-p: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "-p", "and then?", "--session", "long", "--provider", "replay", "--model", "tiny", "--workspace", ws, "--no-daemon", "--json")
	if code != 0 || !strings.Contains(out, `"event":"response"`) || strings.Contains(out, `"event":"compacted"`) {
		t.Fatalf("-p --json below the threshold: exit %d\n%s%s", code, out, errOut)
	}
}
