package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/testutil"
)

// stopDaemonAtCleanup stops the daemon a test's astrid chat starts.
func stopDaemonAtCleanup(t *testing.T, home string) {
	t.Cleanup(func() {
		if _, err := daemon.Running(home); err == nil {
			if out, code := runProcess(t, home, "stop"); code != 0 {
				t.Errorf("stop the chat's daemon: exit %d: %s", code, out)
			}
		}
	})
}

// chatSession finds the session id the chat names on its way out.
var chatSession = regexp.MustCompile(`continue with astrid -p --session (s-[0-9a-f]{32})`)

// waitForAll returns the screen once it shows every one of want: the UI
// redraws at its frame rate, after the lines it prints above itself, so a
// screen that shows one of them may still show the frame before.
func (term *terminal) waitForAll(want ...string) string {
	term.t.Helper()
	return testutil.WaitForValue(term.t, daemonPatience, fmt.Sprintf("the terminal to show all of %q", want), func() (string, bool) {
		screen := term.run("capture-pane", "-p", "-J")
		all := true
		for _, w := range want {
			all = all && strings.Contains(screen, w)
		}
		return screen, all
	})
}

// In a real terminal, `astrid chat` starts a daemon (none runs) and runs a
// replayed turn through it: the model's call
// of a mutable tool is asked about inline, answered with "y", runs (the
// file is written), folds to one line, and the answer streams in below
// it. Two Ctrl-C with no turn running leave, naming the session, which
// holds the whole turn.
func TestChatTurnWithApprovalInATerminal(t *testing.T) {
	ws := promptHome(t, writeScript)
	home := os.Getenv("ASTRID_HOME")
	stopDaemonAtCleanup(t, home)
	term := newTerminal(t)
	term.start(astridLine(home, ws, "chat"))
	term.waitFor("/help")

	term.run("send-keys", "-l", "write the notes")
	term.run("send-keys", "Enter")
	screen := term.waitFor("Allow? [y] once  [s] this session  [a] always  [N] deny")
	for _, want := range []string{
		"› write the notes",
		`⋯ write_file {"file_path":"notes.txt","content":"from the agent"}`,
		"astrid-capsule-fs",
		"write_file notes.txt (new file)", // the question shows the change as a diff
		"+ from the agent",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("while asking, the screen lacks %q:\n%s", want, screen)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes.txt exists before the call was approved (%v)", err)
	}

	term.run("send-keys", "y")
	screen = term.waitForAll("Done with the file.", "· /help")
	for _, want := range []string{
		`✓ write_file {"file_path":"notes.txt","content":"from the agent"} · approved once`,
		"└ ",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("after the answer, the screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "Allow?") || strings.Contains(screen, "⋯ write_file") {
		t.Fatalf("the question or the running call is still shown:\n%s", screen)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(data) != "from the agent" {
		t.Fatalf("notes.txt: %q, %v", data, err)
	}

	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	screen = term.waitFor("EXIT=")
	m := chatSession.FindStringSubmatch(screen)
	if !strings.Contains(screen, "EXIT=0") || m == nil {
		t.Fatalf("leaving the chat shows:\n%s", screen)
	}
	// No daemon ran: the chat started one, which outlives it.
	if pid, err := daemon.Running(home); err != nil || pid == 0 {
		t.Fatalf("the daemon astrid chat started is not running: pid %d, %v", pid, err)
	}
	out, errOut, code := runAstrid(t, "", "session", "show", m[1])
	if code != 0 || !strings.Contains(out, "write the notes") || !strings.Contains(out, "Done with the file.") {
		t.Fatalf("session show %s: exit %d\n%s\n%s", m[1], code, out, errOut)
	}
}

// Ctrl-C cancels the running turn (its tool call waits on a FIFO forever)
// and the chat goes on: the turn ends "Cancelled.", a new prompt can be
// typed, and two more Ctrl-C leave.
func TestChatCtrlCCancelsATurnInATerminal(t *testing.T) {
	ws := promptHome(t, pipeScript)
	pendingFIFO(t, ws)
	home := os.Getenv("ASTRID_HOME")
	stopDaemonAtCleanup(t, home)
	term := newTerminal(t)
	term.start(astridLine(home, ws, "chat"))
	term.waitFor("/help")

	term.run("send-keys", "-l", "read the pipe")
	term.run("send-keys", "Enter")
	term.waitFor(`⋯ read_file {"file_path":"pipe"}`)
	term.run("send-keys", "C-c")
	screen := term.waitForAll("Cancelled.", "· /help")
	if strings.Contains(screen, "EXIT=") || strings.Contains(screen, "⋯ read_file") || !strings.Contains(screen, `⊘ read_file {"file_path":"pipe"} (no result: the turn ended)`) {
		t.Fatalf("after one Ctrl-C during a turn the screen shows:\n%s", screen)
	}
	term.run("send-keys", "-l", "typed after")
	term.waitFor("› typed after")
	term.run("send-keys", "C-c")
	term.run("send-keys", "C-c")
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || chatSession.FindStringSubmatch(screen) == nil {
		t.Fatalf("leaving the chat shows:\n%s", screen)
	}
}

// Without a terminal astrid chat says to use astrid -p.
func TestChatNeedsATerminal(t *testing.T) {
	promptHome(t, "")
	_, errOut, code := runAstrid(t, "", "chat")
	if code != 2 || !strings.Contains(errOut, "astrid chat needs a terminal") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
