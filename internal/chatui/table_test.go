package chatui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A GFM table is drawn with its columns aligned as its delimiter row says:
// the cells of a column start (left), end (right) or centre at the same
// screen column on every row, the markup is gone, and inline styling in
// a cell is kept.
func TestMarkdownTableAligned(t *testing.T) {
	var md markdown
	src := "Sizes:\n\n| File | Lines | Note |\n|:-----|------:|:----:|\n| `main.go` | 120 | **new** |\n| a.go | 7 | ok |\n"
	lines := md.render(src, 80)
	plain := strings.Split(ansi.Strip(strings.Join(lines, "\n")), "\n")
	want := []string{
		"Sizes:",
		"",
		"File    │ Lines │ Note",
		"────────┼───────┼─────",
		"main.go │   120 │ new",
		"a.go    │     7 │  ok",
	}
	if strings.Join(plain, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table drawn as\n%s\nwant\n%s", strings.Join(plain, "\n"), strings.Join(want, "\n"))
	}
	joined := strings.Join(lines, "\n")
	if !strings.Contains(joined, sgrBold+"File"+sgrBoldOff) || !strings.Contains(joined, sgrCode+"main.go"+sgrCodeOff) {
		t.Errorf("the header is not bold or the code cell not styled: %q", joined)
	}
}

// A table wider than the screen narrows its widest column and wraps that
// column's cells, every line within the width and the columns still
// lined up; one that cannot fit even so is written a row a line.
func TestMarkdownTableFitsTheWidth(t *testing.T) {
	var md markdown
	long := strings.Repeat("word ", 30)
	lines := md.render("| Key | Value |\n|---|---|\n| a | "+long+"|\n| b | short |\n", 40)
	bar := -1
	for _, l := range lines {
		s := ansi.Strip(l)
		if w := ansi.StringWidth(s); w > 39 {
			t.Errorf("line of %d columns in 40: %q", w, s)
		}
		i := strings.IndexAny(s, "│┼")
		if i < 0 {
			t.Errorf("line without the column bar: %q", s)
			continue
		}
		at := ansi.StringWidth(s[:i])
		if bar >= 0 && at != bar {
			t.Errorf("the bar moved from %d to %d: %q", bar, at, s)
		}
		bar = at
	}
	if len(lines) < 6 {
		t.Errorf("the long cell was not wrapped: %q", lines)
	}
	narrow := md.render("| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 |\n", 20)
	if got := ansi.Strip(strings.Join(narrow, "\n")); !strings.Contains(got, "1 │ 2 │ 3") {
		t.Errorf("a table that cannot fit is not written a row a line: %q", got)
	}
}

// What is not a table stays what it was; escaped pipes are a cell's text;
// rows short of cells are padded and long ones cut; the model's escape
// sequences in a cell never reach the terminal.
func TestMarkdownTableEdges(t *testing.T) {
	var md markdown
	for _, tc := range []struct{ name, src, want string }{
		{"no delimiter row", "| a | b |\n| c | d |\n", "| a | b |\n| c | d |"},
		{"header and delimiter disagree", "| a | b |\n|---|\n| c | d |\n", "| a | b |\n|---|\n| c | d |"},
		{"setext heading stays a heading", "Title\n---\n", "Title"},
		{"escaped pipe", "| a | b |\n|---|---|\n| x \\| y | z |\n", "a     │ b\n──────┼──\nx | y │ z"},
		{"short and long rows", "| a | b |\n|---|---|\n| 1 |\n| 2 | 3 | 4 |\n", "a │ b\n──┼──\n1 │\n2 │ 3"},
		{"text above the table", "Here:\n| a | b |\n|---|---|\n| 1 | 2 |\n", "Here:\n\na │ b\n──┼──\n1 │ 2"},
		{"escape sequence in a cell", "| a |\n|---|\n| \x1b[31mred\x1b]0;owned\x07 |\n", "a\n" + strings.Repeat("─", 33) + "\n\\u001b[31mred\\u001b]0;owned\\u0007"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := md.render(tc.src, 80)
			if got := ansi.Strip(strings.Join(lines, "\n")); got != tc.want {
				t.Errorf("rendered\n%q\nwant\n%q", got, tc.want)
			}
			for _, l := range lines {
				if strings.Contains(l, "\x1b]") || strings.Contains(l, "\x1b[31m") {
					t.Errorf("the model's escape reached the screen: %q", l)
				}
			}
		})
	}
}

// Whatever the model writes, rendering never panics and puts no escape on
// the screen but the styling added here (SGR sequences).
func FuzzMarkdownRender(f *testing.F) {
	f.Add("| a | b |\n|:-|-:|\n| 1 \\| 2 | `x|y` |\n", 40)
	f.Add("x\n|--|\n| a |\n| b | c | d |\n", 10)
	f.Add("# t\n\n- a\n\n```go\nfunc f() {}\n```\n> q\n", 80)
	f.Fuzz(func(t *testing.T, src string, width int) {
		var md markdown
		for _, l := range md.render(src, width%200) {
			for i := 0; i < len(l); i++ {
				switch c := l[i]; {
				case c == 0x1b:
					end := strings.IndexByte(l[i:], 'm')
					if end < 0 || !isSGR(l[i:i+end+1]) {
						t.Fatalf("an escape that is not styling: %q", l)
					}
					i += end
				case c < 0x20 || c == 0x7f:
					t.Fatalf("control byte %#x on the screen: %q", c, l)
				}
			}
		}
	})
}
