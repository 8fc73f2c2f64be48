package chatui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// helpText is what /help prints.
var helpText = []string{
	"/clear            start a new session (the old one stays: astrid session list)",
	"/session          show this session's id; /session <id> continues another",
	"/models           list the models and choose one; /models <provider:model> chooses directly",
	"/undo             restore the files the last turn changed (write, edit, delete, move; not shell commands); /undo <n> that turn",
	"/cost             tokens and cost of this chat and of the whole session",
	"/help             this",
	"Enter sends · Ctrl-J a new line · Up/Down earlier prompts · Ctrl-L redraws",
	"Ctrl-C cancels the running turn; twice (or with no turn running) leaves · Ctrl-D on an empty line leaves",
	"A question about a tool call: y once · s this session · a always · n, Enter or Esc deny",
}

// command runs a slash command line.
func (m *Model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help", "/?":
		for _, l := range append(m.moreHelp(), helpText...) {
			m.print(styled(faint, l))
		}
		m.print("")
	case "/clear", "/new":
		if m.busy() {
			m.notice = "a turn is running: Ctrl-C cancels it first"
			return nil
		}
		m.session = agentclient.NewSessionID()
		m.resetUsage()
		m.print(styled(faint, "new session "+m.session), "")
	case "/session":
		return m.sessionCommand(arg)
	case "/undo":
		return m.undoCommand(arg)
	case "/cost":
		return m.costCommand()
	case "/models", "/model":
		if arg != "" {
			return m.chooseModel(arg)
		}
		be, ctx := m.be, m.ctx
		m.notice = "asking the provider registry…"
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, registryTimeout)
			defer cancel()
			r, err := be.listModels(ctx)
			return modelsMsg{reply: r, err: err}
		}
	default:
		if cmd, ok := m.slashCommand(name, arg); ok {
			return cmd
		}
		m.notice = fmt.Sprintf("unknown command %s: /help lists them", shownLine(name))
	}
	return nil
}

func (m *Model) busy() bool { return m.turn != nil || m.starting }

// sessionCommand shows the session, or with an id continues that one.
func (m *Model) sessionCommand(id string) tea.Cmd {
	if id == "" {
		m.print(styled(faint, fmt.Sprintf("session %s (continue it outside with astrid -p --session %s)", m.session, m.session)), "")
		return nil
	}
	if err := sessionclient.ValidSessionID(id); err != nil {
		m.notice = "/session: " + err.Error()
		return nil
	}
	if m.busy() {
		m.notice = "a turn is running: Ctrl-C cancels it first"
		return nil
	}
	m.session = id
	m.resetUsage()
	m.print(styled(faint, "continuing session "+id), "")
	return nil
}

// chooseModel makes id the principal's model and stops pinning one from
// the command line, so the choice applies to the next turn.
func (m *Model) chooseModel(id string) tea.Cmd {
	be, ctx := m.be, m.ctx
	m.notice = "choosing " + shownLine(id) + "…"
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, registryTimeout)
		defer cancel()
		r, err := be.setModel(ctx, id)
		return activeModelMsg{reply: r, err: err, chosen: true}
	}
}

func (m *Model) activeModelKnown(msg activeModelMsg) {
	if !msg.chosen {
		if msg.err == nil && msg.reply.ActiveModel != nil {
			m.activeModel = msg.reply.ActiveModel.ID
		}
		return // the status line simply names no model
	}
	switch {
	case errors.Is(msg.err, registryclient.ErrRejected):
		m.notice = shownLine(msg.err.Error())
	case msg.err != nil:
		m.notice = "the model was not chosen: " + shownLine(msg.err.Error())
	case msg.reply.ActiveModel == nil:
		m.notice = "the registry chose no model"
	default:
		e := msg.reply.ActiveModel
		m.activeModel = e.ID
		m.provider, m.model = "", ""
		m.notice = ""
		line := "model " + shownLine(e.ID) + " (the next turn uses it)"
		if !e.Ready {
			line += "; not ready: " + shownLine(e.Why)
		}
		m.print(styled(faint, line), "")
	}
}

// picker is the /models list: the models the registry offers, one
// highlighted.
type picker struct {
	entries []ipc.ModelEntry
	at      int
}

func (m *Model) modelsListed(msg modelsMsg) tea.Cmd {
	m.notice = ""
	switch {
	case msg.err != nil:
		m.notice = "/models: " + shownLine(msg.err.Error())
		return nil
	case len(msg.reply.Providers) == 0:
		m.notice = "/models: no LLM provider is loaded"
		return nil
	}
	p := &picker{entries: msg.reply.Providers}
	if a := msg.reply.ActiveModel; a != nil {
		m.activeModel = a.ID
		for i, e := range p.entries {
			if e.ID == a.ID {
				p.at = i
			}
		}
	}
	m.picker = p
	return nil
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k.String() {
	case "up", "k", "ctrl+p":
		if p.at > 0 {
			p.at--
		}
	case "down", "j", "ctrl+n":
		if p.at < len(p.entries)-1 {
			p.at++
		}
	case "enter":
		m.picker = nil
		return m.chooseModel(p.entries[p.at].ID)
	case "esc", "q":
		m.picker = nil
	}
	return nil
}

func (p *picker) view(m *Model) []string {
	lines := []string{styled(bold, "Choose a model (↑/↓, Enter; Esc closes):")}
	for i, e := range p.entries {
		mark := "  "
		if i == p.at {
			mark = styled(accent, "▸ ")
		}
		note := e.Description
		if !e.Ready {
			note = "not ready: " + e.Why
		}
		line := mark + shownLine(e.ID)
		if e.ID == m.activeModel {
			line += " *"
		}
		if note != "" {
			line += styled(faint, "  "+shownLine(note))
		}
		lines = append(lines, m.fit(line))
	}
	return lines
}
