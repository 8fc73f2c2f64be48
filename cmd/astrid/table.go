package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// tableWidth is the widest line a table printed for a person takes: the
// last column is cut (with an ellipsis) to fit it.
const tableWidth = 100

// tableGap separates columns.
const tableGap = "  "

// writeTable prints header and rows as aligned columns, each cell on one
// line (its whitespace folded), every line at most tableWidth runes: the
// last column takes what the others leave, cut to fit. Columns before the
// last are never cut (names and ids must stay whole); a row whose leading
// columns alone exceed the width keeps them and shows the last column as
// an ellipsis.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	all := append([][]string{header}, rows...)
	n := len(header)
	widths := make([]int, n)
	for _, row := range all {
		for i := 0; i < n-1 && i < len(row); i++ {
			row[i] = strings.Join(strings.Fields(row[i]), " ")
			widths[i] = max(widths[i], utf8.RuneCountInString(row[i]))
		}
	}
	var b strings.Builder
	for _, row := range all {
		b.Reset()
		for i := 0; i < n-1; i++ {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)))
			b.WriteString(tableGap)
		}
		if len(row) >= n {
			room := tableWidth - utf8.RuneCountInString(b.String())
			b.WriteString(cutRunes(strings.Join(strings.Fields(row[n-1]), " "), room))
		}
		line := strings.TrimRight(b.String(), " ") + "\n"
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// cutRunes cuts s to at most room runes, the last of them an ellipsis when
// it was cut (room < 1: just the ellipsis).
func cutRunes(s string, room int) string {
	if utf8.RuneCountInString(s) <= room {
		return s
	}
	if room < 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:room-1]) + "…"
}
