package webview

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/astrid-go/astrid/internal/mdparse"
)

// MDNode is one node of an answer's markdown as the page builds it: one
// of a fixed set of kinds (Kind), never markup. Raw HTML in the answer is
// a text node of its source; an image is its alt text (nothing is loaded);
// a link keeps its destination only when it is absolute http, https or
// mailto (the page checks again), else it is its text alone.
type MDNode struct {
	// Kind is one of p h ul ol li quote pre hr table tr th td text em
	// strong code a br span (a highlighted run of a pre's code).
	Kind string `json:"k"`
	// Text of a text, code or pre node.
	Text string `json:"t,omitempty"`
	// Href of an a node.
	Href string `json:"href,omitempty"`
	// Level of a heading (1–6); Start of an ordered list; Lang of a pre
	// node's fence; Align of a table cell (left, right, center).
	Level int    `json:"level,omitempty"`
	Start int    `json:"start,omitempty"`
	Lang  string `json:"lang,omitempty"`
	Align string `json:"align,omitempty"`
	// Class of a span: kw, str, num or com.
	Class    string   `json:"class,omitempty"`
	Children []MDNode `json:"c,omitempty"`
}

// Bounds on an answer as the view keeps it.
const (
	// maxAnswerBytes is how much of an answer is kept (cut on a rune
	// boundary, saying so).
	maxAnswerBytes = 16 << 10
	// maxMDDepth bounds nesting (quotes in quotes, lists in lists): what
	// is deeper is kept as its text.
	maxMDDepth = 16
)

// clipAnswer is the part of answer the view keeps (maxAnswerBytes, cut
// on a rune boundary) and how many bytes it leaves out.
func clipAnswer(answer string) (kept string, left int) {
	if len(answer) <= maxAnswerBytes {
		return answer, 0
	}
	n := maxAnswerBytes
	for n > 0 && !utf8.RuneStart(answer[n]) {
		n--
	}
	return answer[:n], len(answer) - n
}

// answerDoc is the markdown of an answer as nodes, parsed with p; left
// bytes of it were not kept (clipAnswer), which the last node says.
func answerDoc(p parser.Parser, answer string, left int) []MDNode {
	if left == 0 {
		answer, left = clipAnswer(answer)
	}
	src := []byte(strings.ToValidUTF8(answer, "\uFFFD"))
	b := mdBuilder{src: src}
	doc := b.children(p.Parse(text.NewReader(src)), 0)
	if left > 0 {
		doc = append(doc, MDNode{Kind: "p", Children: []MDNode{{Kind: "em", Children: []MDNode{{Kind: "text", Text: "… the rest of the answer (" + strconv.Itoa(left) + " bytes) is not kept by the view"}}}}})
	}
	return doc
}

type mdBuilder struct{ src []byte }

func (b mdBuilder) children(n ast.Node, depth int) []MDNode {
	out := make([]MDNode, 0, n.ChildCount())
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, b.node(c, depth+1)...)
	}
	return out
}

// node is n as page nodes (a text node of its text when it is too deep).
func (b mdBuilder) node(n ast.Node, depth int) []MDNode {
	if depth > maxMDDepth {
		return []MDNode{{Kind: "text", Text: string(plainText(n, b.src))}}
	}
	kids := func() []MDNode { return b.children(n, depth) }
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return []MDNode{{Kind: "p", Children: kids()}}
	case *ast.Heading:
		return []MDNode{{Kind: "h", Level: min(max(n.Level, 1), 6), Children: kids()}}
	case *ast.List:
		if n.IsOrdered() {
			return []MDNode{{Kind: "ol", Start: n.Start, Children: kids()}}
		}
		return []MDNode{{Kind: "ul", Children: kids()}}
	case *ast.ListItem:
		return []MDNode{{Kind: "li", Children: kids()}}
	case *ast.Blockquote:
		return []MDNode{{Kind: "quote", Children: kids()}}
	case *ast.FencedCodeBlock:
		lang := string(n.Language(b.src))
		return []MDNode{{Kind: "pre", Lang: lang, Children: highlighted(lang, b.lines(n.Lines()))}}
	case *ast.CodeBlock:
		return []MDNode{{Kind: "pre", Children: highlighted("", b.lines(n.Lines()))}}
	case *ast.HTMLBlock:
		t := b.lines(n.Lines())
		if n.HasClosure() {
			t += string(n.ClosureLine.Value(b.src))
		}
		return []MDNode{{Kind: "p", Children: []MDNode{{Kind: "text", Text: t}}}}
	case *ast.ThematicBreak:
		return []MDNode{{Kind: "hr"}}
	case *east.Table:
		return []MDNode{{Kind: "table", Children: kids()}}
	case *east.TableHeader, *east.TableRow:
		return []MDNode{{Kind: "tr", Children: kids()}}
	case *east.TableCell:
		kind := "td"
		if _, head := n.Parent().(*east.TableHeader); head {
			kind = "th"
		}
		align := map[east.Alignment]string{east.AlignLeft: "left", east.AlignRight: "right", east.AlignCenter: "center"}[n.Alignment]
		return []MDNode{{Kind: kind, Align: align, Children: kids()}}
	case *ast.Text:
		out := []MDNode{{Kind: "text", Text: string(util.UnescapePunctuations(n.Segment.Value(b.src)))}}
		switch {
		case n.HardLineBreak():
			out = append(out, MDNode{Kind: "br"})
		case n.SoftLineBreak():
			out[0].Text += "\n"
		}
		return out
	case *ast.String:
		return []MDNode{{Kind: "text", Text: string(n.Value)}}
	case *ast.CodeSpan:
		return []MDNode{{Kind: "code", Text: string(plainText(n, b.src))}}
	case *ast.Emphasis:
		if n.Level >= 2 {
			return []MDNode{{Kind: "strong", Children: kids()}}
		}
		return []MDNode{{Kind: "em", Children: kids()}}
	case *ast.Link:
		return []MDNode{{Kind: "a", Href: safeHref(string(n.Destination)), Children: kids()}}
	case *ast.AutoLink:
		u := string(n.URL(b.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			return []MDNode{{Kind: "a", Href: safeHref("mailto:" + u), Children: []MDNode{{Kind: "text", Text: u}}}}
		}
		return []MDNode{{Kind: "a", Href: safeHref(u), Children: []MDNode{{Kind: "text", Text: u}}}}
	case *ast.Image:
		return []MDNode{{Kind: "text", Text: "[image: " + string(plainText(n, b.src)) + "]"}}
	case *ast.RawHTML:
		var t strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			t.Write(seg.Value(b.src))
		}
		return []MDNode{{Kind: "text", Text: t.String()}}
	default:
		return kids()
	}
}

// spanClass names a highlighted run's class for the page.
var spanClass = map[mdparse.Class]string{mdparse.Keyword: "kw", mdparse.String: "str", mdparse.Number: "num", mdparse.Comment: "com"}

// highlighted is code as text and span nodes, highlighted as chat does.
func highlighted(lang, code string) []MDNode {
	h := mdparse.For(lang)
	var out []MDNode
	text := func(t string) {
		if n := len(out); n > 0 && out[n-1].Kind == "text" {
			out[n-1].Text += t
			return
		}
		out = append(out, MDNode{Kind: "text", Text: t})
	}
	for line := range strings.Lines(code) {
		body := strings.TrimSuffix(line, "\n")
		for _, r := range h.Line(body) {
			if c, ok := spanClass[r.Class]; ok {
				out = append(out, MDNode{Kind: "span", Class: c, Text: r.Text})
			} else {
				text(r.Text)
			}
		}
		if len(body) < len(line) {
			text("\n")
		}
	}
	return out
}

// lines is a block's lines as one text.
func (b mdBuilder) lines(segs *text.Segments) string {
	var t strings.Builder
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		t.Write(seg.Value(b.src))
	}
	return t.String()
}

// plainText is the text of n's descendants.
func plainText(n ast.Node, src []byte) []byte {
	var out []byte
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			out = append(out, c.Segment.Value(src)...)
			if c.SoftLineBreak() || c.HardLineBreak() {
				out = append(out, ' ')
			}
		case *ast.String:
			out = append(out, c.Value...)
		}
		return ast.WalkContinue, nil
	})
	return out
}

// safeHref is dest when it is an absolute http, https or mailto address,
// else "" (the link shows as its text alone).
func safeHref(dest string) string {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		// "http:x" has no host: a browser reads it as a path on the page's
		// own origin.
		if u.Host != "" && u.Opaque == "" {
			return u.String()
		}
	case "mailto":
		if u.Opaque != "" {
			return u.String()
		}
	}
	return ""
}
