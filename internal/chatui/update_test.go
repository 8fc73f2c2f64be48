package chatui

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// The prompt goes out on the chat's session with the pinned provider; the
// answer streams in: whole lines go to the scrollback as they complete,
// the line being written stays live, and the final answer is not shown
// twice.
func TestAnswerStreams(t *testing.T) {
	h := newHarness(t, Options{SessionID: "s-1", Provider: "replay"})
	ft := h.prompt("hello there")
	if p := h.be.prompts[0]; p.SessionID != "s-1" || p.Text != "hello there" || p.Context.Provider != "replay" || p.Principal != ipc.DefaultPrincipal {
		t.Fatalf("prompt sent: %+v", p)
	}
	if got := h.printed(); !slices.Equal(got, []string{"› hello there"}) {
		t.Fatalf("the prompt was echoed as %q", got)
	}
	h.mustShow("working… Ctrl-C cancels")

	h.delta("Hel")
	h.delta("lo\nWor")
	if got := h.printed(); !slices.Equal(got, []string{"Hello"}) {
		t.Fatalf("after a complete line, printed %q", got)
	}
	h.mustShow("Wor")
	h.mustNotShow("Hello")
	h.delta("ld")
	h.final(ipc.OutcomeAnswer, "Hello\nWorld")
	if got := h.printed(); !slices.Equal(got, []string{"World", ""}) {
		t.Fatalf("at the end, printed %q", got)
	}
	if h.m.turn != nil || !ft.closed {
		t.Fatal("the turn was not closed at its final response")
	}
	h.mustNotShow("World")
	h.mustShow("/help")
}

// A provider that sends its answer only in the final response still has
// it shown; an answer that differs from what streamed keeps what was shown.
func TestFinalTextNotStreamed(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.final(ipc.OutcomeAnswer, "All at once.")
	if got := h.printed(); !slices.Equal(got, []string{"All at once.", ""}) {
		t.Fatalf("printed %q", got)
	}
	h.prompt("q2")
	h.printed()
	h.delta("streamed words")
	h.final(ipc.OutcomeAnswer, "other words")
	if got := h.printed(); !slices.Equal(got, []string{"streamed words", ""}) {
		t.Fatalf("printed %q", got)
	}
}

// Tool calls show while they run and fold to one line each when done; the
// scrollback keeps the order they started in, even when a later one
// finishes first.
func TestToolCallsFoldInOrder(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.delta("Reading.")
	h.toolStarted("c1", "read_file", `{"file_path": "a.txt"}`)
	if got := h.printed(); !slices.Equal(got, []string{"Reading."}) {
		t.Fatalf("text before a tool call printed as %q", got)
	}
	h.mustShow(`⋯ read_file {"file_path":"a.txt"}`)
	h.toolStarted("c2", "list_directory", `{}`)
	h.toolFinished("c2", "list_directory", "a.txt\nb.txt", false)
	if got := h.printed(); len(got) != 0 {
		t.Fatalf("a call finished before an earlier one still running was printed: %q", got)
	}
	h.mustShow("✓ list_directory {} (12ms)")
	h.toolFinished("c1", "read_file", "line one\n\tline two", true)
	want := []string{
		`✗ read_file {"file_path":"a.txt"} (12ms)`, "  └ line one line two",
		"✓ list_directory {} (12ms)", "  └ a.txt b.txt",
	}
	if got := h.printed(); !slices.Equal(got, want) {
		t.Fatalf("printed\n%q\nwant\n%q", got, want)
	}
	h.mustNotShow("read_file")
}

// A question about a call is asked inline; only y/s/a/n, Enter and Esc
// answer it (typing ahead does not), the answer goes to the turn, and the
// call's line says what was answered.
func TestApprovalAnsweredInline(t *testing.T) {
	for _, tc := range []struct {
		key      tea.KeyPressMsg
		decision string
	}{
		{tea.KeyPressMsg{Code: 'y', Text: "y"}, ipc.DecisionApprove},
		{tea.KeyPressMsg{Code: 's', Text: "s"}, ipc.DecisionApproveSession},
		{tea.KeyPressMsg{Code: 'a', Text: "a"}, ipc.DecisionApproveAlways},
		{tea.KeyPressMsg{Code: 'n', Text: "n"}, ipc.DecisionDeny},
		{tea.KeyPressMsg{Code: tea.KeyEnter}, ipc.DecisionDeny},
		{tea.KeyPressMsg{Code: tea.KeyEscape}, ipc.DecisionDeny},
	} {
		h := newHarness(t, Options{})
		ft := h.prompt("write")
		h.toolStarted("w1", "write_file", `{"file_path":"n.txt"}`)
		h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: ipc.ApprovalRequired{
			RequestID: "r1", CallID: "w1", Action: "write_file", Resource: `{"file_path":"n.txt"}`, Reason: "astrid-capsule-fs changes files",
		}})
		h.mustShow("? astrid-capsule-fs changes files")
		h.mustShow(`write_file {"file_path":"n.txt"}`)
		h.mustShow("Allow? " + agentclient.DecisionChoices)
		h.typeText("xq")
		if len(ft.answers) != 0 || h.m.editor.value() != "" {
			t.Fatalf("keys that are no answer answered %v or reached the prompt line %q", ft.answers, h.m.editor.value())
		}
		cmd := h.send(tc.key)
		if cmd == nil {
			t.Fatalf("%s: no answer sent", tc.key)
		}
		if msg := cmd(); msg != nil {
			t.Fatalf("%s: answer failed: %#v", tc.key, msg)
		}
		if !slices.Equal(ft.answers, [][2]string{{"r1", tc.decision}}) {
			t.Fatalf("%s: answers %v, want r1 %s", tc.key, ft.answers, tc.decision)
		}
		h.mustNotShow("Allow?")
		h.mustShow("write_file {\"file_path\":\"n.txt\"} · " + decisionWords[tc.decision])
	}
}

// Two questions are asked one after the other; a question naming no call
// is answered and noted on a line of its own.
func TestApprovalsQueue(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	for _, id := range []string{"r1", "r2"} {
		h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: ipc.ApprovalRequired{RequestID: id, Action: "act-" + id, Reason: "why " + id}})
	}
	h.mustShow("why r1")
	h.mustShow("(1 more waiting)")
	h.send(tea.KeyPressMsg{Code: 'y', Text: "y"})()
	h.mustShow("why r2")
	h.send(tea.KeyPressMsg{Code: 'n', Text: "n"})()
	if !slices.Equal(ft.answers, [][2]string{{"r1", ipc.DecisionApprove}, {"r2", ipc.DecisionDeny}}) {
		t.Fatalf("answers %v", ft.answers)
	}
	h.final(ipc.OutcomeAnswer, "ok")
	got := strings.Join(h.printed(), "\n")
	if !strings.Contains(got, "approved once: act-r1") || !strings.Contains(got, "denied: act-r2") {
		t.Fatalf("the answers were not noted:\n%s", got)
	}
}

// Ctrl-C during a turn cancels it (once, however often it is pressed
// later) and leaves only when pressed again within the window; the
// cancelled final response ends the turn and drops its open questions.
func TestCtrlCCancelsThenLeaves(t *testing.T) {
	h := newHarness(t, Options{})
	ft := h.prompt("q")
	h.toolStarted("c1", "read_file", `{}`)
	h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: ipc.ApprovalRequired{RequestID: "r1", Action: "a", Reason: "r"}})
	if cmd := h.ctrlC(); cmd == nil || ft.cancels != 1 || h.m.quitting {
		t.Fatalf("first Ctrl-C: cancels %d, quitting %v, grace timer %v", ft.cancels, h.m.quitting, cmd != nil)
	}
	h.mustShow("cancelling…")
	h.clock.t = h.clock.t.Add(exitWindow)
	h.ctrlC()
	if h.m.quitting || ft.cancels != 1 {
		t.Fatalf("a Ctrl-C after the window: quitting %v, cancels %d", h.m.quitting, ft.cancels)
	}
	h.final(ipc.OutcomeCancelled, "Cancelled.")
	if got := h.printed(); !slices.Contains(got, "Cancelled.") || !slices.Contains(got, "⊘ read_file {} (no result: the turn ended)") || len(h.m.approvals) != 0 || h.m.turn != nil {
		t.Fatalf("after the cancelled response: printed %q, questions %d, turn %v", got, len(h.m.approvals), h.m.turn)
	}
	h.mustNotShow("cancelling")

	ft = h.prompt("again")
	h.ctrlC()
	if ft.cancels != 1 {
		t.Fatalf("the first Ctrl-C during the new turn sent %d cancels, want 1", ft.cancels)
	}
	h.clock.t = h.clock.t.Add(exitWindow / 2)
	h.printed()
	if _, cmd := h.m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); !h.m.quitting || !quits(cmd) {
		t.Fatal("a second Ctrl-C within the window did not leave")
	}
	if h.screen() != "" {
		t.Fatalf("the UI is still drawn after leaving:\n%s", h.screen())
	}
}

// With no turn running, Ctrl-C twice in a row leaves, however far apart;
// a key between them disarms it.
func TestCtrlCIdle(t *testing.T) {
	h := newHarness(t, Options{})
	h.ctrlC()
	h.mustShow("Ctrl-C again to leave")
	h.typeText("x")
	h.mustNotShow("Ctrl-C again")
	h.clock.t = h.clock.t.Add(time.Hour)
	if h.ctrlC(); h.m.quitting {
		t.Fatal("Ctrl-C after another key left")
	}
	h.clock.t = h.clock.t.Add(time.Hour)
	if h.ctrlC(); !h.m.quitting {
		t.Fatal("Ctrl-C twice with no turn running did not leave")
	}
}

// Ctrl-C while the prompt is still on its way cancels the turn once it
// has started.
func TestCtrlCWhileStarting(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("q")
	cmd := h.key(tea.KeyEnter, 0)
	h.ctrlC()
	h.send(cmd())
	ft := h.m.turn.(*fakeTurn)
	if ft.cancels != 1 {
		t.Fatalf("cancels %d, want 1", ft.cancels)
	}
}

// A turn whose agent never confirms the cancel is given up after the
// grace; a grace message of an earlier turn changes nothing.
func TestCancelGraceAbandons(t *testing.T) {
	h := newHarness(t, Options{})
	old := h.prompt("q")
	h.final(ipc.OutcomeAnswer, "a")
	ft := h.prompt("q2")
	h.send(cancelGraceMsg{turn: old})
	if h.m.turn != ft {
		t.Fatal("an earlier turn's grace ended the running turn")
	}
	h.ctrlC()
	h.printed()
	h.send(cancelGraceMsg{turn: ft})
	if h.m.turn != nil || !ft.closed {
		t.Fatal("the turn was not given up")
	}
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "did not confirm the cancel") {
		t.Fatalf("printed %q", got)
	}
}

// Events of a turn no longer running are ignored.
func TestStaleEventsIgnored(t *testing.T) {
	h := newHarness(t, Options{})
	old := h.prompt("q")
	h.final(ipc.OutcomeAnswer, "a")
	h.prompt("q2")
	h.printed()
	h.send(eventMsg{turn: old, ev: agentclient.Event{Kind: agentclient.EventDelta, Delta: ipc.AgentStreamDelta{Delta: "ghost\n"}}})
	if got := h.printed(); len(got) != 0 {
		t.Fatalf("a stale event printed %q", got)
	}
	h.mustNotShow("ghost")
}

// A prompt that cannot start says why; the chat stays usable. A prompt
// while a turn runs is kept, not sent.
func TestPromptRefusals(t *testing.T) {
	h := newHarness(t, Options{})
	h.be.startErr = agentclient.ErrNoAgent
	h.typeText("q")
	h.send(h.key(tea.KeyEnter, 0)())
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "no agent is loaded") || h.m.busy() {
		t.Fatalf("printed %q, busy %v", got, h.m.busy())
	}
	h.be.startErr = nil
	h.prompt("q")
	h.typeText("next")
	if cmd := h.key(tea.KeyEnter, 0); cmd != nil || h.m.editor.value() != "next" || len(h.be.prompts) != 2 {
		t.Fatalf("a prompt during a turn: cmd %v, line %q, prompts %d", cmd != nil, h.m.editor.value(), len(h.be.prompts))
	}
	h.mustShow("a turn is running")
}

// Model, tool and capsule text cannot drive the terminal: escapes are
// shown, not obeyed, in the scrollback and on the live screen.
func TestUntrustedTextEscaped(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.delta("clear\x1b[2J\nnow\x1b]0;title\x07 \u202eevil")
	h.event(agentclient.Event{Kind: agentclient.EventApproval, Approval: ipc.ApprovalRequired{RequestID: "r", Action: "x\x1b[1A", Reason: "why\r\x1b[31m"}})
	for _, s := range append(h.m.takeOutbox(), h.m.render()) {
		// Styling (SGR: colours, bold) is the UI's own, markdown's too.
		stripped := sgr.ReplaceAllString(s, "")
		if strings.ContainsAny(stripped, "\x1b\x07\r\u202e") {
			t.Fatalf("a control character reached the terminal: %q", s)
		}
	}
	h.mustShow(`now\u001b]0;title\u0007 \u202eevil`)
	h.mustShow(`why \u001b[31m`)
}

// quits reports whether cmd is (or batches) tea.Quit.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		return slices.ContainsFunc(msg, quits)
	}
	return false
}

// Leaving waits for the lines on their way above the UI.
func TestLeaveWaitsForPrints(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("/session")
	h.m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.typeText("/help")
	h.m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.ctrlC()
	if _, cmd := h.m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); quits(cmd) || !h.m.quitting {
		t.Fatal("left with a print on its way")
	}
	if _, cmd := h.m.Update(printedMsg{}); quits(cmd) || !h.m.printing {
		t.Fatal("left before /help's lines went out")
	}
	if _, cmd := h.m.Update(printedMsg{}); !quits(cmd) {
		t.Fatal("did not leave once everything was printed")
	}
}

// Lines go above the UI one print at a time, in order: while a print is
// on its way the next lines wait.
func TestPrintsStayInOrder(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("/session")
	_, cmd := h.m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil || !h.m.printing || len(h.m.outbox) != 0 {
		t.Fatalf("first print: cmd %v, printing %v, outbox %q", cmd != nil, h.m.printing, h.m.outbox)
	}
	h.typeText("/help")
	h.m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if len(h.m.outbox) == 0 {
		t.Fatal("a second print went out while the first was on its way")
	}
	h.m.Update(printedMsg{})
	if h.m.printing != true || len(h.m.outbox) != 0 {
		t.Fatalf("after the first print: printing %v, outbox %q", h.m.printing, h.m.outbox)
	}
}

// A line being streamed that is taller than the screen shows its end;
// the prompt line and the status line stay; the whole line reaches the
// scrollback once done.
func TestLiveTextFitsTheScreen(t *testing.T) {
	h := newHarness(t, Options{})
	h.send(tea.WindowSizeMsg{Width: 20, Height: 6})
	h.prompt("q")
	h.printed()
	long := strings.Repeat("word ", 40) + "END"
	h.delta(long)
	rows := strings.Split(h.screen(), "\n")
	if len(rows) != 6 || !strings.Contains(h.screen(), "END") || !strings.HasPrefix(rows[4], "›") || !strings.HasPrefix(rows[5], "session") {
		t.Fatalf("the screen:\n%s", h.screen())
	}
	h.final(ipc.OutcomeAnswer, long)
	if got := h.printed(); len(got) != 2 || got[0] != long {
		t.Fatalf("printed %q", got)
	}
}

// The offline replay script answering because no model is configured is
// said after its answer (issue 29.4); replay asked for on purpose is not.
func TestReplayStandInIsSaid(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{
		Outcome: ipc.OutcomeAnswer, Text: "Four.", IsFinal: true, Provider: agentclient.ReplayProvider, Defaulted: true}})
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "Four.") || !strings.Contains(got, "the offline replay script answered, not a model") {
		t.Fatalf("printed %q", got)
	}
	h.prompt("q2")
	h.printed()
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{
		Outcome: ipc.OutcomeAnswer, Text: "Four.", IsFinal: true, Provider: agentclient.ReplayProvider}})
	if got := strings.Join(h.printed(), "\n"); strings.Contains(got, "replay") {
		t.Fatalf("replay chosen on purpose: printed %q", got)
	}
}

// A turn the replay script failed says too that no model was asked.
func TestReplayStandInIsSaidOnAnError(t *testing.T) {
	h := newHarness(t, Options{})
	h.prompt("q")
	h.printed()
	h.event(agentclient.Event{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{
		Outcome: ipc.OutcomeError, Text: "The provider failed.", IsFinal: true, Provider: agentclient.ReplayProvider, Defaulted: true}})
	if got := strings.Join(h.printed(), "\n"); !strings.Contains(got, "The provider failed.") || !strings.Contains(got, "the turn went to the offline replay script, not a model") {
		t.Fatalf("printed %q", got)
	}
}

// sgr matches one Select Graphic Rendition sequence (styling only).
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)
