package chatui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

func elicitEvent(id string, f ipc.OnboardingField) agentclient.Event {
	return agentclient.Event{Kind: agentclient.EventElicit, Elicit: ipc.ElicitRequest{RequestID: id, CapsuleID: "weather", Field: f, CallID: "c1"}}
}

// A secret is typed on a line of its own, drawn as dots, and sent as
// typed; it reaches neither the screen, the scrollback nor the prompt
// history. A paste lands on the answer line too.
func TestElicitSecretIsMasked(t *testing.T) {
	const secret = "sk-live-4242"
	h := newHarness(t, Options{})
	ft := h.prompt("forecast please")
	h.event(elicitEvent("e1", ipc.OnboardingField{Key: "API_KEY", Prompt: "Enter your API key", FieldType: ipc.FieldType{Kind: ipc.FieldSecret}}))
	h.mustShow("? Capsule 'weather' asks for API_KEY")
	h.mustShow("Enter your API key: ")
	h.typeText(secret[:4])
	h.send(tea.PasteMsg{Content: secret[4:]})
	h.mustShow(strings.Repeat("•", len(secret)))
	h.mustNotShow(secret[:4])
	if h.m.editor.value() != "" {
		t.Fatalf("the secret reached the prompt line: %q", h.m.editor.value())
	}
	cmd := h.key(tea.KeyEnter, 0)
	if cmd == nil || cmd() != nil {
		t.Fatal("no answer sent")
	}
	if len(ft.elicited) != 1 || ft.elicited[0].RequestID != "e1" || ft.elicited[0].Value == nil || *ft.elicited[0].Value != secret {
		t.Fatalf("answers %+v", ft.elicited)
	}
	h.mustNotShow("asks for API_KEY")
	h.final(ipc.OutcomeAnswer, "Sunny.")
	all := strings.Join(h.printed(), "\n")
	if strings.Contains(all, secret) || strings.Contains(all, secret[:4]) || !strings.Contains(all, "gave API_KEY to weather") {
		t.Fatalf("scrollback:\n%s", all)
	}
	if strings.Contains(strings.Join(h.m.editor.history, "\n"), secret) {
		t.Fatal("the secret entered the prompt history")
	}
}

// A select is answered by an option's number; a number out of range keeps
// the question and says what fits; Esc declines the next question; a
// question still open when the turn ends is dropped.
func TestElicitSelectAndDecline(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	def := "eu"
	h.event(elicitEvent("e1", ipc.OnboardingField{Key: "REGION", Prompt: "Pick a region", Default: &def,
		FieldType: ipc.FieldType{Kind: ipc.FieldEnum, Options: []string{"us", "eu"}}}))
	h.event(elicitEvent("e2", ipc.OnboardingField{Key: "NAME", Prompt: "Your name", FieldType: ipc.FieldType{Kind: ipc.FieldText}}))
	h.event(elicitEvent("e3", ipc.OnboardingField{Key: "TAGS", Prompt: "Tags", FieldType: ipc.FieldType{Kind: ipc.FieldArray}}))
	h.mustShow("1) us")
	h.mustShow("*2) eu")
	h.mustShow("(2 more waiting)")
	h.typeText("7")
	if cmd := h.key(tea.KeyEnter, 0); cmd != nil {
		t.Fatal("an answer out of range was sent")
	}
	h.mustShow("answer with a number from 1 to 2")
	h.mustShow("Pick a region")
	h.key(tea.KeyBackspace, 0)
	h.typeText("1")
	h.key(tea.KeyEnter, 0)()
	h.mustShow("asks for NAME")
	h.typeText("Ada")
	h.key(tea.KeyEscape, 0)()
	h.mustShow("asks for TAGS")
	h.final(ipc.OutcomeAnswer, "ok")
	h.mustNotShow("asks for TAGS")
	if len(ft.elicited) != 2 || *ft.elicited[0].Value != "us" || !ft.elicited[1].Cancelled() || ft.elicited[1].RequestID != "e2" {
		t.Fatalf("answers %+v", ft.elicited)
	}
	all := strings.Join(h.printed(), "\n")
	if !strings.Contains(all, "gave REGION to weather") || !strings.Contains(all, "declined to give NAME to weather") {
		t.Fatalf("scrollback:\n%s", all)
	}
}

// Approvals come first; an elicit question waits behind them and keys
// meant for the approval do not type into its answer.
func TestApprovalsBeforeElicits(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	h.event(elicitEvent("e1", ipc.OnboardingField{Key: "NAME", Prompt: "Your name", FieldType: ipc.FieldType{Kind: ipc.FieldText}}))
	h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: ipc.ApprovalRequired{RequestID: "r1", Action: "write_file", Reason: "changes files"}})
	h.mustShow("? changes files")
	h.send(tea.KeyPressMsg{Code: 'y', Text: "y"})()
	h.mustShow("asks for NAME")
	if h.m.answer.value() != "" {
		t.Fatalf("the approval key typed into the answer: %q", h.m.answer.value())
	}
	h.typeText("Ada")
	h.key(tea.KeyEnter, 0)()
	if len(ft.answers) != 1 || len(ft.elicited) != 1 || *ft.elicited[0].Value != "Ada" {
		t.Fatalf("answers %v, elicited %+v", ft.answers, ft.elicited)
	}
}

// A form of several fields is declined at once, saying why, and asks
// nothing on the answer line.
func TestElicitFormDeclinedInChat(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	schema, err := ipc.ParseElicitSchema([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := elicitEvent("f1", ipc.OnboardingField{Key: "profile", Prompt: "Who?", FieldType: ipc.FieldType{Kind: ipc.FieldText}})
	ev.Elicit.Form = &ipc.ElicitForm{Schema: schema}
	cmd := h.event(ev)
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || len(batch) == 0 || batch[0] == nil || batch[0]() != nil {
		t.Fatalf("no answer sent: %#v", cmd)
	}
	if len(ft.elicited) != 1 || ft.elicited[0].RequestID != "f1" || !ft.elicited[0].Cancelled() {
		t.Fatalf("answers %+v", ft.elicited)
	}
	h.mustNotShow("asks for profile")
	h.final(ipc.OutcomeAnswer, "ok")
	if all := strings.Join(h.printed(), "\n"); !strings.Contains(all, "declined a form of 2 fields from weather") {
		t.Fatalf("scrollback:\n%s", all)
	}
}
