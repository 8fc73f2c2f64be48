package chatui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// The slash commands beyond the chat's own (commands.go): /compact, and
// the capsules' [[command]] entries (capsule_commands.go). Kept apart so
// that the built-ins' switch stays as it was.

// moreHelp is what /help prints after helpText.
func (m *Model) moreHelp() []string {
	return append([]string{"/compact          summarize this session's older turns now (the session keeps them all)"}, m.capsuleHelp()...)
}

// slashCommand runs a command the built-ins' switch did not know; ok is
// false when nobody knows it.
func (m *Model) slashCommand(name, arg string) (tea.Cmd, bool) {
	switch name {
	case "/compact":
		if m.busy() {
			m.notice = "a turn is running: Ctrl-C cancels it first"
			return nil, true
		}
		return m.startTurn("/compact", "", ipc.PromptContext{Action: ipc.ActionCompact, Provider: m.provider, Model: m.model}), true
	}
	return m.capsuleCommand(name, arg)
}

// startTurn starts a turn of text in the chat's session, showing shown as
// the person's line.
func (m *Model) startTurn(shown, text string, pc ipc.PromptContext) tea.Cmd {
	m.print(styled(bold, styled(accent, "› ")+strings.Join(textLines(shown), "\n  ")))
	m.starting, m.cancelling, m.streamed = true, false, ""
	be, ctx := m.be, m.ctx
	p := agentclient.Prompt{Principal: m.principal, SessionID: m.session, Text: text, Context: pc}
	return func() tea.Msg {
		t, err := be.start(ctx, p)
		return startedMsg{turn: t, err: err}
	}
}

// compacted shows a compaction of the session's history.
func (m *Model) compacted(e ipc.AgentCompacted) {
	tn := faint
	if !e.OK {
		tn = warn
	}
	m.appendNotice(tn, e.Text())
}
