package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// commandsCapsule writes a static-only capsule declaring the slash
// command lsdir (its prompt asks to list a directory) and one named help.
func commandsCapsule(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "lister")
	if err := os.MkdirAll(filepath.Join(src, "commands"), 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Capsule.toml": `[package]
name = "lister"
version = "0.1.0"
astrid-version = "^0.1"

[[command]]
name = "lsdir"
description = "List a directory"
file = "commands/lsdir.toml"

[[command]]
name = "help"
description = "How listing works"
file = "commands/help.toml"
`,
		"commands/lsdir.toml": `prompt = "Please list the files in {{args}}."` + "\n",
		"commands/help.toml":  `prompt = "Explain listing."` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// ACP: an installed capsule's [[command]]s are announced to the editor
// (available_commands_update) and `/lsdir .` runs as its expanded prompt:
// the model, asked to "list", calls list_directory.
func TestACPCapsuleCommands(t *testing.T) {
	fake := newACPFakeOpenAI(t)
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv(config.HomeEnv, home)
	if _, errOut, code := runAstrid(t, "", "capsule", "install", commandsCapsule(t), "--yes"); code != 0 {
		t.Fatalf("capsule install: %s", errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := startACP(t, home, t.TempDir(), fake)
	e.initialize(ctx)
	s := e.newSession(ctx, ws)
	e.useOpenAI(ctx, s)
	cmds := testutil.WaitForValue(t, 30*time.Second, "available_commands_update", func() ([]acpsdk.AvailableCommand, bool) {
		for _, u := range e.of(s.SessionId) {
			if u.AvailableCommandsUpdate != nil {
				return u.AvailableCommandsUpdate.AvailableCommands, true
			}
		}
		return nil, false
	})
	names := map[string]string{}
	for _, c := range cmds {
		names[c.Name] = c.Description
	}
	if names["lsdir"] != "List a directory" || names["help"] != "How listing works" || names["compact"] == "" {
		t.Fatalf("commands %+v", cmds)
	}
	resp, err := e.prompt(ctx, s.SessionId, "/lsdir .")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v\n%s", resp, err, e.stderr.String())
	}
	listed := false
	for _, u := range e.of(s.SessionId) {
		listed = listed || u.ToolCall != nil
	}
	if text := agentText(e.of(s.SessionId)); !listed || !strings.Contains(text, "Listed.") {
		t.Fatalf("the command's prompt did not reach the model: listed %v, text %q", listed, text)
	}
	// /compact, astrid acp's own command, on a session with an earlier
	// exchange to summarize (the model's summary is its answer, "Hello
	// there.").
	s2 := e.newSession(ctx, ws)
	e.useOpenAI(ctx, s2)
	for _, q := range []string{"hello", "hello again"} {
		if _, err := e.prompt(ctx, s2.SessionId, q); err != nil {
			t.Fatal(err)
		}
	}
	resp, err = e.prompt(ctx, s2.SessionId, "/compact")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn || !strings.Contains(agentText(e.of(s2.SessionId)), "Compacted the first 2 messages") {
		t.Fatalf("/compact: %+v, %v, text %q\n%s", resp, err, agentText(e.of(s2.SessionId)), e.stderr.String())
	}
	// A summary the model could not give (it answered the transcript
	// with a tool call, no text) is an error naming why; nothing changed.
	if _, err := e.prompt(ctx, s.SessionId, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err = e.prompt(ctx, s.SessionId, "/compact"); err == nil || !strings.Contains(err.Error(), "Nothing was compacted: the model returned an empty summary") {
		t.Fatalf("/compact on a transcript the model answers with a tool call: %v", err)
	}
}

// Through the daemon the commands reach the editor too: the uplink lets
// the client ask the static engines for them.
func TestACPCapsuleCommandsThroughTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon and astrid acp")
	}
	fake := newACPFakeOpenAI(t)
	home, daemonWS, ws := realDir(t), realDir(t), realDir(t)
	t.Setenv(config.HomeEnv, home)
	if _, errOut, code := runAstrid(t, "", "capsule", "install", commandsCapsule(t), "--yes"); code != 0 {
		t.Fatalf("capsule install: %s", errOut)
	}
	startDaemonIn(t, home, daemonWS)
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	e := startACPWith(t, home, t.TempDir(), fake)
	e.initialize(ctx)
	s := e.newSession(ctx, ws)
	testutil.WaitFor(t, daemonPatience, "available_commands_update with lsdir", func() bool {
		for _, u := range e.of(s.SessionId) {
			if u.AvailableCommandsUpdate != nil {
				for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
					if c.Name == "lsdir" {
						return true
					}
				}
			}
		}
		return false
	})
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.stderr.String())
	}
}
