package chatui

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// A running call's line shows its provider's last progress report; a
// report about no running call changes nothing, and the finished call's
// line is printed without it.
func TestToolProgressShownOnTheRunningCall(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.toolStarted("c1", "everything:slow", `{}`)
	progress := func(id string, n, total float64, msg string) {
		h.event(agentclient.Event{Kind: agentclient.EventToolProgress, ToolProgress: ipc.AgentToolProgress{CallID: id, Name: "everything:slow", Progress: n, Total: total, Message: msg}})
	}
	progress("c1", 1, 5, "")
	h.mustShow("⋯ everything:slow {} · 1/5")
	progress("c1", 2, 5, "copying\x1b[2J")
	h.mustShow("⋯ everything:slow {} · 2/5 copying")
	h.mustNotShow("1/5")
	progress("c-other", 4, 5, "")
	h.mustNotShow("4/5")
	h.toolFinished("c1", "everything:slow", "done", false)
	if got, want := h.printed(), []string{"✓ everything:slow {} (12ms)", "  └ done"}; !slices.Equal(got, want) {
		t.Fatalf("printed %q, want %q", got, want)
	}
}
