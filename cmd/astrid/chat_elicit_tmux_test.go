package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/kernel"
)

const askSecretScript = `{"match": {"tool_results": ["k1"]}}
{"TextDelta": "Key stored."}
"Done"
{"match": {"user": "ask"}}
{"ToolCallStart": {"id": "k1", "name": "ask_secret"}}
{"ToolCallDelta": {"id": "k1", "args_delta": "{}"}}
{"ToolCallEnd": {"id": "k1"}}
"Done"
`

// In a real terminal, a tool's elicit questions are asked inside
// `astrid chat` (over the daemon it starts): the secret is typed on the
// question's own line and shows only as dots, the select shows numbered
// options, the tool gets what was typed, and the secret never reaches
// the screen. The capsule's required TOKEN was never set: the daemon
// loads it anyway and, when the tool reads it, asks the person in the
// same way (the onboarding question), keeping the answer as theirs.
func TestChatElicitInATerminal(t *testing.T) {
	ws := promptHome(t, askSecretScript)
	home := os.Getenv("ASTRID_HOME")
	testBuiltins = []kernel.Builtin{elicitTestBuiltin()}
	t.Cleanup(func() { testBuiltins = nil })
	const token, key = "tok-chat-1234", "sk-chat-5678"
	stopDaemonAtCleanup(t, home)
	term := newTerminal(t)
	term.start("export " + elicitTestEnv + "=1; " + astridLine(home, ws, "chat"))
	term.waitFor("/help")

	term.run("send-keys", "-l", "ask me")
	term.run("send-keys", "Enter")
	term.waitForAll("Capsule 'elicit-test' asks for API_KEY", "Enter your API key: ", "hidden as you type")
	term.run("send-keys", "-l", key)
	screen := term.waitFor(strings.Repeat("•", len(key)))
	if strings.Contains(screen, key) {
		t.Fatalf("the secret shows as it is typed:\n%s", screen)
	}
	term.run("send-keys", "Enter")
	screen = term.waitForAll("asks for REGION", "Pick a region")
	if !strings.Contains(screen, "*1) us-east-1") || !strings.Contains(screen, "2) eu-west-1") {
		t.Fatalf("the select's options are not numbered:\n%s", screen)
	}
	term.run("send-keys", "2", "Enter")
	term.waitForAll("asks for TOKEN", "Enter the test token")
	term.run("send-keys", "-l", token)
	term.run("send-keys", "Enter")
	want := fmt.Sprintf("token %s key %s region eu-west-1", digestOf(token), digestOf(key))
	screen = term.waitForAll("Key stored.", "· /help", want)
	for _, shown := range []string{"gave API_KEY to elicit-test", "gave REGION to elicit-test", "gave TOKEN to elicit-test"} {
		if !strings.Contains(screen, shown) {
			t.Fatalf("the screen lacks %q:\n%s", shown, screen)
		}
	}
	if strings.Contains(screen, key) || strings.Contains(screen, token) {
		t.Fatalf("a secret shows on the screen:\n%s", screen)
	}
	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	term.waitFor("EXIT=0")
}
