package chatui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// An answer's markdown is rendered: the heading's marks and the emphasis
// markers go, the list gets bullets, the code block keeps its text and is
// highlighted (coloured) by its language, and no line is padded.
func TestMarkdownRendered(t *testing.T) {
	var md markdown
	lines := md.render("# Title\n\nSome **bold** text.\n\n- one\n- two\n\n```go\nfunc main() {}\n```\n", 80)
	plain := ansi.Strip(strings.Join(lines, "\n"))
	for _, want := range []string{"Title", "Some bold text.", "• one", "• two", "func main() {}"} {
		if !strings.Contains(plain, want) {
			t.Errorf("rendered answer lacks %q:\n%s", want, plain)
		}
	}
	for _, gone := range []string{"**", "```", "# Title"} {
		if strings.Contains(plain, gone) {
			t.Errorf("rendered answer still shows %q:\n%s", gone, plain)
		}
	}
	var code string
	for _, l := range lines {
		if strings.Contains(ansi.Strip(l), "func main") {
			code = l
		}
	}
	if !strings.Contains(code, "\x1b[") || strings.Count(code, "\x1b[") < 3 {
		t.Errorf("the code line is not highlighted: %q", code)
	}
	for _, l := range lines {
		if s := ansi.Strip(l); strings.HasSuffix(s, " ") {
			t.Errorf("padded line %q", s)
		}
	}
}

// Streaming: a line goes once complete, except inside a code block (whole,
// once closed), a table or a numbered list (whole, at the next other line).
func TestMarkdownCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		want string // what may go
	}{
		{"partial", ""},
		{"one line\npart", "one line\n"},
		{"- a\n- b\n", "- a\n- b\n"},
		{"text\n```go\nx := 1\n", "text\n"},
		{"text\n```go\nx := 1\n```\nafter", "text\n```go\nx := 1\n```\n"},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n", ""},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n"},
		{"1. first\n2. second\n", ""},
		{"1. first\n2. second\nDone.\n", "1. first\n2. second\nDone.\n"},
	} {
		if got := c.s[:markdownCut(c.s)]; got != c.want {
			t.Errorf("markdownCut(%q) lets go %q, want %q", c.s, got, c.want)
		}
	}
}

// benchAnswer is a typical answer: a heading, a paragraph with inline
// code and emphasis, a list and a 20-line Go code block.
var benchAnswer = "## What changed\n\nThe `router` now **keeps** the call id, so *late* results are refused.\n\n- one\n- two\n- three\n\n```go\n" +
	strings.Repeat("func f(x int) string { return fmt.Sprintf(\"%d\", x) } // doc\n", 20) + "```\n"

// The cost of rendering one answer (parse, style, highlight, wrap).
func BenchmarkMarkdownRender(b *testing.B) {
	var md markdown
	b.ReportAllocs()
	for b.Loop() {
		md.render(benchAnswer, 100)
	}
}
