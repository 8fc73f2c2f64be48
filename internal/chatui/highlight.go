package chatui

import (
	"strings"

	"github.com/astrid-go/astrid/internal/mdparse"
)

// Colours of the highlighted classes (mdparse.Highlighter reads them).
var sgrOf = map[mdparse.Class]string{
	mdparse.Keyword: "\x1b[35m",
	mdparse.String:  "\x1b[32m",
	mdparse.Number:  "\x1b[33m",
	mdparse.Comment: "\x1b[90m",
}

const sgrReset = "\x1b[39m"

// highlighter colours one line of code at a time.
type highlighter struct{ h mdparse.Highlighter }

// highlighterFor is the highlighter of a code block's info string.
func highlighterFor(lang string) highlighter { return highlighter{mdparse.For(lang)} }

// line is one line of code, coloured.
func (h highlighter) line(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 40)
	for _, r := range h.h.Line(s) {
		if on, ok := sgrOf[r.Class]; ok {
			b.WriteString(on + r.Text + sgrReset)
		} else {
			b.WriteString(r.Text)
		}
	}
	return b.String()
}
