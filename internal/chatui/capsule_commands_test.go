package chatui

import (
	"context"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/commandclient"
)

// commandBackend is the fake backend that also lists capsule commands.
type commandBackend struct {
	*fakeBackend
	cmds     []commandclient.Command
	reserved []string
}

func (b *commandBackend) listCommands(_ context.Context, reserved []string) ([]commandclient.Command, error) {
	b.reserved = reserved
	return b.cmds, nil
}

// A capsule's command is listed by /help (a renamed one saying why) and
// `/name args` sends its expanded prompt as a turn; one without a prompt
// says so; the list is asked for with the chat's built-ins reserved.
func TestCapsuleCommands(t *testing.T) {
	h := newHarness(t, Options{SessionID: "s-cmd"})
	be := &commandBackend{fakeBackend: h.be, cmds: []commandclient.Command{
		{Name: "deploy", Capsule: "deployer", Description: "Deploy to production", Prompt: "Deploy {{args}} to production."},
		{Name: "deployer:help", Capsule: "deployer", Description: "How deploys work", Prompt: "Explain deploys.", Renamed: "/help is taken by a built-in command"},
		{Name: "status", Capsule: "deployer", Description: "no prompt"},
	}}
	h.m = newModel(context.Background(), be, Options{SessionID: "s-cmd"})
	h.m.width = 100
	h.send(h.m.loadCommands("")())
	if !strings.Contains(strings.Join(be.reserved, " "), "help") || !strings.Contains(strings.Join(be.reserved, " "), "compact") {
		t.Fatalf("reserved names %v", be.reserved)
	}
	h.command("/help")
	got := strings.Join(h.printed(), "\n")
	for _, want := range []string{"/deploy", "Deploy to production (deployer)", "/deployer:help", "renamed: /help is taken by a built-in command", "/clear"} {
		if !strings.Contains(got, want) {
			t.Fatalf("/help lacks %q:\n%s", want, got)
		}
	}
	h.command("/status")
	h.mustShow("has no prompt")
	h.prompt("/deploy staging")
	p := h.be.prompts[len(h.be.prompts)-1]
	if p.Text != "Deploy staging to production." || p.SessionID != "s-cmd" || p.Context.Action != "" {
		t.Fatalf("/deploy sent %+v", p)
	}
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "/deploy staging") {
		t.Fatalf("the transcript does not show the command line:\n%s", got)
	}
}
