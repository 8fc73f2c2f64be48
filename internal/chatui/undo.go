package chatui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// sessionTools is what /undo and /cost need of a backend beyond turns:
// the session store's answers. kernelBackend has it when its kernel
// answers session requests (the in-process kernel and the daemon do).
type sessionTools interface {
	undo(ctx context.Context, session string, turn int) (sessionclient.UndoResult, error)
	sessionMeta(ctx context.Context, session string) (sessionclient.Summary, bool, error)
}

func (b kernelBackend) sessionKernel() (toolclient.Kernel, error) {
	k, ok := b.k.(toolclient.Kernel)
	if !ok {
		return nil, errors.New("this kernel does not answer session requests")
	}
	return k, nil
}

func (b kernelBackend) undo(ctx context.Context, session string, turn int) (sessionclient.UndoResult, error) {
	k, err := b.sessionKernel()
	if err != nil {
		return sessionclient.UndoResult{}, err
	}
	return sessionclient.Undo(ctx, k, b.principal, session, turn)
}

func (b kernelBackend) sessionMeta(ctx context.Context, session string) (sessionclient.Summary, bool, error) {
	k, err := b.sessionKernel()
	if err != nil {
		return sessionclient.Summary{}, false, err
	}
	return sessionclient.Meta(ctx, k, b.principal, session)
}

// sessionTimeout bounds chat's session requests.
const sessionTimeout = 10 * time.Second

// undoneMsg is an /undo's answer.
type undoneMsg struct {
	session string
	r       sessionclient.UndoResult
	err     error
}

// undoCommand undoes the session's latest turn not undone yet, or with an
// argument that turn (numbered among those that changed files, as astrid
// session undo --list shows them): the files the fs tools changed in it
// go back to what they were.
func (m *Model) undoCommand(arg string) tea.Cmd {
	turn := 0
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			m.notice = "/undo " + shownLine(arg) + ": give a turn number (1 or more), or nothing for the last turn"
			return nil
		}
		turn = n
	}
	if m.busy() {
		m.notice = "a turn is running: Ctrl-C cancels it first"
		return nil
	}
	st, ok := m.be.(sessionTools)
	if !ok {
		m.notice = "/undo is not available here"
		return nil
	}
	ctx, session := m.ctx, m.session
	m.notice = "undoing the last turn's file changes…"
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
		defer cancel()
		r, err := st.undo(ctx, session, turn)
		return undoneMsg{session: session, r: r, err: err}
	}
}

func (m *Model) undone(msg undoneMsg) {
	m.notice = ""
	if msg.err != nil {
		m.print(styled(warn, "/undo: "+shownLine(msg.err.Error())), "")
		return
	}
	m.print(styled(bold, fmt.Sprintf("Undid turn %d of %d kept for this session:", msg.r.Turn, msg.r.Turns)))
	for _, f := range msg.r.Files {
		mark, tone := "✗ ", bad
		if f.Restored || isUnchangedWhat(f.What) {
			mark, tone = "✓ ", good
		}
		m.print(styled(tone, mark) + shownLine(f.Path) + styled(faint, ": "+shownLine(f.What)))
	}
	if msg.r.Shell {
		m.print(styled(warn, "The turn also ran shell commands: what they changed is out of undo's reach."))
	}
	m.print("")
}

func isUnchangedWhat(what string) bool { return strings.HasPrefix(what, "unchanged") }

// costMsg is /cost's answer from the session store.
type costMsg struct {
	meta sessionclient.Summary
	ok   bool
	err  error
}

// costCommand shows the tokens and cost of the turns chat ran on this
// session, and the session's totals as its store keeps them.
func (m *Model) costCommand() tea.Cmd {
	m.print(styled(bold, "This chat on session "+m.session+": ") + m.usageText())
	st, ok := m.be.(sessionTools)
	if !ok {
		m.print("")
		return nil
	}
	ctx, session := m.ctx, m.session
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
		defer cancel()
		meta, ok, err := st.sessionMeta(ctx, session)
		return costMsg{meta: meta, ok: ok, err: err}
	}
}

func (m *Model) costKnown(msg costMsg) {
	switch {
	case msg.err != nil:
		m.print(styled(faint, "the session store did not answer: "+shownLine(msg.err.Error())))
	case !msg.ok || msg.meta.Usage == nil:
		m.print(styled(faint, "The session's history holds no usage yet."))
	default:
		line := tokensText(*msg.meta.Usage)
		switch {
		case msg.meta.CostUSD > 0 && msg.meta.Unpriced:
			line += fmt.Sprintf(", at least $%.4f (some requests had no price)", msg.meta.CostUSD)
		case !msg.meta.Unpriced:
			line += fmt.Sprintf(", $%.4f", msg.meta.CostUSD)
		default:
			line += " (no price known)"
		}
		m.print(styled(bold, "The whole session (its history): ") + line)
	}
	m.print("")
}

// usageText is the figures of the turns chat ran on the session.
func (m *Model) usageText() string {
	u := m.usage
	if u == nil {
		return "no usage reported yet"
	}
	s := tokensText(*u)
	switch {
	case m.costUSD > 0 && m.unpriced:
		s += fmt.Sprintf(", at least $%.4f (some turns had no price)", m.costUSD)
	case !m.unpriced:
		s += fmt.Sprintf(", $%.4f", m.costUSD)
	default:
		s += " (no price known)"
	}
	return s
}

// shortWorkspace is a workspace as the status line names it: the home
// directory as ~.
func shortWorkspace(ws string) string {
	if ws == "" {
		return ""
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		if ws == home {
			return "~"
		}
		if strings.HasPrefix(ws, home+"/") {
			return "~" + ws[len(home):]
		}
	}
	return ws
}

// tokensText is a usage's tokens: "1200 in (1024 cached), 34 out".
func tokensText(u ipc.Usage) string {
	s := fmt.Sprintf("%d in", u.InputTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	return s + fmt.Sprintf(", %d out", u.OutputTokens)
}
