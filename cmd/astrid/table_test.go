package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriteTableFitsWidth(t *testing.T) {
	long := strings.Repeat("word ", 60)
	var b strings.Builder
	err := writeTable(&b, []string{"TOOL", "CAPSULE", "DESCRIPTION"}, [][]string{
		{"read_file", "astrid-capsule-fs", "Read a file"},
		{"ev:gzip-file-as-resource", "ev", long},
		{"x", "y", "tab\tand\nnewline"},
		{"é", "ü", "ünïcödé " + long},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	col := strings.Index(lines[0], "DESCRIPTION")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > tableWidth {
			t.Errorf("line %d is %d runes: %q", i, n, l)
		}
		if i > 0 && utf8.RuneCountInString(l[:strings.Index(l, strings.Fields(l)[2])]) != col {
			t.Errorf("line %d is not aligned: %q", i, l)
		}
	}
	if !strings.HasSuffix(lines[2], "…") || utf8.RuneCountInString(lines[2]) != tableWidth {
		t.Errorf("a long last column is not cut to the width with an ellipsis: %q", lines[2])
	}
	if !strings.HasSuffix(lines[3], "tab and newline") {
		t.Errorf("whitespace not folded: %q", lines[3])
	}
	if lines[1] != "read_file                 astrid-capsule-fs  Read a file" {
		t.Errorf("short row: %q", lines[1])
	}
}

// A leading column wider than the table is kept whole; the last shrinks
// to an ellipsis.
func TestWriteTableWideLeadingColumn(t *testing.T) {
	var b strings.Builder
	name := strings.Repeat("n", 120)
	if err := writeTable(&b, []string{"A", "B"}, [][]string{{name, "text"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), name+"  …\n") {
		t.Errorf("got %q", b.String())
	}
}
