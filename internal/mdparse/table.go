package mdparse

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// tableTransformer reads GFM tables out of paragraphs (a header row, a
// delimiter row such as |---|:-:|, then rows, up to the paragraph's end)
// into goldmark's table nodes, whose cells the inline parser then reads.
// It is written here rather than taken from goldmark's extension package,
// whose autolinking regular expressions cost every astrid command 0.75 ms
// of package initialisation (measured with GODEBUG=inittrace=1).
//
// As GFM says, a row is split at every pipe not escaped with a
// backslash, inside a code span too; a row with fewer cells than the
// header is padded, one with more is cut.
type tableTransformer struct{}

func (tableTransformer) Transform(para *ast.Paragraph, reader text.Reader, _ parser.Context) {
	lines := para.Lines()
	if lines.Len() < 2 {
		return
	}
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		aligns := delimiterRow(seg.Value(src))
		if aligns == nil {
			continue
		}
		head := splitRow(src, lines.At(i-1))
		if len(head) != len(aligns) {
			continue
		}
		table := east.NewTable()
		table.Alignments = aligns
		table.AppendChild(table, east.NewTableHeader(tableRow(head, aligns)))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, tableRow(splitRow(src, lines.At(j)), aligns))
		}
		parent := para.Parent()
		if i == 1 {
			parent.ReplaceChild(parent, para, table)
			return
		}
		// The lines above the header stay a paragraph.
		rest := text.NewSegments()
		for j := 0; j < i-1; j++ {
			rest.Append(lines.At(j))
		}
		para.SetLines(rest)
		parent.InsertAfter(parent, para, table)
		return
	}
}

// tableRow is a row of cells whose lines are segs, aligned by aligns
// (padded or cut to their number).
func tableRow(segs []text.Segment, aligns []east.Alignment) *east.TableRow {
	row := east.NewTableRow(aligns)
	for i, a := range aligns {
		cell := east.NewTableCell()
		cell.Alignment = a
		if i < len(segs) {
			cell.Lines().Append(segs[i])
		}
		row.AppendChild(row, cell)
	}
	return row
}

// delimiterRow is the alignments a delimiter row sets, nil when line is
// not one.
func delimiterRow(line []byte) []east.Alignment {
	line = bytes.TrimSpace(line)
	piped := bytes.Contains(line, []byte("|"))
	if !bytes.Contains(line, []byte("-")) {
		return nil
	}
	line = bytes.TrimPrefix(line, []byte("|"))
	line = bytes.TrimSuffix(line, []byte("|"))
	var out []east.Alignment
	for _, cell := range bytes.Split(line, []byte("|")) {
		cell = bytes.TrimSpace(cell)
		left, right := bytes.HasPrefix(cell, []byte(":")), bytes.HasSuffix(cell, []byte(":"))
		dashes := bytes.Trim(cell, ":")
		if len(dashes) == 0 || len(bytes.Trim(dashes, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			out = append(out, east.AlignCenter)
		case left:
			out = append(out, east.AlignLeft)
		case right:
			out = append(out, east.AlignRight)
		default:
			out = append(out, east.AlignNone)
		}
	}
	if len(out) == 1 && !piped {
		// A lone run of dashes under a line is a setext heading's, and
		// goldmark has read it so already; a single column needs a pipe.
		return nil
	}
	return out
}

// splitRow is the cells of a row, each trimmed: split at unescaped pipes,
// a leading and a trailing one dropped.
func splitRow(src []byte, line text.Segment) []text.Segment {
	start, stop := line.Start, line.Stop
	for start < stop && isSpace(src[start]) {
		start++
	}
	for stop > start && isSpace(src[stop-1]) {
		stop--
	}
	if start < stop && src[start] == '|' {
		start++
	}
	if stop > start && src[stop-1] == '|' && (stop-2 < start || src[stop-2] != '\\') {
		stop--
	}
	var cells []text.Segment
	from := start
	for i := start; i <= stop; i++ {
		if i+1 < stop && src[i] == '\\' {
			i++ // the escaped byte is the cell's
			continue
		}
		if i == stop || src[i] == '|' {
			s, e := from, min(i, stop)
			for s < e && isSpace(src[s]) {
				s++
			}
			for e > s && isSpace(src[e-1]) {
				e--
			}
			cells = append(cells, text.NewSegment(s, e))
			from = i + 1
		}
	}
	return cells
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
