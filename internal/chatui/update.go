package chatui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// Update is step followed by printing what step finished. Leaving waits
// for the prints on their way, so that no finished line is lost.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.step(msg)
	if m.quitting && !m.printing && len(m.outbox) == 0 {
		return m, tea.Quit
	}
	return m, tea.Batch(cmd, m.flush())
}

// flush prints the outbox above the UI. Commands run concurrently, so a
// print waits for the one before it (printedMsg): the scrollback keeps
// the order things happened in.
func (m *Model) flush() tea.Cmd {
	if m.printing || len(m.outbox) == 0 {
		return nil
	}
	text := strings.Join(m.takeOutbox(), "\n")
	m.printing = true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

// step changes the state for msg and returns what to do next.
func (m *Model) step(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		switch {
		case len(m.approvals) > 0:
		case len(m.elicits) > 0:
			m.answer.insert(oneLineInput(msg.Content))
		case m.picker == nil:
			m.editor.insert(msg.Content)
		}
	case printedMsg:
		m.printing = false
	case startedMsg:
		return m.started(msg)
	case eventMsg:
		return m.event(msg)
	case cancelGraceMsg:
		if msg.turn == m.turn && m.turn != nil {
			m.appendNotice(bad, fmt.Sprintf("The agent did not confirm the cancel within %s; the turn was abandoned.", agentclient.CancelGrace))
			m.endTurn()
		}
	case answerFailedMsg:
		m.notice = "the answer was not delivered: " + msg.err.Error()
	case modelsMsg:
		return m.modelsListed(msg)
	case undoneMsg:
		if msg.session == m.session {
			m.undone(msg)
		}
		return nil
	case costMsg:
		m.costKnown(msg)
		return nil
	case activeModelMsg:
		m.activeModelKnown(msg)
	case commandsMsg:
		return m.commandsLoaded(msg)
	}
	return nil
}

// key handles a key press: Ctrl-C always; otherwise the pending question,
// the open picker or the prompt line gets it.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.interrupt()
	}
	m.armed = false
	switch {
	case len(m.approvals) > 0:
		return m.answerKey(k)
	case len(m.elicits) > 0:
		return m.elicitKey(k)
	case m.picker != nil:
		return m.pickerKey(k)
	}
	m.notice = ""
	e := &m.editor
	switch k.String() {
	case "enter":
		return m.submit()
	case "ctrl+d":
		if len(e.text) == 0 {
			return m.quit()
		}
		e.deleteForward()
	case "ctrl+j", "alt+enter", "shift+enter":
		e.insert("\n")
	case "up":
		e.older()
	case "down":
		e.newer()
	case "ctrl+l":
		return tea.ClearScreen
	default:
		if !e.edit(k.String()) {
			if text := k.Key().Text; text != "" {
				e.insert(text)
			}
		}
	}
	return nil
}

// interrupt is Ctrl-C: it cancels the running turn; a second one leaves,
// when no turn runs or within exitWindow of the first.
func (m *Model) interrupt() tea.Cmd {
	now := m.now()
	busy := m.turn != nil || m.starting
	if m.armed && (!busy || now.Sub(m.armedAt) < exitWindow) {
		return m.quit()
	}
	m.armed, m.armedAt = true, now
	if !busy {
		m.notice = "Ctrl-C again to leave"
		return nil
	}
	m.notice = "cancelling… (Ctrl-C again to leave)"
	return m.cancelTurn()
}

// cancelTurn asks the running turn to end; its final response (outcome
// cancelled) ends it, or agentclient.CancelGrace later the UI gives up on
// it. A turn still starting is cancelled once it has started.
func (m *Model) cancelTurn() tea.Cmd {
	if m.cancelling {
		return nil
	}
	m.cancelling = true
	if m.turn == nil {
		return nil // started() cancels it
	}
	if err := m.turn.Cancel(); err != nil {
		m.notice = "the cancel was not sent: " + err.Error()
	}
	t := m.turn
	return tea.Tick(agentclient.CancelGrace, func(time.Time) tea.Msg { return cancelGraceMsg{turn: t} })
}

// quit leaves once the prints on their way are done (Update).
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return nil
}

// submit sends the prompt line: a slash command, or a prompt for a turn.
func (m *Model) submit() tea.Cmd {
	text := m.editor.value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") {
		m.editor.take()
		return m.command(text)
	}
	if m.turn != nil || m.starting {
		m.notice = "a turn is running: wait for it, or Ctrl-C cancels it"
		return nil
	}
	m.editor.take()
	m.print(styled(bold, styled(accent, "› ")+strings.Join(textLines(text), "\n  ")))
	m.starting, m.cancelling, m.streamed = true, false, ""
	be, ctx := m.be, m.ctx
	p := agentclient.Prompt{
		Principal: m.principal, SessionID: m.session, Text: text,
		Context: ipc.PromptContext{Provider: m.provider, Model: m.model},
	}
	return func() tea.Msg {
		t, err := be.start(ctx, p)
		return startedMsg{turn: t, err: err}
	}
}

// started takes the turn that began, and waits for its first event.
func (m *Model) started(msg startedMsg) tea.Cmd {
	m.starting = false
	if msg.err != nil {
		m.print(styled(bad, shownLine(msg.err.Error())), "")
		m.cancelling = false
		return nil
	}
	m.turn = msg.turn
	m.turnCtx, m.stopNext = context.WithCancel(m.ctx)
	if m.cancelling {
		m.cancelling = false
		return tea.Batch(m.cancelTurn(), waitNext(m.turnCtx, m.turn))
	}
	return waitNext(m.turnCtx, m.turn)
}

// waitNext waits for t's next event.
func waitNext(ctx context.Context, t turn) tea.Cmd {
	return func() tea.Msg {
		ev, err := t.Next(ctx)
		return eventMsg{turn: t, ev: ev, err: err}
	}
}

// event shows one event of the running turn and waits for the next.
func (m *Model) event(msg eventMsg) tea.Cmd {
	if msg.turn != m.turn || m.turn == nil {
		return nil // a turn already given up on
	}
	if msg.err != nil {
		if !errors.Is(msg.err, io.EOF) && !errors.Is(msg.err, context.Canceled) {
			m.appendNotice(bad, "The turn ended: "+msg.err.Error())
		}
		m.endTurn()
		return nil
	}
	ev := msg.ev
	switch ev.Kind {
	case agentclient.EventDelta:
		m.appendText(ev.Delta.Delta)
		m.streamed += ev.Delta.Delta
	case agentclient.EventToolStarted:
		m.blocks = append(m.blocks, block{kind: toolBlock, started: ev.ToolStarted})
	case agentclient.EventToolFinished:
		f := ev.ToolFinished
		if b := m.toolBlockOf(f.CallID); b != nil {
			b.finished = &f
		} else {
			m.blocks = append(m.blocks, block{kind: toolBlock, finished: &f,
				started: ipc.AgentToolStarted{CallID: f.CallID, Name: f.Name}})
		}
	case agentclient.EventToolProgress:
		if b := m.toolBlockOf(ev.ToolProgress.CallID); b != nil && b.finished == nil {
			p := ev.ToolProgress
			b.progress = &p
		}
	case agentclient.EventApproval:
		m.approvals = append(m.approvals, ev.Approval)
	case agentclient.EventElicit:
		if ev.Elicit.Form != nil {
			// A form of several fields: chat asks one value at a time.
			m.appendNotice(faint, fmt.Sprintf("declined a form of %d fields from %s: chat answers one value at a time (astrid -p on a terminal asks a form field by field)",
				len(ev.Elicit.Form.Schema.Properties), shownLine(ev.Elicit.CapsuleID)))
			m.settle(false)
			return tea.Batch(answerElicit(m.turn, ipc.ElicitResponse{RequestID: ev.Elicit.RequestID}), waitNext(m.turnCtx, m.turn))
		}
		m.elicits = append(m.elicits, ev.Elicit)
	case agentclient.EventCompacted:
		m.compacted(ev.Compacted)
	case agentclient.EventFinal:
		m.final(ev.Final)
		return nil
	}
	m.settle(false)
	return waitNext(m.turnCtx, m.turn)
}

// final ends the turn with its last word: what of the answer was not
// streamed yet (a provider may send its text in one piece), or why the
// turn ended without one.
func (m *Model) final(r ipc.AgentResponse) {
	switch r.Outcome {
	case ipc.OutcomeAnswer, "":
		rest := r.Text
		switch {
		case strings.HasPrefix(rest, m.streamed):
			rest = rest[len(m.streamed):]
		case m.streamed != "":
			rest = "" // the streamed text differs: keep what was shown
		}
		m.appendText(rest)
	case ipc.OutcomeCancelled, ipc.OutcomeBusy:
		// Busy: nothing ran; the person sends it again when they like.
		m.appendNotice(warn, r.Text)
	case ipc.OutcomeCompacted:
		m.appendNotice(good, r.Text)
	default:
		m.appendNotice(bad, r.Text)
	}
	if note := agentclient.StandIn(r); note != "" {
		m.appendNotice(warn, note)
	}
	m.addUsage(r)
	m.endTurn()
}

// addUsage counts a turn's tokens and cost into the session's figures.
func (m *Model) addUsage(r ipc.AgentResponse) {
	if r.Usage == nil {
		return
	}
	sum := *r.Usage
	if m.usage != nil {
		sum = m.usage.Add(sum)
	}
	m.usage = &sum
	if r.CostUSD != nil {
		m.costUSD += *r.CostUSD
	} else {
		m.unpriced = true
	}
}

// resetUsage forgets the figures when chat moves to another session.
func (m *Model) resetUsage() {
	m.usage, m.costUSD, m.unpriced = nil, 0, false
}

// endTurn prints what is left of the turn and forgets it; questions
// still open are moot.
func (m *Model) endTurn() {
	m.settle(true)
	m.print("")
	m.approvals = nil
	m.elicits, m.answer = nil, editor{}
	m.closeTurn()
	m.cancelling = false
	m.armed = false
	if strings.HasPrefix(m.notice, "cancelling") {
		m.notice = ""
	}
}

// closeTurn stops waiting for the turn's events and closes it.
func (m *Model) closeTurn() {
	if m.stopNext != nil {
		m.stopNext()
		m.stopNext = nil
	}
	if m.turn != nil {
		m.turn.Close()
		m.turn = nil
	}
}

// answerKey answers the first pending question: y once, s this session,
// a always, n, Enter or Esc deny (agentclient.ParseDecision reads it, as
// astrid -p does); other keys are ignored, so typing ahead never answers.
func (m *Model) answerKey(k tea.KeyPressMsg) tea.Cmd {
	var answer string
	switch k.String() {
	case "y", "s", "a", "n", "Y", "S", "A", "N":
		answer = k.String()
	case "enter", "esc":
		answer = "n"
	default:
		return nil
	}
	q := m.approvals[0]
	m.approvals = m.approvals[1:]
	decision := agentclient.ParseDecision(answer)
	if b := m.toolBlockOf(q.CallID); b != nil && q.CallID != "" {
		b.decision = decision
	} else {
		m.appendNotice(faint, decisionWords[decision]+": "+q.Action+" "+q.Resource)
	}
	t := m.turn
	if t == nil {
		return nil
	}
	return func() tea.Msg {
		if err := t.Answer(q.RequestID, decision); err != nil {
			return answerFailedMsg{err: err}
		}
		return nil
	}
}
