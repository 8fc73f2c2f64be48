package chatui

import "testing"

func TestEditor(t *testing.T) {
	var e editor
	e.insert("hello world")
	e.left()
	e.left()
	e.backspace()
	if e.value() != "hello wold" || e.cursor != 8 {
		t.Fatalf("%q cursor %d", e.value(), e.cursor)
	}
	e.end()
	e.killWord()
	if e.value() != "hello " {
		t.Fatalf("Ctrl-W left %q", e.value())
	}
	e.insert("a\r\nb")
	if e.value() != "hello a\nb" {
		t.Fatalf("paste gave %q", e.value())
	}
	e.home()
	e.deleteForward()
	e.right()
	e.killBefore()
	if e.value() != "llo a\nb" || e.cursor != 0 {
		t.Fatalf("Ctrl-U left %q cursor %d", e.value(), e.cursor)
	}
}

func TestEditorHistory(t *testing.T) {
	var e editor
	for _, s := range []string{"one", "two", "two", "  "} {
		e.set(s)
		e.take()
	}
	e.insert("draft")
	e.older()
	if e.value() != "two" {
		t.Fatalf("Up gave %q", e.value())
	}
	e.older()
	e.older()
	if e.value() != "one" {
		t.Fatalf("Up Up Up gave %q (a repeat or blank line was kept)", e.value())
	}
	e.newer()
	e.newer()
	if e.value() != "draft" {
		t.Fatalf("Down back to the draft gave %q", e.value())
	}
}
