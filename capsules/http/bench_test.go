package http

import (
	"strings"
	"testing"
)

// BenchmarkReduceHTML reduces a 1 MiB article-like page (headings,
// paragraphs with links, a script and a style per section).
func BenchmarkReduceHTML(b *testing.B) {
	var page strings.Builder
	page.WriteString("<html><head><title>Bench</title></head><body>")
	for i := 0; page.Len() < 1<<20; i++ {
		page.WriteString(`<h2>Section</h2><script>var x = "` + strings.Repeat("s", 200) + `";</script><style>p{color:red}</style>`)
		page.WriteString(`<p>Some <b>text</b> with <a href="/page/` + strings.Repeat("x", i%7) + `">a link</a> and more words in it.</p>`)
		page.WriteString(`<ul><li>one</li><li>two</li></ul>`)
	}
	doc := []byte(page.String())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_ = ReduceHTML(doc, nil)
	}
}
