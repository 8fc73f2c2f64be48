package chatui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// Elicitation: a capsule asking the person for a value mid-turn (text, a
// secret typed masked, one option of a select, a comma-separated list).
// Questions queue behind approvals; while one is pending, keys go to the
// answer line (m.answer), which is never the prompt line: what is typed
// there enters neither the prompt history nor the scrollback, and a
// secret is drawn as "•". Enter answers (agentclient.ParseElicitAnswer
// reads the line as `astrid -p` does), Esc declines.

// elicitKey edits or sends the answer to the first pending question.
func (m *Model) elicitKey(k tea.KeyPressMsg) tea.Cmd {
	e := &m.answer
	switch k.String() {
	case "enter":
		return m.sendElicit(e.value())
	case "esc":
		return m.sendElicit("-")
	default:
		if !e.edit(k.String()) {
			if text := k.Key().Text; text != "" {
				e.insert(oneLineInput(text))
			}
		}
	}
	return nil
}

// oneLineInput keeps typed or pasted text on the answer's one line.
func oneLineInput(s string) string {
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}

// sendElicit answers the first pending question with line ("-" declines).
// A line that does not fit keeps the question and says why.
func (m *Model) sendElicit(line string) tea.Cmd {
	q := m.elicits[0]
	r, err := agentclient.ParseElicitAnswer(q.RequestID, q.Field, line)
	if err != nil {
		m.notice = shownLine(err.Error())
		return nil
	}
	m.elicits = m.elicits[1:]
	m.answer = editor{}
	m.notice = ""
	key := shownLine(q.Field.Key)
	if r.Cancelled() {
		m.appendNotice(faint, fmt.Sprintf("declined to give %s to %s", key, shownLine(q.CapsuleID)))
	} else {
		// Never the value: it may be a secret, and the scrollback stays.
		m.appendNotice(faint, fmt.Sprintf("gave %s to %s", key, shownLine(q.CapsuleID)))
	}
	return answerElicit(m.turn, r)
}

// answerElicit sends r for turn t (none: nothing to answer).
func answerElicit(t turn, r ipc.ElicitResponse) tea.Cmd {
	if t == nil {
		return nil
	}
	return func() tea.Msg {
		if err := t.AnswerElicit(r); err != nil {
			return answerFailedMsg{err: err}
		}
		return nil
	}
}

// elicitView asks q: who asks for what, the options of a select, and the
// answer line (masked for a secret).
func (m *Model) elicitView(q ipc.ElicitRequest) []string {
	f := q.Field
	lines := []string{m.wrap(styled(warn, "? ") + styled(bold, shownLine(fmt.Sprintf("Capsule '%s' asks for %s", q.CapsuleID, f.Key))))}
	if f.Description != nil && *f.Description != "" {
		lines = append(lines, m.wrap("  "+shownLine(*f.Description)))
	}
	def := ""
	if f.Default != nil {
		def = *f.Default
	}
	hint := "Enter answers · Esc declines"
	switch f.FieldType.Kind {
	case ipc.FieldEnum:
		for i, o := range f.FieldType.Options {
			mark := " "
			if o == def {
				mark = "*"
			}
			lines = append(lines, m.fit(fmt.Sprintf("  %s%d) %s", mark, i+1, shownLine(o))))
		}
		hint = "a number, Enter answers · Esc declines"
	case ipc.FieldArray:
		hint = "comma-separated, Enter answers · Esc declines"
	case ipc.FieldSecret:
		hint = "hidden as you type, Enter answers · Esc declines"
	}
	if def != "" && f.FieldType.Kind != ipc.FieldSecret {
		hint += " · empty takes " + shownLine(def)
	}
	lines = append(lines,
		m.fit("  "+shownLine(f.Prompt)+": "+m.answerLine(f.FieldType.Kind == ipc.FieldSecret)),
		m.fit(styled(faint, "  "+hint)))
	if n := len(m.elicits) - 1; n > 0 {
		lines = append(lines, styled(faint, fmt.Sprintf("  (%d more waiting)", n)))
	}
	return lines
}

// answerLine draws the answer being typed with its cursor; a secret's
// every rune is "•".
func (m *Model) answerLine(secret bool) string {
	var b strings.Builder
	for i, r := range m.answer.text {
		s := "•"
		if !secret {
			s = string(r)
			if s = ipc.ApprovalText(s, 0); s != string(r) {
				s = "·"
			}
		}
		if i == m.answer.cursor {
			s = "\x1b[7m" + s + "\x1b[0m"
		}
		b.WriteString(s)
	}
	if m.answer.cursor == len(m.answer.text) {
		b.WriteString("\x1b[7m \x1b[0m")
	}
	return b.String()
}
