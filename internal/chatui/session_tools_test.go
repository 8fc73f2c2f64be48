package chatui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// sessionFake is a fake backend that also answers /undo and /cost.
type sessionFake struct {
	*fakeBackend
	undoSession string
	undoTurn    int
	result      sessionclient.UndoResult
	undoErr     error
	meta        sessionclient.Summary
}

func (f *sessionFake) undo(_ context.Context, session string, turn int) (sessionclient.UndoResult, error) {
	f.undoSession, f.undoTurn = session, turn
	return f.result, f.undoErr
}

func (f *sessionFake) sessionMeta(context.Context, string) (sessionclient.Summary, bool, error) {
	return f.meta, true, nil
}

func withSessionTools(h *harness) *sessionFake {
	f := &sessionFake{fakeBackend: h.be}
	h.m.be = f
	return f
}

// /undo asks for the chat's session's last turn and lists each file with
// what was done; an error is shown; without a session store it says so.
func TestUndoCommand(t *testing.T) {
	h := newHarness(t, Options{SessionID: "s-undo"})
	h.command("/undo")
	h.mustShow("/undo is not available here")

	f := withSessionTools(h)
	f.result.Turn, f.result.Turns, f.result.Shell = 2, 3, true
	f.result.Files = append(f.result.Files,
		struct {
			Path     string `json:"path"`
			Restored bool   `json:"restored"`
			What     string `json:"what"`
		}{"notes.txt", true, "restored (5 bytes)"},
		struct {
			Path     string `json:"path"`
			Restored bool   `json:"restored"`
			What     string `json:"what"`
		}{"edited.txt", false, "not restored: it changed since the turn"})
	h.printed()
	cmd := h.command("/undo")
	if cmd == nil {
		t.Fatal("/undo gave no command")
	}
	h.send(cmd())
	got := strings.Join(h.printed(), "\n")
	for _, want := range []string{"Undid turn 2 of 3 kept for this session:", "✓ notes.txt: restored (5 bytes)",
		"✗ edited.txt: not restored: it changed since the turn", "shell commands: what they changed is out of undo's reach"} {
		if !strings.Contains(got, want) {
			t.Errorf("/undo printed %q, lacking %q", got, want)
		}
	}
	if f.undoSession != "s-undo" {
		t.Fatalf("undid session %q", f.undoSession)
	}
	h.send(h.command("/undo 3")())
	if f.undoTurn != 3 {
		t.Fatalf("/undo 3 undid turn %d", f.undoTurn)
	}
	h.printed()
	h.command("/undo two")
	h.mustShow("/undo two: give a turn number")
	f.undoErr = errors.New("undo: session \"s-undo\" has no turn left to undo")
	h.send(h.command("/undo")())
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "/undo: undo: session \"s-undo\" has no turn left to undo") {
		t.Fatalf("/undo's error printed as %q", got)
	}
}

// /cost shows this chat's figures and the session's as its store keeps
// them.
func TestCostCommand(t *testing.T) {
	h := newHarness(t, Options{})
	f := withSessionTools(h)
	f.meta.Usage = &ipc.Usage{InputTokens: 5000, OutputTokens: 70}
	f.meta.CostUSD = 0.012
	h.prompt("q")
	cost := 0.0021
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{IsFinal: true, Outcome: ipc.OutcomeAnswer, Text: "a",
		Usage: &ipc.Usage{InputTokens: 1200, OutputTokens: 34, CachedTokens: 1024}, CostUSD: &cost}})
	h.printed()
	h.send(h.command("/cost")())
	got := strings.Join(h.printed(), "\n")
	for _, want := range []string{"This chat on session ", "1200 in (1024 cached), 34 out, $0.0021", "The whole session (its history): 5000 in, 70 out, $0.0120"} {
		if !strings.Contains(got, want) {
			t.Errorf("/cost printed %q, lacking %q", got, want)
		}
	}
}

// The status line names the workspace (the home as ~) before the session.
func TestStatusLineNamesTheWorkspace(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	h := newHarness(t, Options{SessionID: "s-ws", Workspace: filepath.Join(home, "src", "proj"), Provider: "replay", Model: "m1"})
	h.mustShow("~/src/proj · session s-ws · replay:m1")
}

// A write or edit question shows the change as a diff: an edit its old
// and new text, a write the difference from the file in the workspace (or
// a new file whole); a question whose arguments were cut past reading
// shows them as text.
func TestApprovalShowsADiff(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		q       ipc.ApprovalRequired
		want    []string
		wantNot []string
	}{
		{"edit", ipc.ApprovalRequired{RequestID: "r1", Action: "replace_in_file", Reason: "it changes things",
			Resource: `{"file_path":"a.txt","new_string":"TWO","old_string":"two"}`},
			[]string{"replace_in_file a.txt", "- two", "+ TWO"}, []string{"old_string"}},
		{"write over a file", ipc.ApprovalRequired{RequestID: "r2", Action: "write_file", Reason: "it changes things",
			Resource: `{"content":"one\nTWO\nthree\nfour\n","file_path":"a.txt"}`},
			[]string{"write_file a.txt", "- two", "+ TWO", "+ four"}, []string{"- one", "+ one", "- three"}},
		{"new file", ipc.ApprovalRequired{RequestID: "r3", Action: "write_file", Reason: "it changes things",
			Resource: `{"content":"hello\n","file_path":"new.txt"}`},
			[]string{"write_file new.txt (new file)", "+ hello"}, nil},
		{"no escape through the path", ipc.ApprovalRequired{RequestID: "r4", Action: "write_file", Reason: "it changes things",
			Resource: `{"content":"x\n","file_path":"../outside.txt"}`},
			[]string{"write_file ../outside.txt (its current content is not shown:", "+ x"}, nil},
		{"cut arguments", ipc.ApprovalRequired{RequestID: "r5", Action: "write_file", Reason: "it changes things",
			Resource: `{"content":"abc…(cut)`},
			[]string{`write_file {"content":"abc…(cut)`}, []string{"+ "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{Workspace: ws})
			h.prompt("q")
			h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: c.q})
			for _, w := range c.want {
				h.mustShow(w)
			}
			for _, w := range c.wantNot {
				h.mustNotShow(w)
			}
		})
	}
}
