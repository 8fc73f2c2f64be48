package chatui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	east "github.com/yuin/goldmark/extension/ast"
)

// Table layout: columns are separated by a faint bar, the header is bold
// and underlined by a rule; a column narrower than minColumn is never
// made (the widest are narrowed first, their cells wrapped).
const (
	columnGap = " │ "
	minColumn = 6
)

// table writes t with its columns aligned as the delimiter row says,
// within the width: when the cells' natural widths do not fit, the widest
// columns are narrowed and their cells wrapped. A table that cannot fit
// even so is written one row a line, its cells joined by the bar.
func (r *mdRenderer) table(t *east.Table, first, rest string) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.ReplaceAll(r.inlines(cell), "\n", " "))
		}
		rows = append(rows, cells)
	}
	n := len(t.Alignments)
	if n == 0 || len(rows) == 0 {
		return
	}
	widths := make([]int, n)
	for _, cells := range rows {
		for i, c := range cells {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	room := r.width - ansi.StringWidth(rest) - ansi.StringWidth(columnGap)*(n-1)
	bar := sgrFaint + columnGap + sgrFaintOff
	if !fitColumns(widths, room) {
		for i, cells := range rows {
			r.para(strings.Join(cells, bar), prefixFor(min(i, 1), first, rest), rest)
		}
		return
	}
	k := 0 // lines written
	for i, cells := range rows {
		wrapped := make([][]string, n)
		height := 1
		for c := range n {
			wrapped[c] = strings.Split(ansi.Wrap(cells[c], widths[c], ""), "\n")
			height = max(height, len(wrapped[c]))
		}
		for l := range height {
			parts := make([]string, n)
			for c := range n {
				s := ""
				if l < len(wrapped[c]) {
					s = strings.TrimRight(wrapped[c][l], " ")
				}
				if i == 0 && s != "" { // the header
					s = sgrBold + s + sgrBoldOff
				}
				parts[c] = align(s, widths[c], t.Alignments[c])
			}
			r.lines = append(r.lines, trimStyled(prefixFor(k, first, rest)+strings.Join(parts, bar)))
			k++
		}
		if i == 0 {
			rule := make([]string, n)
			for c := range n {
				rule[c] = strings.Repeat("─", widths[c])
			}
			r.lines = append(r.lines, rest+sgrFaint+strings.Join(rule, "─┼─")+sgrFaintOff)
		}
	}
}

// fitColumns narrows the widest of widths until their sum is at most
// room, none below minColumn (or its natural width, when smaller); false
// when they cannot fit.
func fitColumns(widths []int, room int) bool {
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > room {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= minColumn {
			return false
		}
		widths[widest]--
		total--
	}
	return true
}

// align pads s (of display width at most w) to w as a says.
func align(s string, w int, a east.Alignment) string {
	gap := max(w-ansi.StringWidth(s), 0)
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + s
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	default:
		return s + strings.Repeat(" ", gap)
	}
}

// trimStyled is s without the spaces that end it, the styling codes after
// them kept.
func trimStyled(s string) string {
	var tail []string
	for {
		switch t := strings.TrimRight(s, " "); {
		case t != s:
			s = t
		case strings.HasSuffix(s, "m") && strings.LastIndex(s, "\x1b[") >= 0 && isSGR(s[strings.LastIndex(s, "\x1b["):]):
			i := strings.LastIndex(s, "\x1b[")
			tail = append(tail, s[i:])
			s = s[:i]
		default:
			for i := len(tail) - 1; i >= 0; i-- {
				s += tail[i]
			}
			return s
		}
	}
}

// isSGR reports whether s is one SGR sequence (ESC [ digits and ; m).
func isSGR(s string) bool {
	if len(s) < 3 || s[:2] != "\x1b[" || s[len(s)-1] != 'm' {
		return false
	}
	return strings.Trim(s[2:len(s)-1], "0123456789;") == ""
}
