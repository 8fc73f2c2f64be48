package chatui

import (
	"strings"
	"unicode"
)

// maxHistory bounds the prompts kept for Up/Down.
const maxHistory = 100

// editor is the prompt line: the text being typed, the cursor in it (in
// runes), and the prompts sent before, for Up and Down.
type editor struct {
	text    []rune
	cursor  int
	history []string
	// recall is the history entry shown (len(history): the line being
	// typed, saved in draft).
	recall int
	draft  string
}

func (e *editor) value() string { return string(e.text) }

// edit applies the line-editing key named key (as tea.KeyPressMsg.String
// names it), the keys every line of the UI shares; it reports whether key
// was one of them.
func (e *editor) edit(key string) bool {
	switch key {
	case "backspace", "ctrl+h":
		e.backspace()
	case "delete":
		e.deleteForward()
	case "left", "ctrl+b":
		e.left()
	case "right", "ctrl+f":
		e.right()
	case "home", "ctrl+a":
		e.home()
	case "end", "ctrl+e":
		e.end()
	case "ctrl+u":
		e.killBefore()
	case "ctrl+w", "alt+backspace":
		e.killWord()
	default:
		return false
	}
	return true
}

func (e *editor) set(s string) {
	e.text = []rune(s)
	e.cursor = len(e.text)
}

// insert puts s at the cursor; a carriage return (a pasted Windows line
// end) is dropped.
func (e *editor) insert(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	r := []rune(s)
	e.text = append(e.text[:e.cursor], append(r, e.text[e.cursor:]...)...)
	e.cursor += len(r)
}

func (e *editor) backspace() {
	if e.cursor > 0 {
		e.text = append(e.text[:e.cursor-1], e.text[e.cursor:]...)
		e.cursor--
	}
}

func (e *editor) deleteForward() {
	if e.cursor < len(e.text) {
		e.text = append(e.text[:e.cursor], e.text[e.cursor+1:]...)
	}
}

func (e *editor) left() {
	if e.cursor > 0 {
		e.cursor--
	}
}

func (e *editor) right() {
	if e.cursor < len(e.text) {
		e.cursor++
	}
}

func (e *editor) home() { e.cursor = 0 }
func (e *editor) end()  { e.cursor = len(e.text) }

// killBefore deletes from the start of the line to the cursor (Ctrl-U).
func (e *editor) killBefore() {
	e.text = e.text[e.cursor:]
	e.cursor = 0
}

// killWord deletes the word before the cursor and the spaces after it
// (Ctrl-W).
func (e *editor) killWord() {
	i := e.cursor
	for i > 0 && unicode.IsSpace(e.text[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(e.text[i-1]) {
		i--
	}
	e.text = append(e.text[:i], e.text[e.cursor:]...)
	e.cursor = i
}

// take returns the line and empties the editor, remembering a non-blank
// line in the history.
func (e *editor) take() string {
	s := e.value()
	e.set("")
	if strings.TrimSpace(s) != "" && (len(e.history) == 0 || e.history[len(e.history)-1] != s) {
		e.history = append(e.history, s)
		if len(e.history) > maxHistory {
			e.history = e.history[1:]
		}
	}
	e.recall = len(e.history)
	e.draft = ""
	return s
}

// older shows the previous prompt sent (Up); the line being typed is kept
// and comes back with newer.
func (e *editor) older() {
	if e.recall == 0 {
		return
	}
	if e.recall == len(e.history) {
		e.draft = e.value()
	}
	e.recall--
	e.set(e.history[e.recall])
}

// newer goes back down the history (Down), ending at the line that was
// being typed.
func (e *editor) newer() {
	if e.recall >= len(e.history) {
		return
	}
	e.recall++
	if e.recall == len(e.history) {
		e.set(e.draft)
		return
	}
	e.set(e.history[e.recall])
}
