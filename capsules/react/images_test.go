package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// A prompt's images go into the user message after its text, kept in the
// session's history; an image the models cannot take ends the turn with
// an error naming it, and nothing is stored.
func TestPromptImagesReachTheHistory(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	png := ipc.PromptImage{Data: "iVBORw0KGgo=", MediaType: "image/png"}
	run := func(session string, images ...ipc.PromptImage) ipc.AgentResponse {
		t.Helper()
		turn, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{
			SessionID: session, Text: "what is this?", Images: images, Context: ipc.PromptContext{Provider: "echo"},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer turn.Close()
		return k.Collect(turn).Final
	}
	if f := run("s1", png); f.Outcome != ipc.OutcomeAnswer {
		t.Fatalf("final %+v", f)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if got := roles(h); got != "user:parts assistant:text" {
		t.Fatalf("history %s", got)
	}
	parts := h[0].Content.Parts
	if len(parts) != 2 || parts[0].Type != ipc.PartText || parts[0].Text != "what is this?" ||
		parts[1].Type != ipc.PartImage || parts[1].Data != png.Data || parts[1].MediaType != "image/png" {
		t.Fatalf("user message parts %+v", parts)
	}
	// Images alone, with no text: a prompt, stored without an empty
	// text part (providers refuse one).
	turn, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{
		SessionID: "only-images", Images: []ipc.PromptImage{png}, Context: ipc.PromptContext{Provider: "echo"},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := k.Collect(turn).Final
	turn.Close()
	if f.Outcome != ipc.OutcomeAnswer {
		t.Fatalf("an image alone: final %+v", f)
	}
	if h := history(t, k, ipc.DefaultPrincipal, "only-images"); len(h) == 0 || len(h[0].Content.Parts) != 1 || h[0].Content.Parts[0].Type != ipc.PartImage {
		t.Fatalf("an image alone: history %s", roles(h))
	}
	for _, tc := range []struct {
		name string
		img  ipc.PromptImage
		want string
	}{
		{"svg", ipc.PromptImage{Data: "PHN2Zz4=", MediaType: "image/svg+xml"}, `image 1 is "image/svg+xml"`},
		{"not base64", ipc.PromptImage{Data: "%%%", MediaType: "image/png"}, "not base64"},
		{"empty", ipc.PromptImage{MediaType: "image/jpeg"}, "no data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "bad-" + strings.ReplaceAll(tc.name, " ", "-")
			f := run(session, tc.img)
			if f.Outcome != ipc.OutcomeError || !strings.Contains(f.Text, tc.want) {
				t.Fatalf("final %+v, want an error containing %q", f, tc.want)
			}
			if h := history(t, k, ipc.DefaultPrincipal, session); len(h) != 0 {
				t.Fatalf("a refused prompt was stored: %s", roles(h))
			}
		})
	}
}
