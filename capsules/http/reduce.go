package http

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxLinks bounds the numbered link list; later links keep their text and
// lose their number, so a page of ten thousand links stays readable.
const maxLinks = 500

// ReduceHTML turns an HTML document into readable text: the title, then
// headings as "#" lines, paragraphs and blocks separated by blank lines,
// list items as "- ", links as "text [n]" with the numbered absolute URLs
// listed at the end. Scripts, styles, templates, forms' hidden parts and
// everything in <head> but the title are dropped. base (the page's URL)
// resolves relative links, through the document's own <base href> if it
// has one; nil leaves them as written. It uses the HTML5 tokenizer of
// golang.org/x/net/html, so it reads any input, however malformed, in one
// linear pass.
func ReduceHTML(doc []byte, base *url.URL) string {
	r := reducer{base: base}
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return r.finish()
		case html.TextToken:
			r.text(string(z.Text()))
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var attrs map[string]string
			if hasAttr && (a == atom.A || a == atom.Img || a == atom.Base) {
				attrs = readAttrs(z)
			}
			r.start(a, attrs, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			r.end(atom.Lookup(name))
		}
	}
}

func readAttrs(z *html.Tokenizer) map[string]string {
	out := map[string]string{}
	for {
		k, v, more := z.TagAttr()
		if _, seen := out[string(k)]; !seen {
			out[string(k)] = string(v)
		}
		if !more {
			return out
		}
	}
}

// skipped are the elements whose content is not text a reader sees.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true,
	atom.Select: true, atom.Button: true, atom.Canvas: true, atom.Head: true,
}

// blocks are the elements that start and end a paragraph of their own.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Footer: true, atom.Nav: true, atom.Aside: true, atom.Blockquote: true,
	atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Table: true, atom.Form: true,
	atom.Figure: true, atom.Figcaption: true, atom.Address: true, atom.Details: true, atom.Summary: true,
	atom.Hr: true, atom.Fieldset: true, atom.Body: true, atom.Html: true,
}

// lines are the elements that start a line of their own.
var lines = map[atom.Atom]bool{
	atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true, atom.Br: true, atom.Caption: true,
}

var headingLevel = map[atom.Atom]int{
	atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6,
}

// reducer accumulates the text. Whitespace is collapsed to single spaces
// outside <pre>; breaks are pending until the next word, so no run of
// blank lines or trailing space is ever written.
type reducer struct {
	base    *url.URL
	baseSet bool
	out     strings.Builder
	title   strings.Builder
	// skip counts open skipped elements by kind: a stray </div> cannot end
	// a <script>'s skipping, and an unclosed <svg> hides the rest.
	skip map[atom.Atom]int
	// skipOpen is the sum of skip's counts, so each token asks one
	// integer whether it is hidden.
	skipOpen int
	inTitle  bool
	pre      int
	// breakAfter is the pending separator: 0 none, 1 a space, 2 a newline,
	// 3 a blank line.
	pending int
	// link is the open <a>'s URL ("" when none or not numbered).
	link  string
	links []string
}

func (r *reducer) skipping() bool { return r.skipOpen > 0 }

func (r *reducer) brk(level int) { r.pending = max(r.pending, level) }

func (r *reducer) start(a atom.Atom, attrs map[string]string, selfClosing bool) {
	switch {
	case a == atom.Title:
		r.inTitle = !selfClosing
		return
	case skipped[a]:
		if !selfClosing {
			if r.skip == nil {
				r.skip = map[atom.Atom]int{}
			}
			r.skip[a]++
			r.skipOpen++
		}
		return
	}
	if a == atom.Base && !r.baseSet {
		// The document's own <base href> (the first one, as browsers
		// take it) resolves its links, relative to the page's URL.
		r.baseSet = true
		if b, err := url.Parse(strings.TrimSpace(attrs["href"])); err == nil && attrs["href"] != "" {
			if r.base != nil {
				b = r.base.ResolveReference(b)
			}
			r.base = b
		}
		return
	}
	if a == atom.Body && r.skip[atom.Head] > 0 {
		r.skipOpen -= r.skip[atom.Head] // <head> is often left open; <body> ends it
		r.skip[atom.Head] = 0
	}
	if r.skipping() {
		return
	}
	switch {
	case headingLevel[a] > 0:
		r.brk(3)
		r.write(strings.Repeat("#", headingLevel[a]) + " ")
	case blocks[a]:
		r.brk(3)
	case a == atom.Li:
		r.brk(2)
		r.write("- ")
	case lines[a]:
		r.brk(2)
	case a == atom.Td || a == atom.Th:
		r.brk(1)
	case a == atom.Pre:
		r.brk(3)
		if !selfClosing {
			r.pre++
		}
	case a == atom.A:
		r.link = r.resolve(attrs["href"])
	case a == atom.Img:
		if alt := strings.Join(strings.Fields(attrs["alt"]), " "); alt != "" {
			r.text("[image: " + alt + "]")
		}
	}
}

func (r *reducer) end(a atom.Atom) {
	switch {
	case a == atom.Title:
		r.inTitle = false
		return
	case skipped[a]:
		if r.skip[a] > 0 {
			r.skip[a]--
			r.skipOpen--
		}
		return
	}
	if r.skipping() {
		return
	}
	switch {
	case headingLevel[a] > 0, blocks[a], a == atom.Pre:
		r.brk(3)
		if a == atom.Pre && r.pre > 0 {
			r.pre--
		}
	case lines[a]:
		r.brk(2)
	case a == atom.A:
		if r.link != "" {
			r.links = append(r.links, r.link)
			r.write(fmt.Sprintf(" [%d]", len(r.links)))
			r.link = ""
		}
	}
}

// resolve is href as an absolute http(s) or mailto URL worth numbering, or
// "" (a fragment of this page, javascript:, data:, past maxLinks).
func (r *reducer) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || len(r.links) >= maxLinks {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if r.base != nil {
		u = r.base.ResolveReference(u)
	}
	switch u.Scheme {
	case "http", "https", "mailto", "":
		return u.String()
	}
	return ""
}

func (r *reducer) text(s string) {
	if r.inTitle {
		r.title.WriteString(s)
		return
	}
	if r.skipping() {
		return
	}
	if r.pre > 0 {
		r.write(s)
		return
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		if s != "" {
			r.brk(1)
		}
		return
	}
	if isSpace(s[0]) {
		r.brk(1)
	}
	r.write(strings.Join(words, " "))
	if isSpace(s[len(s)-1]) {
		r.brk(1)
	}
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f'
}

// write emits s after the pending separator (none at the very start).
func (r *reducer) write(s string) {
	if s == "" {
		return
	}
	if r.out.Len() > 0 {
		switch r.pending {
		case 1:
			r.out.WriteByte(' ')
		case 2:
			r.out.WriteByte('\n')
		case 3:
			r.out.WriteString("\n\n")
		}
	}
	r.pending = 0
	r.out.WriteString(s)
}

func (r *reducer) finish() string {
	var b strings.Builder
	if t := strings.Join(strings.Fields(r.title.String()), " "); t != "" {
		b.WriteString("Title: " + t + "\n\n")
	}
	b.WriteString(r.out.String())
	if len(r.links) > 0 {
		b.WriteString("\n\nLinks:\n")
		for i, l := range r.links {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, l)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
