package http

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReduceHTML(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	for _, c := range []struct {
		name, in, want string
	}{
		{"title and heading and paragraph",
			`<html><head><title> The  Page </title><meta charset=utf-8></head><body><h1>Hello</h1><p>One   two
			three.</p></body></html>`,
			"Title: The Page\n\n# Hello\n\nOne two three."},
		{"heading levels", `<h2>Two</h2><h3>Three</h3><h6>Six</h6>`, "## Two\n\n### Three\n\n###### Six"},
		{"scripts, styles and the head's other content dropped",
			`<head><style>body{color:red}</style><script>var secret="x"</script><link rel=x></head>` +
				`<body><p>shown</p><script>alert("no")</script><noscript>enable js</noscript><template><p>tpl</p></template></body>`,
			"shown"},
		{"a script that writes a closing tag stays a script",
			`<p>a</p><script>document.write("</p><p>injected")</script><p>b</p>`, "a\n\nb"},
		{"an unclosed head ends at body", `<head><title>T</title><body><p>text</p>`, "Title: T\n\ntext"},
		{"links numbered and listed, resolved against the page",
			`<p>See <a href="/a">the A page</a> and <a href="b.html#x">B</a>.</p>`,
			"See the A page [1] and B [2].\n\nLinks:\n[1] https://example.com/a\n[2] https://example.com/docs/b.html#x"},
		{"fragment, javascript and empty links are not numbered",
			`<a href="#top">top</a> <a href="javascript:alert(1)">js</a> <a>none</a> <a href="data:text/html,x">data</a>`,
			"top js none data"},
		{"the document's base resolves links, the first one only",
			`<head><base href="/v2/"><base href="https://evil.example/"></head><a href="x">x</a>`,
			"x [1]\n\nLinks:\n[1] https://example.com/v2/x"},
		{"mailto kept", `<a href="mailto:a@example.com">mail</a>`, "mail [1]\n\nLinks:\n[1] mailto:a@example.com"},
		{"list items", `<ul><li>one</li><li>two <b>bold</b></li></ul>`, "- one\n- two bold"},
		{"table rows on lines, cells spaced", `<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>`, "k v\na 1"},
		{"pre keeps its whitespace", "<p>x</p><pre>  a\n    b</pre><p>y</p>", "x\n\n  a\n    b\n\ny"},
		{"br breaks a line", `<p>one<br>two<br/>three</p>`, "one\ntwo\nthree"},
		{"entities decoded", `<p>a &lt;b&gt; &amp; &quot;c&quot; &eacute;</p>`, `a <b> & "c" é`},
		{"image alt text", `<p><img src=x.png alt=" a  cat "> sits</p>`, "[image: a cat] sits"},
		{"inline elements do not break words", `<p>in<em>line</em> <span>span</span></p>`, "inline span"},
		{"malformed markup read anyway", `<p>open <div>nested <p>again</b></i> end`, "open\n\nnested\n\nagain end"},
		{"a stray end tag cannot end a script early", `<script>x</div>y</script><p>z</p>`, "z"},
		{"svg content dropped", `<p>a</p><svg><text>drawn</text></svg><p>b</p>`, "a\n\nb"},
		{"comments and doctype dropped", `<!DOCTYPE html><!-- hidden --><p>seen</p>`, "seen"},
		{"empty document", ``, ""},
		{"text only", `just text`, "just text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ReduceHTML([]byte(c.in), base); got != c.want {
				t.Fatalf("ReduceHTML(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestReduceHTMLNumbersAtMostMaxLinks(t *testing.T) {
	var b strings.Builder
	for range maxLinks + 5 {
		b.WriteString(`<a href="https://example.com/x">x</a> `)
	}
	got := ReduceHTML([]byte(b.String()), nil)
	if !strings.Contains(got, "[500] https://example.com/x") || strings.Contains(got, "[501]") {
		t.Fatalf("want links numbered up to %d and no further; tail: %q", maxLinks, got[len(got)-200:])
	}
}

func TestReduceHTMLLeavesRelativeLinksWithoutBase(t *testing.T) {
	if got := ReduceHTML([]byte(`<a href="rel/x">r</a>`), nil); got != "r [1]\n\nLinks:\n[1] rel/x" {
		t.Fatalf("got %q", got)
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		contentType, body, want string
	}{
		{"text/html; charset=utf-8", "x", kindHTML},
		{"TEXT/HTML", "x", kindHTML},
		{"application/xhtml+xml", "x", kindHTML},
		{"application/json", `{"a":1}`, kindText},
		{"application/problem+json", `{}`, kindText},
		{"text/plain", "plain", kindText},
		{"text/csv", "a,b", kindText},
		{"application/rss+xml", "<rss/>", kindText},
		{"", "  <!DOCTYPE html><p>x", kindHTML},
		{"application/octet-stream", "<html>", kindHTML},
		{"", "plain words", kindText},
		{"image/png", "\x89PNG\r\n\x1a\n\x00\x00", kindBinary},
		{"application/octet-stream", "a\x00b", kindBinary},
		{"", "\xff\xfe\xfd\xfc\xfb", kindBinary},
	} {
		if got := kindOf(c.contentType, []byte(c.body)); got != c.want {
			t.Errorf("kindOf(%q, %q) = %s, want %s", c.contentType, c.body, got, c.want)
		}
	}
}

func TestTruncateCutsAtARuneBoundaryAndSaysHowMuchWasLeftOut(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	got := truncate(s, 5)
	if !strings.HasPrefix(got, "éé\n\n[...truncated: showing 4 of 20 bytes, 16 bytes left out;") {
		t.Fatalf("got %q", got)
	}
	if !utf8.ValidString(got) {
		t.Fatalf("not UTF-8: %q", got)
	}
	if truncate(s, 20) != s {
		t.Fatal("a text at the limit was cut")
	}
}

func TestCleanDropsControlCharactersAndRepairsUTF8(t *testing.T) {
	if got := clean("a\x00b\x1bc\r\nd\te\x7f\xff"); got != "abc\nd\te\uFFFD" {
		t.Fatalf("got %q", got)
	}
}
