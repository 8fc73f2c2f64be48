package main

import (
	"os"
	"strings"
	"testing"
)

// `astrid` alone in a terminal opens the chat, and a chat that started a
// daemon says on its way out that the daemon still runs and how to stop
// it.
func TestBareAstridOpensChatInATerminal(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv("ASTRID_HOME")
	stopDaemonAtCleanup(t, home)
	term := newTerminal(t)
	term.start(astridLine(home, ws))
	term.waitFor("/help")
	term.run("send-keys", "-l", "plain")
	term.run("send-keys", "Enter")
	term.waitForAll("Just an answer.", "· /help")
	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	screen := term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "still runs; astrid stop ends it") {
		t.Fatalf("leaving the chat astrid opened shows:\n%s", screen)
	}
}
