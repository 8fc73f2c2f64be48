package chatui

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// /compact starts a compact action on the chat's session (with the pinned
// provider), shows the compaction's event and the outcome as notices, and
// is refused while a turn runs; /help lists it.
func TestCompactCommand(t *testing.T) {
	h := newHarness(t, Options{SessionID: "s-c", Provider: "openai"})
	h.command("/help")
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "/compact") {
		t.Fatalf("/help lacks /compact:\n%s", got)
	}
	h.prompt("/compact")
	p := h.be.prompts[0]
	if p.SessionID != "s-c" || p.Context.Action != ipc.ActionCompact || p.Context.Provider != "openai" || p.Text != "" {
		t.Fatalf("/compact sent %+v", p)
	}
	h.command("/compact")
	h.mustShow("a turn is running")
	if len(h.be.prompts) != 1 {
		t.Fatalf("/compact under a running turn sent %d prompts", len(h.be.prompts))
	}
	h.event(agentclient.Event{Kind: agentclient.EventCompacted, Compacted: ipc.AgentCompacted{OK: true, Messages: 12, TokensBefore: 900, TokensAfter: 200, Window: 1000}})
	h.final(ipc.OutcomeCompacted, "Compacted the first 12 messages of session s-c into a summary.")
	got := strings.Join(h.printed(), "\n")
	for _, want := range []string{"the first 12 messages were summarized", "900 → 200 of 1000 tokens", "Compacted the first 12 messages"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the transcript lacks %q:\n%s", want, got)
		}
	}
	// A failed compaction is a warning naming the reason.
	h.prompt("hello")
	h.event(agentclient.Event{Kind: agentclient.EventCompacted, Compacted: ipc.AgentCompacted{Reason: "the model returned an empty summary"}})
	h.final(ipc.OutcomeAnswer, "hi")
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "nothing compacted (the model returned an empty summary)") {
		t.Fatalf("the transcript lacks the failure:\n%s", got)
	}
}
