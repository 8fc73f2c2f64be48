package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// chatCommandsScript answers the agent's summary request, the deploy
// command's expanded prompt, and anything else.
const chatCommandsScript = `{"match": {"user": "Write the summary now."}}
{"TextDelta": "The user asked two questions."}
"Done"
{"match": {"user": "Deploy staging to production"}}
{"TextDelta": "Deploying staging now."}
"Done"
{"match": {"user": ""}}
{"TextDelta": "Noted."}
"Done"
`

// deployerCapsule writes a static-only capsule with the slash commands
// deploy and help (which shadows the chat's /help).
func deployerCapsule(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "deployer")
	if err := os.MkdirAll(filepath.Join(src, "commands"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"Capsule.toml": "[package]\nname = \"deployer\"\nversion = \"0.1.0\"\nastrid-version = \"^0.1\"\n\n" +
			"[[command]]\nname = \"deploy\"\ndescription = \"Deploy to production\"\nfile = \"commands/deploy.toml\"\n\n" +
			"[[command]]\nname = \"help\"\ndescription = \"How deploys work\"\nfile = \"commands/help.toml\"\n",
		"commands/deploy.toml": "prompt = \"Deploy {{args}} to production.\"\n",
		"commands/help.toml":   "prompt = \"Explain deploys.\"\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// In a real terminal: /compact summarizes the session's earlier turn (the
// notice names what was compacted), /help lists the capsule's commands
// (the one shadowing /help renamed, saying why), and /deploy staging runs
// the command's expanded prompt as a turn.
func TestChatCompactAndCapsuleCommandsInATerminal(t *testing.T) {
	ws := promptHome(t, chatCommandsScript)
	home := os.Getenv("ASTRID_HOME")
	if _, errOut, code := runAstrid(t, "", "capsule", "install", deployerCapsule(t), "--yes"); code != 0 {
		t.Fatalf("capsule install: %s", errOut)
	}
	term := newTerminal(t)
	term.start(astridLine(home, ws, "chat", "--no-daemon", "--provider", "replay"))
	term.waitFor("/help")
	// idle waits until the screen shows n answers and the turn has ended
	// (the status line offers /help again).
	idle := func(n int) {
		t.Helper()
		testutil.WaitFor(t, daemonPatience, fmt.Sprintf("%d answers and an idle chat", n), func() bool {
			screen := term.run("capture-pane", "-p", "-J")
			return strings.Count(screen, "Noted.") >= n && strings.Contains(screen, "· /help") && !strings.Contains(screen, "working…")
		})
	}
	for i, q := range []string{"first question", "second question"} {
		term.run("send-keys", "-l", q)
		term.run("send-keys", "Enter")
		idle(i + 1)
	}
	term.run("send-keys", "-l", "/compact")
	term.run("send-keys", "Enter")
	term.waitForAll("Compacted the first 2 messages", "the first 2 messages were summarized", "· /help")
	term.run("send-keys", "-l", "/help")
	term.run("send-keys", "Enter")
	term.waitForAll("/deploy", "Deploy to production (deployer)", "/deployer:help", "renamed: /help is taken by a built-in command")
	term.run("send-keys", "-l", "/deploy staging")
	term.run("send-keys", "Enter")
	term.waitForAll("Deploying staging now.", "· /help")
	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	if screen := term.waitFor("EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("leaving the chat shows:\n%s", screen)
	}
}
