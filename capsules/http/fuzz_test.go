package http

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReduceHTML feeds the reducer arbitrary bytes: it must not panic, its
// text (after clean, as the tool returns it) must be UTF-8 without control
// characters, its size must stay proportional to the input's, and nothing
// inside a <script> may ever reach it.
func FuzzReduceHTML(f *testing.F) {
	for _, seed := range []string{
		"", "<p>x</p>", `<html><head><title>t</title></head><body><h1>h</h1><a href="/a">a</a></body></html>`,
		"<script>SECRET</script>", "<pre>\x00\xff</pre>", "<a href='javascript:x'>j</a>", "<svg><p>", "<<<>>>&&&;",
		"<head><body><title>", "<table><tr><td>1<td>2", "&nGt;&nLt;&NotSquareSubsetEqual;",
	} {
		f.Add([]byte(seed))
	}
	base, _ := url.Parse("https://example.com/dir/")
	f.Fuzz(func(t *testing.T, doc []byte) {
		out := clean(ReduceHTML(doc, base))
		if !utf8.ValidString(out) {
			t.Fatalf("not UTF-8: %q", out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' {
				t.Fatalf("control character %U in %q", r, out)
			}
		}
		// Each input byte yields a bounded amount of text: a link a
		// number, its URL (base included) and a list line; an entity a
		// few runes; a tag a separator or a heading marker.
		if bound := 16*len(doc) + 64*strings.Count(string(doc), "<") + 64; len(out) > bound {
			t.Fatalf("%d bytes of text from %d bytes of HTML", len(out), len(doc))
		}
		// Whatever state doc leaves the tokenizer in (an open comment,
		// attribute or raw-text element), the closer ends it, so what
		// follows is a real <script> whose content must not be shown.
		// <plaintext> is never closed: everything after it is text.
		const canary = "CANARYxyzzy"
		const closer = "-->\"'></textarea></title></style></xmp></iframe></noembed></noframes></noscript></script>"
		if strings.Contains(string(doc), canary) || strings.Contains(strings.ToLower(string(doc)), "plaintext") {
			return
		}
		withScript := string(doc) + closer + "<script>" + canary + "</script>"
		if strings.Contains(ReduceHTML([]byte(withScript), base), canary) {
			t.Fatalf("script content leaked from %q", withScript)
		}
	})
}
