package chatui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// fakeTurn records what the UI does to a turn.
type fakeTurn struct {
	mu        sync.Mutex
	answers   [][2]string
	elicited  []ipc.ElicitResponse
	cancels   int
	closed    bool
	cancelErr error
}

func (t *fakeTurn) Next(ctx context.Context) (agentclient.Event, error) {
	<-ctx.Done()
	return agentclient.Event{}, ctx.Err()
}

func (t *fakeTurn) Answer(id, decision string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answers = append(t.answers, [2]string{id, decision})
	return nil
}

func (t *fakeTurn) AnswerElicit(r ipc.ElicitResponse) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.elicited = append(t.elicited, r)
	return nil
}

func (t *fakeTurn) Cancel() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancels++
	return t.cancelErr
}

func (t *fakeTurn) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
}

// fakeBackend starts fake turns and answers registry requests from its
// fields.
type fakeBackend struct {
	mu       sync.Mutex
	prompts  []agentclient.Prompt
	startErr error
	models   ipc.RegistryReply
	set      []string
}

func (b *fakeBackend) start(_ context.Context, p agentclient.Prompt) (turn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prompts = append(b.prompts, p)
	if b.startErr != nil {
		return nil, b.startErr
	}
	return &fakeTurn{}, nil
}

func (b *fakeBackend) listModels(context.Context) (ipc.RegistryReply, error) { return b.models, nil }

func (b *fakeBackend) currentModel(context.Context) (ipc.RegistryReply, error) { return b.models, nil }

func (b *fakeBackend) setModel(_ context.Context, id string) (ipc.RegistryReply, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set = append(b.set, id)
	for _, e := range b.models.Providers {
		if e.ID == id {
			return ipc.RegistryReply{ActiveModel: &e, Chosen: true}, nil
		}
	}
	return ipc.RegistryReply{}, errors.New("registry: unknown model " + id)
}

// clock is a settable now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// harness is a model over a fake backend with a settable clock.
type harness struct {
	t     *testing.T
	m     *Model
	be    *fakeBackend
	clock *clock
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	be := &fakeBackend{}
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newModel(context.Background(), be, o)
	m.now = c.now
	m.width = 100
	return &harness{t: t, m: m, be: be, clock: c}
}

// send steps the model with msg and returns the command it gave.
func (h *harness) send(msg tea.Msg) tea.Cmd { return h.m.step(msg) }

// typeText types s into the prompt line, rune by rune.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) key(code rune, mod tea.KeyMod) tea.Cmd {
	return h.send(tea.KeyPressMsg{Code: code, Mod: mod})
}

func (h *harness) ctrlC() tea.Cmd { return h.key('c', tea.ModCtrl) }

// prompt sends text and starts its (fake) turn, as the program would run
// the command the Enter key gives.
func (h *harness) prompt(text string) *fakeTurn {
	h.t.Helper()
	h.typeText(text)
	cmd := h.key(tea.KeyEnter, 0)
	if cmd == nil {
		h.t.Fatalf("Enter on %q started nothing", text)
	}
	msg := cmd()
	h.send(msg)
	ft, _ := h.m.turn.(*fakeTurn)
	if ft == nil {
		h.t.Fatalf("no turn running after %q (start gave %#v)", text, msg)
	}
	return ft
}

// event delivers ev as the running turn's next event.
func (h *harness) event(ev agentclient.Event) tea.Cmd {
	return h.send(eventMsg{turn: h.m.turn, ev: ev})
}

func (h *harness) delta(s string) {
	h.event(agentclient.Event{Kind: agentclient.EventDelta, Delta: ipc.AgentStreamDelta{Delta: s}})
}

func (h *harness) toolStarted(id, name, args string) {
	h.event(agentclient.Event{Kind: agentclient.EventToolStarted, ToolStarted: ipc.AgentToolStarted{CallID: id, Name: name, Arguments: json.RawMessage(args)}})
}

func (h *harness) toolFinished(id, name, summary string, isErr bool) {
	h.event(agentclient.Event{Kind: agentclient.EventToolFinished, ToolFinished: ipc.AgentToolFinished{CallID: id, Name: name, Summary: summary, IsError: isErr, DurationMS: 12}})
}

func (h *harness) final(outcome, text string) {
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{Outcome: outcome, Text: text, IsFinal: true}})
}

// printed returns (and empties) the lines gone to the scrollback, without
// their colours.
func (h *harness) printed() []string {
	lines := h.m.takeOutbox()
	for i, l := range lines {
		lines[i] = ansi.Strip(l)
	}
	return lines
}

// screen is the live view without colours.
func (h *harness) screen() string { return ansi.Strip(h.m.render()) }

func (h *harness) mustShow(want string) {
	h.t.Helper()
	if s := h.screen(); !strings.Contains(s, want) {
		h.t.Fatalf("the screen does not show %q:\n%s", want, s)
	}
}

func (h *harness) mustNotShow(unwanted string) {
	h.t.Helper()
	if s := h.screen(); strings.Contains(s, unwanted) {
		h.t.Fatalf("the screen shows %q:\n%s", unwanted, s)
	}
}
