package chatui

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

func (h *harness) command(line string) tea.Cmd {
	h.typeText(line)
	return h.key(tea.KeyEnter, 0)
}

// /clear starts a new session (not while a turn runs); /session names the
// session and continues another; a session id that is not one is refused.
func TestSessionCommands(t *testing.T) {
	h := newHarness(t, Options{SessionID: "s-first"})
	h.command("/session")
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "astrid -p --session s-first") {
		t.Fatalf("/session printed %q", got)
	}
	h.mustShow("session s-first")
	h.command("/clear")
	if s := h.m.SessionID(); s == "s-first" || !strings.HasPrefix(s, "s-") {
		t.Fatalf("/clear left the session %q", s)
	}
	h.mustShow("session " + h.m.SessionID())
	h.command("/session ../etc")
	if h.m.SessionID() == "../etc" {
		t.Fatal("an invalid session id was taken")
	}
	h.mustShow("/session:")
	h.command("/session s-other")
	if h.m.SessionID() != "s-other" {
		t.Fatalf("session %q, want s-other", h.m.SessionID())
	}
	h.prompt("q")
	if h.be.prompts[0].SessionID != "s-other" {
		t.Fatalf("the turn ran on %q", h.be.prompts[0].SessionID)
	}
	h.command("/clear")
	if h.m.SessionID() != "s-other" {
		t.Fatal("/clear switched sessions under a running turn")
	}
	h.mustShow("a turn is running")
}

func TestHelpAndUnknownCommand(t *testing.T) {
	h := newHarness(t, Options{})
	h.command("/help")
	got := strings.Join(h.printed(), "\n")
	for _, want := range []string{"/clear", "/session", "/models", "Ctrl-C cancels"} {
		if !strings.Contains(got, want) {
			t.Fatalf("/help lacks %q:\n%s", want, got)
		}
	}
	h.command("/nope")
	h.mustShow("unknown command /nope")
	if len(h.be.prompts) != 0 {
		t.Fatal("a slash command went to the agent")
	}
}

// /models lists the registry's models with the active one selected;
// Down and Enter choose the next, which then applies instead of the
// provider pinned on the command line; Esc closes without choosing.
func TestModelsPicker(t *testing.T) {
	h := newHarness(t, Options{Provider: "replay"})
	replay := ipc.ModelEntry{ID: "replay:replay", Ready: true, Description: "offline"}
	openai := ipc.ModelEntry{ID: "openai:gpt", Ready: false, Why: "no API key"}
	h.be.models = ipc.RegistryReply{Providers: []ipc.ModelEntry{replay, openai}, ActiveModel: &replay}

	h.send(h.command("/models")())
	h.mustShow("▸ replay:replay *  offline")
	h.mustShow("openai:gpt  not ready: no API key")
	h.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.mustNotShow("openai:gpt")

	h.send(h.command("/models")())
	h.key(tea.KeyDown, 0)
	h.mustShow("▸ openai:gpt")
	h.send(h.key(tea.KeyEnter, 0)())
	if !slices.Equal(h.be.set, []string{"openai:gpt"}) {
		t.Fatalf("chosen %v", h.be.set)
	}
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "model openai:gpt") || !strings.Contains(got, "not ready: no API key") {
		t.Fatalf("printed %q", got)
	}
	h.mustShow("· openai:gpt ·")
	h.prompt("q")
	if c := h.be.prompts[0].Context; c.Provider != "" || c.Model != "" {
		t.Fatalf("the turn still pins %+v after /models chose", c)
	}

	h.send(h.command("/models nonsense")())
	h.mustShow("unknown model nonsense")
}

// The status line names the registry's active model once it answers.
func TestStatusNamesActiveModel(t *testing.T) {
	h := newHarness(t, Options{})
	e := ipc.ModelEntry{ID: "anthropic:claude"}
	h.be.models = ipc.RegistryReply{ActiveModel: &e}
	h.send(h.m.Init()())
	h.mustShow("· anthropic:claude ·")
}

// Leaving with a turn running cancels it and writes what was not printed.
func TestLeaveCancelsTheTurn(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	h.printed()
	h.delta("half an ans")
	var out bytes.Buffer
	h.m.leave(&out)
	if ft.cancels != 1 || !ft.closed {
		t.Fatalf("cancels %d, closed %v", ft.cancels, ft.closed)
	}
	if got := out.String(); !strings.Contains(got, "half an ans") || !strings.Contains(got, "cancelled") {
		t.Fatalf("wrote %q", got)
	}
}

// The status line sums the tokens and cost of the session's turns; a turn
// without a price makes the cost a lower bound; a new session starts
// again from nothing.
func TestStatusShowsUsage(t *testing.T) {
	h := newHarness(t, Options{})
	cost := 0.0125
	for _, r := range []ipc.AgentResponse{
		{Usage: &ipc.Usage{InputTokens: 1200, OutputTokens: 34, CachedTokens: 1024}, CostUSD: &cost},
		{Usage: &ipc.Usage{InputTokens: 800, OutputTokens: 16}, CostUSD: &cost},
	} {
		h.prompt("q")
		r.Outcome, r.Text, r.IsFinal = ipc.OutcomeAnswer, "a", true
		h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: r})
	}
	h.mustShow("· 2000 in (1024 cached), 50 out, $0.0250 ·")
	h.prompt("q")
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{Outcome: ipc.OutcomeAnswer, Text: "a", IsFinal: true,
		Usage: &ipc.Usage{InputTokens: 1, OutputTokens: 1}}})
	h.mustShow("· 2001 in (1024 cached), 51 out, ≥ $0.0250 ·")
	h.command("/clear")
	if strings.Contains(h.m.statusLine(), " in") {
		t.Fatalf("after /clear: %q", h.m.statusLine())
	}
}
