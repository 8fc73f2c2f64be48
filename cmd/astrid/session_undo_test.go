package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// astrid session undo restores what a turn's write_file overwrote; a
// second undo finds nothing left; a file changed since is refused, with
// exit status 1 and the reason.
func TestSessionUndo(t *testing.T) {
	ws := promptHome(t, writeScript)
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("the person's notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runAstrid(t, "", "-p", "write the notes", "--yes", "--workspace", ws)
	if code != 0 {
		t.Fatalf("turn: exit %d: %s", code, errOut)
	}
	session := sessionNamed(t, errOut)
	if b, _ := os.ReadFile(notes); string(b) != "from the agent" {
		t.Fatalf("notes.txt = %q after the turn", b)
	}
	out, errOut, code := runAstrid(t, "", "session", "undo", session, "--workspace", ws)
	if code != 0 || !strings.Contains(out, "Undid turn 1 of 1 kept for session "+session) || !strings.Contains(out, "✓ notes.txt: restored (18 bytes)") {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(notes); string(b) != "the person's notes" {
		t.Fatalf("notes.txt = %q after undo", b)
	}
	_, errOut, code = runAstrid(t, "", "session", "undo", session, "--workspace", ws)
	if code != 1 || !strings.Contains(errOut, "no turn left to undo") {
		t.Fatalf("a second undo: exit %d: %s", code, errOut)
	}

	// Another turn, then the person edits the file: undo leaves it.
	if _, errOut, code := runAstrid(t, "", "-p", "write the notes", "--yes", "--session", session, "--workspace", ws); code != 0 {
		t.Fatalf("turn 2: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(notes, []byte("edited by hand"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runAstrid(t, "", "session", "undo", session, "--list", "--workspace", ws)
	if code != 0 || out != "turn 1: notes.txt (undone)\nturn 2: notes.txt\n" {
		t.Fatalf("--list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "session", "undo", session, "--turn", "2", "--workspace", ws)
	if code != 1 || !strings.Contains(out, "✗ notes.txt: not restored: it changed since the turn") {
		t.Fatalf("undo of a file changed since: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(notes); string(b) != "edited by hand" {
		t.Fatalf("notes.txt = %q: the person's edit was lost", b)
	}
}
