package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/sdk"
)

// elicitTestEnv, set to 1 in a child's environment, adds the elicit test
// capsule to the child's built-ins.
const elicitTestEnv = "ASTRID_TEST_ELICIT"

func init() {
	if os.Getenv(elicitTestEnv) == "1" {
		testBuiltins = append(testBuiltins, elicitTestBuiltin())
	}
}

// elicitTestBuiltin needs a TOKEN ([env], secret, required) to load, and
// provides "ask_secret": it asks for a secret API key and a region (a
// select), and answers digests of the token and the key (never either)
// and the region.
func elicitTestBuiltin() kernel.Builtin {
	text := `
[package]
name = "elicit-test"
version = "0.1.0"
[env]
TOKEN = { type = "secret", request = "Enter the test token" }
[subscribe]
"tool.v1.execute.ask_secret" = { wit = "opaque", handler = "tool_execute_ask_secret" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
[publish]
"tool.v1.execute.ask_secret.result" = "opaque"
"tool.v1.response.describe.elicit-test" = "opaque"
[[tool]]
name = "ask_secret"
description_for_llm = "Asks for a secret and a region"
`
	return kernel.Builtin{Manifest: []byte(text), New: func() *sdk.Capsule {
		c := sdk.New("asks the person for a secret")
		sdk.Tool(c, "ask_secret", "asks for a secret and a region", func(c *sdk.Call, _ struct{}) (string, error) {
			key, err := c.Elicit(hostapi.ElicitRequest{Key: "API_KEY", Kind: hostapi.ElicitSecret, Prompt: "Enter your API key"})
			if err != nil {
				return "", fmt.Errorf("API_KEY: %w", err)
			}
			region, err := c.Elicit(hostapi.ElicitRequest{Key: "REGION", Kind: hostapi.ElicitSelect, Prompt: "Pick a region", Options: []string{"us-east-1", "eu-west-1"}, Default: ptrTo("us-east-1")})
			if err != nil {
				return "", fmt.Errorf("REGION: %w", err)
			}
			tok, _ := c.Config("TOKEN")
			return fmt.Sprintf("token %s key %s region %s", digestOf(tok), digestOf(key.Value), region.Value), nil
		})
		return c
	}}
}

func ptrTo(s string) *string { return &s }

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Without a terminal: a capsule missing a required value fails the load
// with the command that sets it; once set, the tool's question is declined
// at once (nobody is there), and the tool hears so.
func TestElicitWithoutATerminal(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	testBuiltins = []kernel.Builtin{elicitTestBuiltin()}
	t.Cleanup(func() { testBuiltins = nil })
	ws := t.TempDir()
	_, errOut, code := runAstrid(t, "", "tool", "call", "ask_secret", "{}", "--workspace", ws)
	if code == 0 || !strings.Contains(errOut, "astrid capsule env set elicit-test TOKEN") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "tok-piped", "capsule", "env", "set", "elicit-test", "TOKEN"); code != 0 {
		t.Fatalf("env set: exit %d: %s", code, errOut)
	}
	out, errOut, code := runAstrid(t, "", "tool", "call", "ask_secret", "{}", "--workspace", ws)
	if code == 0 || !strings.Contains(out+errOut, "declined") || !strings.Contains(errOut, "nobody can answer here (no terminal)") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// In a terminal, `astrid tool call` asks for the missing TOKEN before the
// capsule loads, then for the tool's secret and its select: neither secret
// shows on the screen as it is typed, the select shows numbered options,
// and the tool gets what was typed. The token is stored: the next run
// does not ask for it.
func TestElicitInATerminal(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	const token, key = "tok-typed-1234", "sk-typed-5678"
	line := func() string {
		return "export " + elicitTestEnv + "=1; " + astridLine(home, ws, "tool", "call", "ask_secret", "{}")
	}
	term := newTerminal(t)
	term.start(line())
	screen := term.waitFor("Enter the test token")
	if !strings.Contains(screen, "astrid capsule env set elicit-test TOKEN") {
		t.Fatalf("the load's question does not name the command:\n%s", screen)
	}
	term.run("send-keys", "-l", token)
	term.run("send-keys", "Enter")
	term.waitFor("Enter your API key")
	term.run("send-keys", "-l", key)
	term.run("send-keys", "Enter")
	screen = term.waitFor("Pick a region")
	if !strings.Contains(screen, "1) us-east-1") || !strings.Contains(screen, "2) eu-west-1") {
		t.Fatalf("the select's options are not numbered:\n%s", screen)
	}
	term.run("send-keys", "2", "Enter")
	screen = term.waitFor("EXIT=")
	want := fmt.Sprintf("token %s key %s region eu-west-1", digestOf(token), digestOf(key))
	if !strings.Contains(screen, want) || !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("want %q and EXIT=0 on the screen:\n%s", want, screen)
	}
	if strings.Contains(screen, token) || strings.Contains(screen, key) {
		t.Fatalf("a secret shows on the screen:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(home, "state.db")); err != nil {
		t.Fatal(err)
	}

	// The token was stored: only the tool's questions are asked.
	term = newTerminal(t)
	term.start(line())
	screen = term.waitFor("Enter your API key")
	if strings.Contains(screen, "Enter the test token") {
		t.Fatalf("asked for the stored token again:\n%s", screen)
	}
	term.run("send-keys", "-")
	term.run("send-keys", "Enter")
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "declined") || strings.Contains(screen, "EXIT=0") {
		t.Fatalf("a declined question:\n%s", screen)
	}

	// Ctrl-C while the load asks ends the command: the load stops
	// waiting for the line.
	home = t.TempDir()
	term = newTerminal(t)
	term.start(line())
	term.waitFor("Enter the test token")
	term.run("send-keys", "C-c")
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=130") {
		t.Fatalf("after Ctrl-C at the load's question:\n%s", screen)
	}
}
