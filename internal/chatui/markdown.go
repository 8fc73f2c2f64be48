package chatui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/astrid-go/astrid/internal/mdparse"
)

// markdown renders the model's answers for the terminal: headings,
// emphasis, inline code, lists, quotes, links, GFM tables (table.go), and
// fenced code blocks highlighted by their language (highlight.go). It is parsed with
// goldmark's core parser (CommonMark) and styled here: glamour, which
// crush uses, costs every astrid command about 55 ms of package
// initialisation (chroma's lexers, autolinking and sanitising regular
// expressions), chat or not; this costs nothing until an answer is shown.
type markdown struct {
	p parser.Parser
}

// render is text (untrusted: the model's) as screen lines of at most
// width columns. Control characters are escaped before the markdown is
// read, so nothing in it reaches the terminal but the styling added here.
func (md *markdown) render(src string, width int) []string {
	safe := strings.Join(textLines(src), "\n")
	if strings.TrimSpace(safe) == "" {
		return textLines(src)
	}
	if md.p == nil {
		md.p = mdparse.New()
	}
	source := []byte(safe)
	r := mdRenderer{src: source, width: width - 1}
	r.blocks(md.p.Parse(text.NewReader(source)), "", "")
	for len(r.lines) > 0 && r.lines[len(r.lines)-1] == "" {
		r.lines = r.lines[:len(r.lines)-1]
	}
	return r.lines
}

// mdRenderer writes blocks as lines: first is the prefix of a block's
// first line (a list bullet), rest of its others (the indent under it).
type mdRenderer struct {
	src   []byte
	width int
	lines []string
}

// SGR pairs that end only their own attribute, so styles nest.
const (
	sgrBold, sgrBoldOff     = "\x1b[1m", "\x1b[22m"
	sgrItalic, sgrItalicOff = "\x1b[3m", "\x1b[23m"
	sgrCode, sgrCodeOff     = "\x1b[36m", "\x1b[39m"
	sgrFaint, sgrFaintOff   = "\x1b[2m", "\x1b[22m"
	sgrUnder, sgrUnderOff   = "\x1b[4m", "\x1b[24m"
)

func (r *mdRenderer) blocks(parent ast.Node, first, rest string) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if n != parent.FirstChild() {
			first = rest
			if n.HasBlankPreviousLines() || isBlock(n) && !tight(parent) {
				r.lines = append(r.lines, "")
			}
		}
		r.block(n, first, rest)
	}
}

func isBlock(n ast.Node) bool { return n.Type() == ast.TypeBlock }

func tight(n ast.Node) bool {
	if li, ok := n.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	_, isList := n.(*ast.List)
	return isList
}

func (r *mdRenderer) block(n ast.Node, first, rest string) {
	switch n := n.(type) {
	case *ast.Heading:
		marks := sgrBold + "\x1b[36m"
		if n.Level > 2 {
			marks = sgrBold
		}
		r.para(marks+r.inlines(n)+"\x1b[39m"+sgrBoldOff, first, rest)
	case *ast.Paragraph, *ast.TextBlock:
		r.para(r.inlines(n), first, rest)
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			bullet := "• "
			if n.IsOrdered() {
				bullet = fmt.Sprintf("%d. ", num)
				num++
			}
			if item != n.FirstChild() && !n.IsTight {
				r.lines = append(r.lines, "")
			}
			pad := strings.Repeat(" ", ansi.StringWidth(bullet))
			if item == n.FirstChild() {
				r.blocks(item, first+bullet, rest+pad)
			} else {
				r.blocks(item, rest+bullet, rest+pad)
			}
		}
	case *ast.Blockquote:
		bar := sgrFaint + "│ " + sgrFaintOff
		r.blocks(n, first+bar, rest+bar)
	case *ast.FencedCodeBlock:
		r.code(n.Lines(), string(n.Language(r.src)), first, rest)
	case *ast.CodeBlock:
		r.code(n.Lines(), "", first, rest)
	case *east.Table:
		r.table(n, first, rest)
	case *ast.ThematicBreak:
		r.lines = append(r.lines, first+sgrFaint+strings.Repeat("─", max(min(r.width, 40)-ansi.StringWidth(first), 3))+sgrFaintOff)
	case *ast.HTMLBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			r.lines = append(r.lines, prefixFor(i, first, rest)+strings.TrimRight(string(seg.Value(r.src)), "\n"))
		}
	default:
		if n.HasChildren() {
			r.blocks(n, first, rest)
		}
	}
}

func prefixFor(i int, first, rest string) string {
	if i == 0 {
		return first
	}
	return rest
}

// para writes styled inline text, its line breaks kept, wrapped to the
// width under its prefixes.
func (r *mdRenderer) para(s, first, rest string) {
	i := 0
	for _, line := range strings.Split(s, "\n") {
		room := r.width - ansi.StringWidth(rest)
		if room >= 20 {
			line = ansi.Wrap(line, room, "")
		}
		for _, l := range strings.Split(line, "\n") {
			r.lines = append(r.lines, prefixFor(i, first, rest)+strings.TrimRight(l, " "))
			i++
		}
	}
}

// code writes a code block, highlighted, indented under a faint bar.
func (r *mdRenderer) code(lines *text.Segments, lang, first, rest string) {
	hl := highlighterFor(lang)
	bar := sgrFaint + "│ " + sgrFaintOff
	if lang != "" {
		r.lines = append(r.lines, first+sgrFaint+"╭ "+lang+sgrFaintOff)
		first = rest
	}
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(r.src)), "\n")
		r.lines = append(r.lines, prefixFor(i, first, rest)+bar+hl.line(line))
	}
}

// inlines renders n's inline children as styled text ("\n" for a line
// break).
func (r *mdRenderer) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&b, c)
	}
	return b.String()
}

func (r *mdRenderer) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		// Backslash escapes of ASCII punctuation only: resolving entities
		// would let &#27; put an escape character on the screen.
		b.Write(util.UnescapePunctuations(n.Segment.Value(r.src)))
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.WriteByte('\n')
		}
	case *ast.String:
		b.Write(n.Value)
	case *ast.CodeSpan:
		b.WriteString(sgrCode + r.inlines(n) + sgrCodeOff)
	case *ast.Emphasis:
		on, off := sgrItalic, sgrItalicOff
		if n.Level >= 2 {
			on, off = sgrBold, sgrBoldOff
		}
		b.WriteString(on + r.inlines(n) + off)
	case *ast.Link:
		label := r.inlines(n)
		b.WriteString(sgrUnder + label + sgrUnderOff)
		if dest := string(n.Destination); dest != "" && dest != ansi.Strip(label) {
			b.WriteString(sgrFaint + " (" + dest + ")" + sgrFaintOff)
		}
	case *ast.AutoLink:
		b.WriteString(sgrUnder + string(n.URL(r.src)) + sgrUnderOff)
	case *ast.Image:
		b.WriteString(sgrFaint + "[image: " + r.inlines(n) + "]" + sgrFaintOff)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
	default:
		b.WriteString(r.inlines(n))
	}
}

// markdownCut is where a streamed answer can be rendered up to: just past
// its last complete line that ends a block rendered alone just as within
// the whole (so a line of a paragraph or a bulleted list goes as soon as
// it is complete), never inside a fenced code block (it goes once closed),
// a table or a numbered list (they go whole, at the next other line); 0
// when nothing can go yet.
func markdownCut(s string) int {
	cut, fenced, at := 0, false, 0
	for at < len(s) {
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			break // the line being written
		}
		line := strings.TrimSpace(s[at : at+end])
		next := at + end + 1
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fenced = !fenced
			if !fenced {
				cut = next // a closed code block is whole
			}
		case fenced, strings.HasPrefix(line, "|"), orderedItem(line):
		default:
			cut = next
		}
		at = next
	}
	return cut
}

// orderedItem reports whether line starts a numbered list item ("12. ").
func orderedItem(line string) bool {
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' '
}
