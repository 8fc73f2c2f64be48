package chatui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// tone is how a line is coloured. Plain SGR attributes only: every
// terminal has them, and bubbletea lowers them further for one that has
// not.
type tone uint8

const (
	plain tone = iota
	faint
	bold
	good
	bad
	warn
	accent
)

var toneSGR = map[tone]string{faint: "2", bold: "1", good: "32", bad: "31", warn: "33", accent: "36"}

// styled is s in tone t.
func styled(t tone, s string) string {
	code, ok := toneSGR[t]
	if !ok || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// shownLine is untrusted text (a model's, a tool's, a capsule's) as one
// line on the screen: whitespace folded to single spaces and every control
// or format character escaped (ipc.ApprovalText), so nothing it holds can
// move the cursor, recolour or reorder what the person reads.
func shownLine(s string) string {
	return ipc.ApprovalText(strings.Join(strings.Fields(s), " "), 0)
}

// textLines is untrusted multi-line text (the model's answer) as screen
// lines: its line breaks kept, tabs made spaces, everything else that
// controls the terminal escaped.
func textLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\t", "    ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = ipc.ApprovalText(l, 0)
	}
	return lines
}

// fit cuts an already escaped line to the screen's width, marking the cut.
func (m *Model) fit(line string) string {
	if m.width <= 1 {
		return line
	}
	return ansi.Truncate(line, m.width-1, "…")
}

// wrap breaks a long line of live text at the screen's width (the
// scrollback gets it whole and the terminal wraps it there).
func (m *Model) wrap(line string) string {
	if m.width <= 1 {
		return line
	}
	return ansi.Wrap(line, m.width-1, "")
}

// compactJSON is raw without insignificant whitespace (raw itself when it
// does not parse).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// decisionWords says what the person answered, as the tool line shows it.
var decisionWords = map[string]string{
	ipc.DecisionApprove:        "approved once",
	ipc.DecisionApproveSession: "approved for this session",
	ipc.DecisionApproveAlways:  "approved always",
	ipc.DecisionDeny:           "denied",
}

// toolLines shows one tool call: while it runs, its name and arguments;
// once done, the same line marked ✓ or ✗ with how long it took, and the
// result folded to one line under it (the event carries only the
// result's first 200 runes; the model reads all of it). A call that never
// finished (ended: its turn did) is marked as such.
func (m *Model) toolLines(b block, ended bool) []string {
	head := shownLine(b.started.Name + " " + compactJSON(b.started.Arguments))
	if b.decision != "" {
		head += styled(faint, " · "+decisionWords[b.decision])
	}
	f := b.finished
	switch {
	case f == nil && ended:
		return []string{m.fit(styled(warn, "⊘ ") + head + styled(faint, " (no result: the turn ended)"))}
	case f == nil && b.progress != nil:
		return []string{m.fit(styled(accent, "⋯ ") + head + styled(faint, " · "+shownLine(progressWords(*b.progress))))}
	case f == nil:
		return []string{m.fit(styled(accent, "⋯ ") + head)}
	}
	mark := styled(good, "✓ ")
	if f.IsError {
		mark = styled(bad, "✗ ")
	}
	took := "<1ms"
	if f.DurationMS > 0 {
		took = (time.Duration(f.DurationMS) * time.Millisecond).String()
	}
	lines := []string{m.fit(mark + head + styled(faint, " ("+took+")"))}
	if summary := shownLine(f.Summary); summary != "" {
		lines = append(lines, m.fit(styled(faint, "  └ "+summary)))
	}
	return lines
}

// progressWords is a running call's progress without the tool's name,
// which the line already shows.
func progressWords(p ipc.AgentToolProgress) string {
	p.Name = ""
	return strings.TrimPrefix(p.Text(), ": ")
}

// View draws the live part: the current turn's unfinished blocks, the
// pending question or the model picker, a notice, the prompt line and the
// status line.
func (m *Model) View() tea.View {
	return tea.NewView(m.render())
}

func (m *Model) render() string {
	if m.quitting {
		return ""
	}
	var lines []string
	for _, b := range m.blocks {
		switch b.kind {
		case textBlock:
			for _, l := range textLines(b.text) {
				lines = append(lines, m.wrap(l))
			}
		case toolBlock:
			lines = append(lines, m.toolLines(b, false)...)
		case noticeBlock:
			lines = append(lines, m.fit(styled(b.tone, shownLine(b.text))))
		}
	}
	switch {
	case len(m.approvals) > 0:
		lines = append(lines, m.approvalView(m.approvals[0])...)
	case len(m.elicits) > 0:
		lines = append(lines, m.elicitView(m.elicits[0])...)
	case m.picker != nil:
		lines = append(lines, m.picker.view(m)...)
	}
	if m.notice != "" {
		lines = append(lines, m.fit(styled(warn, shownLine(m.notice))))
	}
	lines = append(lines, m.promptLine(), m.fit(styled(faint, m.statusLine())))
	// A live part taller than the screen loses its top rows (they reach
	// the scrollback whole once finished), never the prompt line.
	rows := strings.Split(strings.Join(lines, "\n"), "\n")
	if m.height > 0 && len(rows) > m.height {
		rows = rows[len(rows)-m.height:]
	}
	return strings.Join(rows, "\n")
}

// approvalView asks about q: why (the reason), what (the action and its
// resource), and the four answers.
func (m *Model) approvalView(q ipc.ApprovalRequired) []string {
	what := q.Action
	if q.Resource != "" {
		what += " " + q.Resource
	}
	lines := []string{m.wrap(styled(warn, "? ") + styled(bold, shownLine(q.Reason)))}
	if diff := m.approvalDiff(q); diff != nil {
		lines = append(lines, diff...) // a write or an edit, as the change it makes (diff.go)
	} else {
		lines = append(lines, m.fit("  "+shownLine(what)))
	}
	lines = append(lines, m.fit("  Allow? "+agentclient.DecisionChoices))
	if n := len(m.approvals) - 1; n > 0 {
		lines = append(lines, styled(faint, fmt.Sprintf("  (%d more waiting)", n)))
	}
	return lines
}

// promptLine is the editor with its cursor, or while a turn runs a note
// that it does.
func (m *Model) promptLine() string {
	text := m.editor.text
	var b strings.Builder
	b.WriteString(styled(accent, "› "))
	for i, r := range text {
		s := string(r)
		if r == '\n' {
			s = "↵"
		} else if s = ipc.ApprovalText(s, 0); s != string(r) {
			s = "·"
		}
		if i == m.editor.cursor {
			s = "\x1b[7m" + s + "\x1b[0m"
		}
		b.WriteString(s)
	}
	if m.editor.cursor == len(text) {
		b.WriteString("\x1b[7m \x1b[0m")
	}
	return b.String()
}

// statusLine names the workspace, the session (to continue it with astrid -p --session),
// the model, the tokens and cost of the turns chat ran on it, and what the
// keys do now.
func (m *Model) statusLine() string {
	parts := []string{"session " + m.session}
	if m.workspace != "" {
		parts = append([]string{shownLine(m.workspace)}, parts...)
	}
	switch {
	case m.provider != "" && m.model != "":
		parts = append(parts, shownLine(m.provider+":"+m.model))
	case m.provider != "" || m.model != "":
		parts = append(parts, shownLine(m.provider+m.model))
	case m.activeModel != "":
		parts = append(parts, shownLine(m.activeModel))
	}
	if u := m.usage; u != nil {
		tokens := tokensText(*u)
		switch {
		case m.costUSD > 0 && m.unpriced:
			tokens += fmt.Sprintf(", ≥ $%.4f", m.costUSD)
		case !m.unpriced:
			tokens += fmt.Sprintf(", $%.4f", m.costUSD)
		}
		parts = append(parts, tokens)
	}
	switch {
	case len(m.approvals) > 0:
		parts = append(parts, "y/s/a/n answers")
	case len(m.elicits) > 0:
		parts = append(parts, "Enter answers · Esc declines")
	case m.turn != nil || m.starting:
		parts = append(parts, "working… Ctrl-C cancels")
	default:
		parts = append(parts, "/help")
	}
	return strings.Join(parts, " · ")
}
