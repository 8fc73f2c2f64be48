package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A chat continuing a session from another directory works on the
// session's workspace, as astrid -p --session does: the file the agent
// writes lands where the session began, not where the chat was started.
func TestChatSessionFromAnotherDirectory(t *testing.T) {
	ws := promptHome(t, writeScript)
	home := os.Getenv("ASTRID_HOME")
	_, errOut, code := runAstrid(t, "", "-p", "write the notes", "--yes", "--workspace", ws, "--no-daemon")
	m := regexp.MustCompile(`session (s-[0-9a-f]{32})`).FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("the first turn: exit %d: %s", code, errOut)
	}
	if err := os.Remove(filepath.Join(ws, "notes.txt")); err != nil {
		t.Fatalf("the first turn wrote no notes.txt: %v", err)
	}
	other := t.TempDir()
	term := newTerminal(t)
	term.start(astridLine(home, other, "chat", "--no-daemon", "--session", m[1]))
	term.waitFor("/help")
	term.run("send-keys", "-l", "write the notes")
	term.run("send-keys", "Enter")
	term.waitFor("Allow? [y] once")
	term.run("send-keys", "y")
	term.waitForAll("Done with the file.", "· /help")
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "from the agent" {
		t.Fatalf("notes.txt in the session's workspace: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err == nil {
		t.Fatal("the file landed in the directory the chat was started from")
	}
	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	if screen := term.waitFor("EXIT="); !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("leaving the chat shows:\n%s", screen)
	}
}
