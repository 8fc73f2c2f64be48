package chatui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/ipc"
)

// builtinCommands are the chat's own slash commands (commands.go,
// slash.go), which no capsule's command may shadow.
var builtinCommands = []string{"help", "?", "clear", "new", "session", "models", "model", "compact"}

// commandsTimeout bounds gathering the capsules' commands.
const commandsTimeout = 5 * time.Second

// commandState is what the chat knows of the capsules' commands.
type commandState struct {
	list   []commandclient.Command
	loaded bool
	// pending is a line that waited for the list ("" for none).
	pending string
}

// commandsMsg is the capsules' commands, gathered; line is the command
// line that asked for them ("" at start).
type commandsMsg struct {
	cmds []commandclient.Command
	err  error
	line string
}

// loadCommands gathers the capsules' commands, then runs line if set.
func (m *Model) loadCommands(line string) tea.Cmd {
	lister, ok := m.be.(commandLister)
	if !ok {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, commandsTimeout)
		defer cancel()
		cmds, err := lister.listCommands(ctx, builtinCommands)
		return commandsMsg{cmds: cmds, err: err, line: line}
	}
}

func (m *Model) commandsLoaded(msg commandsMsg) tea.Cmd {
	// Asked once: a failure is said, not retried on every line.
	m.commands.list, m.commands.loaded, m.commands.pending = msg.cmds, true, ""
	if msg.err != nil {
		m.notice = "the capsules' commands were not read: " + shownLine(msg.err.Error())
	}
	if msg.line != "" {
		return m.command(msg.line)
	}
	return nil
}

// capsuleHelp is what /help lists of the capsules' commands.
func (m *Model) capsuleHelp() []string {
	var out []string
	for _, c := range m.commands.list {
		line := fmt.Sprintf("/%-16s %s (%s)", c.Name, c.Description, c.Capsule)
		if c.Renamed != "" {
			line += "; renamed: " + c.Renamed
		}
		out = append(out, line)
	}
	return out
}

// capsuleCommand runs /name args when name is a capsule's command: its
// prompt, expanded, goes out as a turn. ok is false when it is not one.
func (m *Model) capsuleCommand(name, arg string) (tea.Cmd, bool) {
	c, found := commandclient.Find(m.commands.list, strings.TrimPrefix(name, "/"))
	if !found {
		if !m.commands.loaded && m.commands.pending == "" {
			if load := m.loadCommands(name + " " + arg); load != nil {
				m.commands.pending = name
				return load, true
			}
		}
		return nil, false
	}
	if m.busy() {
		m.notice = "a turn is running: wait for it, or Ctrl-C cancels it"
		return nil, true
	}
	text, err := c.Expand(arg)
	if err != nil {
		m.notice = shownLine(err.Error())
		return nil, true
	}
	return m.startTurn(strings.TrimSpace(name+" "+arg), text, ipc.PromptContext{Provider: m.provider, Model: m.model}), true
}
