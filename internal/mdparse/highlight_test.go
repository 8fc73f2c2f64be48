package mdparse

import (
	"reflect"
	"testing"
)

// A line is read into runs of its classes; a language not known gets
// strings and numbers only; a string's escaped quote does not end it.
func TestHighlighterLine(t *testing.T) {
	for _, tc := range []struct {
		lang, line string
		want       []Run
	}{
		{"go", `if x := "a\"b"; x != 42 { return } // done`, []Run{{Keyword, "if"}, {Plain, " x := "}, {String, `"a\"b"`}, {Plain, "; x != "}, {Number, "42"}, {Plain, " { "}, {Keyword, "return"}, {Plain, " } "}, {Comment, "// done"}}},
		{"py", "def f(): # note", []Run{{Keyword, "def"}, {Plain, " f(): "}, {Comment, "# note"}}},
		{"brainfuck", "if 'x' 7", []Run{{Plain, "if "}, {String, "'x'"}, {Plain, " "}, {Number, "7"}}},
		{"go", `"unterminated`, []Run{{String, `"unterminated`}}},
	} {
		if got := For(tc.lang).Line(tc.line); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q:\n got %v\nwant %v", tc.lang, tc.line, got, tc.want)
		}
	}
}
