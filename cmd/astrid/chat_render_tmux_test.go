package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderScript: a markdown answer (with a table), then an edit of notes.txt.
const renderScript = `{"match": {"user": "explain"}}
{"TextDelta": "# Plan\n\nSome **bold** words and ` + "`" + `inline code` + "`" + `.\n\n- first point\n- second point\n\n"}
{"TextDelta": "` + "```" + `go\nfunc main() { fmt.Println(\"hi\") }\n` + "```" + `\n\n"}
{"TextDelta": "| File | Lines |\n|:--|--:|\n| main.go | 120 |\n| a.go | 7 |\n"}
"Done"
{"match": {"tool_results": ["e1"]}}
{"TextDelta": "Edited."}
"Done"
{"match": {"user": "edit"}}
{"ToolCallStart": {"id": "e1", "name": "replace_in_file"}}
{"ToolCallDelta": {"id": "e1", "args_delta": "{\"file_path\":\"notes.txt\",\"old_string\":\"old line\",\"new_string\":\"new line\"}"}}
{"ToolCallEnd": {"id": "e1"}}
"Done"
`

// In a real terminal: a markdown answer is rendered (no markup left, the
// code block's text kept, the table's columns aligned), the edit's question shows the change as a
// diff, and /undo puts the file back as it was before the turn.
func TestChatRendersDiffsAndUndoesInATerminal(t *testing.T) {
	ws := promptHome(t, renderScript)
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("old line\nkept line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := os.Getenv("ASTRID_HOME")
	stopDaemonAtCleanup(t, home)
	term := newTerminal(t)
	term.start(astridLine(home, ws, "chat"))
	term.waitFor("/help")

	term.run("send-keys", "-l", "explain")
	term.run("send-keys", "Enter")
	screen := term.waitForAll("second point", `func main() { fmt.Println("hi") }`, "a.go    │     7", "· /help")
	for _, want := range []string{"Plan", "Some bold words and inline code.", "• first point", "• second point",
		"File    │ Lines\n", "────────┼──────", "main.go │   120\n"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the rendered answer lacks %q:\n%s", want, screen)
		}
	}
	for _, markup := range []string{"# Plan", "**bold**", "`inline code`", "```", "- first point", "|:--", "| main.go"} {
		if strings.Contains(screen, markup) {
			t.Fatalf("the answer still shows its markup %q:\n%s", markup, screen)
		}
	}

	term.run("send-keys", "-l", "edit the notes")
	term.run("send-keys", "Enter")
	screen = term.waitForAll("Allow?", "replace_in_file notes.txt")
	if !strings.Contains(screen, "  - old line\n  + new line\n  Allow?") {
		t.Fatalf("the question does not show the change as a diff:\n%s", screen)
	}
	term.run("send-keys", "y")
	term.waitForAll("Edited.", "· /help")
	if b, _ := os.ReadFile(notes); string(b) != "new line\nkept line\n" {
		t.Fatalf("notes.txt after the edit: %q", b)
	}

	term.run("send-keys", "-l", "/undo")
	term.run("send-keys", "Enter")
	term.waitForAll("Undid turn 1 of 1 kept for this session:", "✓ notes.txt: restored (19 bytes)")
	if b, _ := os.ReadFile(notes); string(b) != "old line\nkept line\n" {
		t.Fatalf("notes.txt after /undo: %q", b)
	}
	term.run("send-keys", "C-c")
	term.waitFor("Ctrl-C again to leave")
	term.run("send-keys", "C-c")
	term.waitFor("EXIT=")
}
